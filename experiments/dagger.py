"""Experiment (lost): behaviour cloning of ``expert`` plus DAgger, no PPO.

    python -m experiments.dagger --config experiments/configs/2p_dagger.yaml --iterations 2

What it showed is in experiments/README.md (it lost to the value-iteration bots, so it left the
front door). It is kept runnable: the data collection is ``train.sb3.pretrain``'s and the fitting
the warm start's cloning (``train.sb3.warmstart.clone_actor``, the project's one fitting loop).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from train.sb3.pretrain import collect_batched, collect_teacher_data
from train.sb3.warmstart import clone_actor


def behaviour_clone(
    model: Any, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray, *fit: Any
) -> list[float]:
    """Clone the teacher into the model's actor on every row (the warm start's cloning,
    ``train.sb3.warmstart.clone_actor``, without a held-out share); the loss per epoch."""
    return clone_actor(model.policy, obs, masks, actions, *fit, holdout=0.0)["losses"]


def collect_on_policy(
    model: Any,
    teacher: str,
    num_players: int,
    rules: dict[str, Any],
    decisions: int,
    seed: int,
    episode: str = "round",
    n_envs: int = 256,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """DAgger data: states the *model* reaches playing against the teacher, labelled by the teacher.

    Cloning alone trains on the teacher's states only; the clone's own mistakes lead it to states
    it never saw (its agreement there drops from ~79% to ~71%). Returns (obs, masks, teacher
    actions, the model's agreement with the teacher on these states).
    """
    from train.sb3.selfplay import snapshot_from_model

    if decisions < 1:
        raise ValueError(f"decisions must be at least 1, got {decisions}")
    student = snapshot_from_model(model, "student")
    return collect_batched(
        teacher, num_players, rules, decisions, seed, episode, n_envs, player=student
    )


def dagger_run(
    config: str,
    out: str | None = None,
    seed: int | None = None,
    iterations: int = 1,
    iter_decisions: int = 400_000,
    iter_epochs: int = 4,
    iter_batch_size: int = 2048,
    iter_learning_rate: float = 5e-4,
) -> Path:
    """A bot by cloning plus DAgger (no PPO), in a PPO-kind run folder ``train/export.py`` exports.

    Uses the config's ``pretrain`` (batched teacher data, epochs, batch size, learning rate),
    ``ppo.net_arch``/``activation`` and ``seed``; then ``iterations`` rounds of: collect
    ``iter_decisions`` on-policy states (:func:`collect_on_policy`), add them to the data set,
    refit ``iter_epochs`` epochs. Writes config.yaml, dagger.json, final_model.pt,
    final_eval.json and the exported bot.onnx + bot.json.
    """
    import torch

    from train.common.config import config_data
    from train.common.files import RunFolderError, write_json_atomic
    from train.common.runs import prepare_run
    from train.ppo import PPO_RUN
    from train.sb3.checkpoint import save_weights
    from train.sb3.evaluation import final_evaluation
    from train.sb3.export import export_model
    from train.sb3.model import build_model

    cfg, run_dir = prepare_run(PPO_RUN, config, out, False, seed=seed)
    pre = cfg.pretrain
    if pre.decisions == 0:
        raise RunFolderError("pretrain.decisions must be positive for a DAgger run")
    torch.set_num_threads(cfg.torch_threads)
    rules = cfg.rules_options()
    model = build_model(cfg)
    log: dict[str, Any] = {
        "iterations": iterations,
        "iter_decisions": iter_decisions,
        "iter_epochs": iter_epochs,
        "iter_batch_size": iter_batch_size,
        "iter_learning_rate": iter_learning_rate,
        "steps": [],
    }
    t0 = time.time()
    data = collect_teacher_data(
        pre.teacher, cfg.num_players, rules, pre.decisions, cfg.seed, cfg.episode, batched=True
    )
    t1 = time.time()
    losses = behaviour_clone(model, *data, pre.epochs, pre.batch_size, pre.learning_rate, cfg.seed)
    log["steps"].append(
        {
            "kind": "clone",
            "decisions": pre.decisions,
            "collect_seconds": round(t1 - t0, 1),
            "fit_seconds": round(time.time() - t1, 1),
            "losses": losses,
        }
    )
    print(f"cloned {pre.teacher}: loss {losses[-1]:.4f}", flush=True)
    for i in range(iterations):
        t0 = time.time()
        *new, on_policy = collect_on_policy(
            model,
            pre.teacher,
            cfg.num_players,
            rules,
            iter_decisions,
            cfg.seed + 1000 * (i + 1),
            cfg.episode,
        )
        data = tuple(np.concatenate([old, add]) for old, add in zip(data, new, strict=True))
        t1 = time.time()
        losses = behaviour_clone(
            model, *data, iter_epochs, iter_batch_size, iter_learning_rate, cfg.seed + i + 1
        )
        log["steps"].append(
            {
                "kind": "dagger",
                "decisions": iter_decisions,
                "on_policy_agreement": on_policy,
                "collect_seconds": round(t1 - t0, 1),
                "fit_seconds": round(time.time() - t1, 1),
                "losses": losses,
            }
        )
        print(f"DAgger {i + 1}: on-policy agreement {on_policy:.3f}, loss {losses[-1]:.4f}")
    write_json_atomic(run_dir / "dagger.json", log)
    save_weights(model, run_dir / "final_model.pt")
    evaluation = {}
    if cfg.final_eval.rounds:
        evaluation["final_eval"] = final_evaluation(model, cfg, run_dir)
    steps = [{k: v for k, v in s.items() if k != "losses"} for s in log["steps"]]
    training = {
        "config": config_data(cfg),
        "seed": cfg.seed,
        "algorithm": (
            f"behaviour cloning of {pre.teacher!r} + {iterations} DAgger rounds "
            "(experiments/dagger.py, no PPO)"
        ),
        "dagger": {**{k: v for k, v in log.items() if k != "steps"}, "steps": steps},
    }
    onnx_path, _ = export_model(
        model, run_dir, cfg.num_players, rules, evaluation, training, check=300
    )
    return onnx_path


def main(argv: list[str] | None = None) -> int:
    from train.common.config import ConfigError
    from train.common.files import RunFolderError

    parser = argparse.ArgumentParser(description="Clone a teacher bot, then DAgger (no PPO).")
    parser.add_argument("--config", required=True, help="YAML config (its pretrain section)")
    parser.add_argument("--out", help="override the run folder")
    parser.add_argument("--seed", type=int, help="override the config's seed")
    parser.add_argument("--iterations", type=int, default=1, help="DAgger rounds")
    parser.add_argument("--iter-decisions", type=int, default=400_000)
    parser.add_argument("--iter-epochs", type=int, default=4)
    parser.add_argument("--iter-batch-size", type=int, default=2048)
    parser.add_argument("--iter-learning-rate", type=float, default=5e-4)
    args = parser.parse_args(argv)
    try:
        onnx_path = dagger_run(
            args.config,
            args.out,
            args.seed,
            args.iterations,
            args.iter_decisions,
            args.iter_epochs,
            args.iter_batch_size,
            args.iter_learning_rate,
        )
    except (ConfigError, RunFolderError, FileNotFoundError) as exc:
        print(f"dagger: error: {exc}", file=sys.stderr)
        return 2
    print(f"exported {onnx_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
