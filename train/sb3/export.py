"""A MaskablePPO model or a whole PPO run folder (``racko export RUN_DIR``: its ``config.yaml``,
``kind: ppo``, and newest weights) as a bot file, ``bot.onnx`` + ``bot.json``, its graph checked
against the policy's own masked, deterministic actions first. RLlib runs export themselves."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import Any

import numpy as np

from train.common.config import config_data, read_yaml
from train.common.files import RunFolderError
from train.common.front_door import fail, user_errors
from train.common.onnx_export import build_onnx, verify_export, write_bot
from train.sb3.model import load_trained_model, snapshot_from_model

KINDS = ("ppo",)


def sb3_actions(model: Any, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The SB3 policy's own masked, deterministic actions: what an export must reproduce."""
    return model.predict(obs, action_masks=masks, deterministic=True)[0]


def export_model(
    model: Any,
    out_dir: Path,
    num_players: int,
    rules: dict[str, Any],
    evaluation: dict[str, Any] | None = None,
    training: dict[str, Any] | None = None,
    check: int = 300,
    stem: str = "bot",
) -> tuple[Path, Path]:
    """Write ``stem.onnx`` + ``stem.json`` for an SB3 MaskablePPO model; verify on ``check`` obs."""
    model_proto = build_onnx(snapshot_from_model(model, "exported"))
    onnx_bytes = model_proto.SerializeToString()
    verify_export(
        onnx_bytes, functools.partial(sb3_actions, model), num_players, rules, check, "SB3 policy"
    )
    return write_bot(onnx_bytes, out_dir, num_players, rules, evaluation, training, check, stem)


def export_ppo_run(run_dir: Path, check: int = 300) -> tuple[Path, Path]:
    """Write ``RUN_DIR/bot.onnx`` + ``bot.json`` from a PPO run folder (checked on ``check`` obs)."""
    import json

    from train.common.onnx_export import export_module
    from train.network.structured import PolicyGraph
    from train.sb3.policy import StructuredPolicy

    cfg, model = load_trained_model(run_dir)
    evaluation: dict[str, Any] = {}
    for name in ("final_eval.json", "eval_history.json", "warmstart.json"):
        path = run_dir / name
        if path.is_file():
            evaluation[name.removesuffix(".json")] = json.loads(path.read_text(encoding="utf-8"))
    training = {
        "config": config_data(cfg),
        "seed": cfg.seed,
        "timesteps": int(model.num_timesteps),
        "algorithm": "MaskablePPO (sb3-contrib)",
        "policy": cfg.ppo.policy,
    }
    if isinstance(model.policy, StructuredPolicy):  # features and heads in one traced graph
        graph = PolicyGraph(model.policy)
        return export_module(
            graph, run_dir, cfg.num_players, cfg.rules_options(), evaluation, training, check
        )
    return export_model(
        model, run_dir, cfg.num_players, cfg.rules_options(), evaluation, training, check
    )


def run_kind(run_dir: str | Path) -> str:
    """The ``kind`` the trainer wrote into the run's ``config.yaml`` (checked to be exportable)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunFolderError(f"run folder not found: {run_dir}")
    path = run_dir / "config.yaml"
    if not path.is_file():
        raise RunFolderError(f"{run_dir} is not a run folder: it has no config.yaml")
    kind = read_yaml(path).get("kind")
    if kind not in KINDS:
        raise RunFolderError(
            f"{path}: kind must be one of {list(KINDS)} (a run of train/ppo.py), got {kind!r}"
        )
    return kind


def export_run(run_dir: str | Path, check: int = 300) -> tuple[Path, Path]:
    """Export a PPO run folder; returns the bot file paths."""
    run_kind(run_dir)
    return export_ppo_run(Path(run_dir), check)


def main(argv: list[str] | None = None) -> int:
    """``racko export RUN_DIR [--check N]``."""
    parser = argparse.ArgumentParser(
        description="Export a PPO run folder as a bot file: ``racko export RUN_DIR``."
    )
    parser.add_argument("run_dir", help="a folder written by train/ppo.py")
    parser.add_argument("--check", type=int, default=300, help="observations to verify (0: skip)")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    try:
        onnx_path, json_path = export_run(args.run_dir, args.check)
    except user_errors() as exc:
        return fail("export", exc)
    print(f"wrote {onnx_path} and {json_path}")
    return 0
