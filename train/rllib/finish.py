"""The RLlib trainer's last phase (``train/rllib_ppo.py``): the bot files, the final duplicate
evaluation (also after Ctrl-C), and the bot's manifest again with both evaluations in it."""

from __future__ import annotations

from typing import Any

from train.common.eval_record import read_history
from train.rllib.config import RLlibConfig
from train.rllib.evaluation import EvalHistory
from train.rllib.export import export_bot


def finish_run(
    algo: Any, writer: Any, cfg: RLlibConfig, state: dict[str, Any], evals: EvalHistory, log: Any
) -> None:
    """Export the bot, run the final duplicate evaluation, record it in the manifest."""
    run_dir = evals.run_dir
    module = algo.get_module(cfg.learner_module)
    training = {
        "algorithm": "PPO (Ray RLlib, train/rllib_ppo.py)",
        "ray_version": __import__("ray").__version__,
        "config": cfg.model_dump(),
        "seed": cfg.seed,
        "iterations": state["iteration"],
        "timesteps": state["env_steps"],
    }
    onnx_path, json_path = export_bot(module, run_dir, cfg, None, training)
    evaluation: dict[str, Any] = {}
    if cfg.final_eval.rounds:  # also after Ctrl-C, as train/ppo.py (a second one aborts)
        evaluation["final_eval"] = evals.evaluate(algo, writer, state, final=True)
    history = read_history(run_dir)
    if history:
        evaluation["eval_history"] = history
    if evaluation:
        onnx_path, json_path = export_bot(module, run_dir, cfg, evaluation, training)
    rate = state["env_steps"] / max(state["seconds"], 1e-9)
    log.info(
        f"trained {state['env_steps']} env steps in {state['seconds']:.0f} s "
        f"({rate:.0f}/s); wrote {onnx_path} and {json_path}"
    )
