"""A distillation run: its run folder (create, resume with the same config), the warm start, the
iterations (the network plays, the search labels, the network imitates every label so far, a
quick evaluation) and the export of the bot file (``python train/distill.py``).

Files of a run folder: ``config.yaml``, ``command.txt`` (the command that started it: the bot's
manifest names it), ``warmstart.json``, ``data/iter_K.npz`` (the labelled decisions of iteration
K: observation, mask, teacher's action; numpy arrays, read without pickle),
``iterations/iter_K.pt`` (the policy's weights after iteration K, a data-only state dict; its
presence marks the iteration complete), ``history.json``, ``eval_history.json``,
``final_eval.json``, ``policy.pt`` and the bot file ``bot.onnx`` + ``bot.json``; ``train.log``.
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from racko_env.actions import NUM_ACTIONS
from racko_env.observation import OBS_SIZE
from racko_env.rules import deck_size
from train.common.config import config_data, load_config
from train.common.evaluation import evaluate_iteration
from train.common.files import write_bytes_atomic, write_text_atomic
from train.common.progress import RunLog
from train.common.runs import ITERATIONS, finish_iteration, iteration_run, iterations_to_resume
from train.common.weights import load_state_dict, save_state_dict
from train.distillation.config import DistillConfig
from train.distillation.data import collect, policy_inputs
from train.network.frozen import FrozenPolicy
from train.network.structured import PolicyGraph
from train.sb3.policy import StructuredPolicy

DATA = "data"
COMMAND = "command.txt"
POLICY = "policy.pt"


def new_policy(cfg: DistillConfig) -> StructuredPolicy:
    """The structured policy of ``train/sb3/policy.py`` with the config's sizes, seeded."""
    from gymnasium import spaces

    torch.manual_seed(cfg.seed)
    return StructuredPolicy(
        spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
        spaces.Discrete(NUM_ACTIONS),
        lambda _: cfg.fit.learning_rate,
        num_cards=deck_size(cfg.num_players),
        slot_hidden=cfg.net.slot_hidden,
        trunk_hidden=cfg.net.trunk_hidden,
    ).eval()


def load_policy(cfg: DistillConfig, path: Path) -> StructuredPolicy:
    """The policy from a data-only state dict (``weights_only``: a pickle is refused)."""
    return load_state_dict(new_policy(cfg), path, "distilled policy")


def save_data(path: Path, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> None:
    buf = io.BytesIO()
    np.savez_compressed(buf, obs=obs, masks=masks, actions=actions)
    write_bytes_atomic(path, buf.getvalue())


def load_data(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    with np.load(path, allow_pickle=False) as f:
        return f["obs"], f["masks"], f["actions"]


def train(cfg: DistillConfig, run_dir: Path, resume: bool = False) -> Path:
    """Run (or continue) the distillation in ``run_dir``; export the bot; return its ONNX path."""
    torch.set_num_threads(cfg.torch_threads)
    done = iterations_to_resume(run_dir, resume)
    log = RunLog(run_dir / "train.log")
    try:
        return _iterate(cfg, run_dir, done, log)
    finally:
        log.close()


def warm_start(cfg: DistillConfig, policy: StructuredPolicy, run_dir: Path, log: RunLog) -> None:
    """Clone ``warm_start.teacher`` (its own batched games) into the fresh policy; warmstart.json."""
    from train.sb3.pretrain import collect_teacher_data
    from train.sb3.warmstart import clone_and_record

    w = cfg.warm_start
    if w.decisions == 0:
        return
    t0 = time.time()
    obs, masks, actions = collect_teacher_data(
        w.teacher, cfg.num_players, cfg.rules_options(), w.decisions, cfg.seed, batched=True
    )
    inputs = policy_inputs(obs, cfg.num_players)
    record = clone_and_record(
        policy,
        (inputs, masks, actions),
        w,
        cfg.seed,
        log,
        run_dir,
        f"warm start: cloning {w.teacher}",
        collect_seconds=time.time() - t0,
    )
    log.info(f"warm start: agreement with {w.teacher} {record['agreement']:.1%} (held out)")


def _iterate(cfg: DistillConfig, run_dir: Path, done: list[int], log: RunLog) -> Path:
    from agents.batched import load_batch
    from train.sb3.warmstart import clone_actor

    log.info(
        f"distillation in {run_dir}: teacher {cfg.teacher}, {cfg.iterations} iteration(s) of "
        f"{cfg.states:,} labelled decisions against {cfg.opponent}"
        + (f"; resuming after iteration {done[-1]}" if done else "")
    )
    history_path = run_dir / "history.json"
    history = json.loads(history_path.read_text(encoding="utf-8"))[: len(done)] if done else []
    if done:
        policy = load_policy(cfg, run_dir / ITERATIONS / f"iter_{done[-1]}.pt")
    else:
        policy = new_policy(cfg)
        warm_start(cfg, policy, run_dir, log)
    (run_dir / ITERATIONS).mkdir(exist_ok=True)
    rules, n = cfg.rules_options(), cfg.num_players
    for it in range(len(done), cfg.iterations):
        seed = cfg.seed * 1000 + it
        t0 = time.time()
        player = FrozenPolicy(policy, "learner")
        teacher = load_batch(cfg.teacher, n, seed=seed, **rules)
        with log.phase(f"iteration {it}: labelling", cfg.states, "decisions") as phase:
            obs, masks, labels, info = collect(
                player, teacher, cfg.states, seed, n, rules, cfg.opponent, cfg.n_envs, phase
            )
        save_data(run_dir / DATA / f"iter_{it}.npz", obs, masks, labels)
        parts = [load_data(run_dir / DATA / f"iter_{k}.npz") for k in range(it + 1)]
        all_obs, all_masks, all_labels = (np.concatenate(x) for x in zip(*parts, strict=True))
        t1 = time.time()
        f = cfg.fit
        with log.phase(f"iteration {it}: fitting", f.epochs, "epochs", every_s=0.0) as phase:
            fit = clone_actor(
                policy,
                policy_inputs(all_obs, n),
                all_masks,
                all_labels,
                f.epochs,
                f.batch_size,
                f.learning_rate,
                seed,
                progress=phase.hook,
            )
        t2 = time.time()
        row: dict[str, Any] = {
            "iteration": it,
            **info,
            "rows": len(all_labels),
            "losses": fit["losses"],
            "agreement": fit["agreement"],
            "collect_seconds": round(t1 - t0, 1),
            "fit_seconds": round(t2 - t1, 1),
        }
        if cfg.eval.rounds:
            row.update(evaluate_iteration(FrozenPolicy(policy, "learner"), cfg, log, it))
            row["eval_seconds"] = round(time.time() - t2, 1)
        finish_iteration(cfg, run_dir, history, row, policy, log)
    save_state_dict(policy, run_dir / POLICY)
    log.info(f"exporting (checked on {cfg.export_check} observations)")
    onnx_path, _ = export_distill_run(run_dir, cfg.export_check)
    log.info(f"exported {onnx_path}")
    return onnx_path


def export_distill_run(run_dir: str | Path, check: int = 300) -> tuple[Path, Path]:
    """Export a distillation run folder (its ``policy.pt``) to ``RUN_DIR/bot.onnx`` + ``bot.json``;
    the manifest records the command that started the run."""
    from train.common.onnx_export import export_module

    run_dir = Path(run_dir)
    cfg = load_config(run_dir / "config.yaml", DistillConfig)
    policy = load_policy(cfg, run_dir / POLICY)
    history_path = run_dir / "history.json"
    history = json.loads(history_path.read_text(encoding="utf-8")) if history_path.is_file() else []
    command_path = run_dir / COMMAND
    command = (
        command_path.read_text(encoding="utf-8").strip()
        if command_path.is_file()
        else f"python train/distill.py --config {run_dir / 'config.yaml'}"
    )
    evaluation = {"win_rate": history[-1].get("win_rate", {})} if history else {}
    if evaluation:
        evaluation["rounds"] = cfg.eval.rounds
    warm = run_dir / "warmstart.json"
    training = {
        "algorithm": (
            f"distillation of {cfg.teacher!r} into the structured policy (train/distill.py: the "
            "network plays, the teacher labels its decisions, the network imitates them)"
        ),
        "command": command,
        "config": config_data(cfg),
        "seed": cfg.seed,
        "warm_start": json.loads(warm.read_text(encoding="utf-8")) if warm.is_file() else {},
        "iterations": [{k: v for k, v in row.items() if k != "losses"} for row in history],
    }
    return export_module(
        PolicyGraph(policy),
        run_dir,
        cfg.num_players,
        cfg.rules_options(),
        evaluation,
        training,
        check,
    )


DISTILL_RUN = iteration_run(
    "distill", "python train/distill.py", DistillConfig, "configs/distill_2p.yaml", (DATA,)
)


def record_command(run_dir: Path, command: str) -> None:
    """``command.txt``: how a new run was started, for its bot's manifest."""
    write_text_atomic(run_dir / COMMAND, command + "\n")
