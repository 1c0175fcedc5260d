"""The RLlib trainer's evaluation and its last phase (``train/rllib_ppo.py``): the learner in the
evaluation every trainer runs (``train.common.evaluation``) and its record, the bot files, and
the final evaluation (also after Ctrl-C) written into the bot's manifest."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from train.common.eval_record import read_history, write_history
from train.common.evaluation import EvalCurve, describe_eval
from train.rllib.config import RLlibConfig


class EvalHistory(EvalCurve):
    """The run's eval_history.json: a row per evaluation, with the wall-clock minutes of the
    earlier sessions of a resumed run added."""

    def resume(self, iteration: int) -> None:
        """The curve as the checkpoint at ``iteration`` left it: later rows (and a final one)
        are redone."""
        rows = read_history(self.run_dir)
        kept = [r for r in rows if r["iteration"] <= iteration and not r.get("final")]
        write_history(self.run_dir, kept)
        super().resume(kept)

    def evaluate(self, algo: Any, writer: Any, state: dict[str, Any], final: bool = False) -> Any:
        """The periodic check (``eval``) or, with ``final``, the final one (``final_eval``, also
        ``final_eval.json``) of the learner module: a row, TensorBoard, a line; the results."""
        from train.rllib.module import batch_player  # imports ray: not before the run set it up

        section, tag = (self.cfg.final_eval, "final") if final else (self.cfg.eval, "eval")
        player = batch_player(algo.get_module(self.cfg.learner_module))
        steps = {"timesteps": state["env_steps"], "iteration": state["iteration"]}
        results = self.run(player, section, final, **steps)
        for opp, res in results.items():
            writer.add_scalar(
                f"{tag}/win_rate_vs_{opp}", res["win_rate"], 0 if final else state["env_steps"]
            )
        label = "final eval" if final else "eval"
        self.log.info(f"{label} ({section.rounds} duplicate rounds each): {describe_eval(results)}")
        return results


def export_bot(
    module: Any,
    out_dir: Path,
    cfg: RLlibConfig,
    evaluation: dict[str, Any] | None = None,
    training: dict[str, Any] | None = None,
) -> tuple[Path, Path]:
    """``bot.onnx`` + ``bot.json`` from the learner module (``train.rllib.module.export_graph``),
    checked on ``export_check`` observations against the graph's torch module and the module's
    own inference path before anything is written."""
    from train.common.onnx_export import export_module
    from train.rllib.module import export_graph, module_actions

    return export_module(
        export_graph(module),
        out_dir,
        cfg.num_players,
        cfg.rules_options(),
        evaluation,
        training,
        check=cfg.export_check,
        reference=functools.partial(module_actions, module),
        what="RLlib module",
    )


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
