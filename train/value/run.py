"""A value-iteration run: its run folder (create, resume with the same config), the iterations
(collect, fit, evaluate) and the export of the bot (``python train/value_iteration.py``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import torch

from racko_env.rules import deck_size
from train.common.config import ValueConfig, config_data, load_config
from train.common.evaluation import evaluate_iteration
from train.common.progress import RunLog
from train.common.runs import ITERATIONS, finish_iteration, iteration_run, iterations_to_resume
from train.common.weights import load_state_dict, save_state_dict
from train.value.data import bootstrap_targets, collect
from train.value.fit import fit
from train.value.network import OnePlyPolicy, RackValueNet, TorchOnePly, describe


def new_net(cfg: ValueConfig, iteration: int) -> RackValueNet:
    torch.manual_seed(cfg.seed * 1000 + iteration)
    return RackValueNet(tuple(cfg.net.hidden), tuple(tuple(p) for p in cfg.net.plans))


def policy_of(cfg: ValueConfig, net: RackValueNet) -> OnePlyPolicy:
    return OnePlyPolicy(net, deck_size(cfg.num_players))


def load_net(cfg: ValueConfig, path: Path) -> RackValueNet:
    """The value net from a data-only state dict (``weights_only``: a pickle is refused)."""
    return load_state_dict(new_net(cfg, 0), path, "value net")


def train(cfg: ValueConfig, run_dir: Path, resume: bool = False) -> Path:
    """Run (or continue) value iteration in ``run_dir``; export the bot; return its ONNX path."""
    from agents.batched import load_batch

    torch.set_num_threads(cfg.torch_threads)
    run_dir.mkdir(parents=True, exist_ok=True)
    done = iterations_to_resume(run_dir, resume)
    log = RunLog(run_dir / "train.log")
    try:
        return _iterate(cfg, run_dir, done, log, load_batch)
    finally:
        log.close()


def _iterate(
    cfg: ValueConfig,
    run_dir: Path,
    done: list[int],
    log: RunLog,
    load_batch: Any,
) -> Path:
    log.info(
        f"value iteration in {run_dir}: {cfg.iterations} iteration(s) of {cfg.states:,} states, "
        f"{cfg.fit.epochs} fitting epochs, {cfg.eval.rounds:,} evaluation rounds per opponent"
        + (f"; resuming after iteration {done[-1]}" if done else "")
    )
    history_path = run_dir / "history.json"
    history = json.loads(history_path.read_text(encoding="utf-8"))[: len(done)] if done else []
    net = load_net(cfg, run_dir / ITERATIONS / f"iter_{done[-1]}.pt") if done else None
    (run_dir / ITERATIONS).mkdir(exist_ok=True)
    rules = cfg.rules_options()
    for it in range(len(done), cfg.iterations):
        t0 = time.time()
        if net is None:
            learner: Any = load_batch(cfg.teacher, cfg.num_players, seed=cfg.seed, **rules)
        else:
            learner = TorchOnePly(policy_of(cfg, net))
        with log.phase(f"iteration {it}: collecting", cfg.states, "states") as phase:
            x, t, info = collect(
                learner,
                cfg.states,
                cfg.seed * 1000 + it,
                cfg.num_players,
                rules,
                cfg.opponent,
                cfg.n_envs,
                tuple(tuple(p) for p in cfg.net.plans),
                progress=phase,
            )
        if cfg.td_steps and net is not None:
            t = bootstrap_targets(x, t, net, cfg.td_steps)
        t1 = time.time()
        net = new_net(cfg, it)
        f = cfg.fit
        with log.phase(f"iteration {it}: fitting", f.epochs, "epochs", every_s=0.0) as phase:
            losses = fit(
                net, x, t, f.epochs, f.batch_size, f.learning_rate, cfg.seed * 1000 + it, phase
            )
        t2 = time.time()
        row: dict[str, Any] = {
            "iteration": it,
            "player": cfg.teacher if it == 0 else f"one-ply over iteration {it - 1}",
            "states": len(x),
            **info,
            "losses": [round(v, 4) for v in losses],
            "collect_seconds": round(t1 - t0, 1),
            "fit_seconds": round(t2 - t1, 1),
        }
        if cfg.eval.rounds:
            row.update(evaluate_iteration(TorchOnePly(policy_of(cfg, net)), cfg, log, it))
            row["eval_seconds"] = round(time.time() - t2, 1)
        finish_iteration(cfg, run_dir, history, row, net, log)
    if net is None:  # iterations >= 1 by the schema; kept for a clear message
        raise ValueError("no iteration to export: iterations must be at least 1")
    save_state_dict(net, run_dir / "value_net.pt")
    log.info(f"exporting (checked on {cfg.export_check} observations)")
    onnx_path, _ = export_value_run(run_dir, cfg.export_check)
    log.info(f"exported {onnx_path}")
    return onnx_path


def export_value_run(run_dir: str | Path, check: int = 300) -> tuple[Path, Path]:
    """Export a value-iteration run folder to ``RUN_DIR/bot.onnx`` + ``bot.json``."""
    from train.common.onnx_export import export_module

    run_dir = Path(run_dir)
    cfg = load_config(run_dir / "config.yaml", ValueConfig)
    net = load_net(cfg, run_dir / "value_net.pt")
    history_path = run_dir / "history.json"
    history = json.loads(history_path.read_text(encoding="utf-8")) if history_path.is_file() else []
    policy = policy_of(cfg, net)
    evaluation = {"win_rate": history[-1].get("win_rate", {})} if history else {}
    if evaluation:
        evaluation["rounds"] = cfg.eval.rounds
    training = {
        "algorithm": (
            f"approximate policy iteration on a learned rack value, one-ply policy "
            f"(train/value_iteration.py; iteration 0 plays {cfg.teacher!r})"
        ),
        "network": describe(policy),
        "config": config_data(cfg),
        "seed": cfg.seed,
        "iterations": [{k: v for k, v in row.items() if k != "losses"} for row in history],
    }
    return export_module(
        policy, run_dir, cfg.num_players, cfg.rules_options(), evaluation, training, check
    )


VALUE_RUN = iteration_run(
    "value", "python train/value_iteration.py", ValueConfig, "configs/2p_value.yaml"
)
