"""Checkpoints of a training run: model + optimizer + timesteps, snapshot pool, RNGs, env states.

A checkpoint is a folder ``RUN_DIR/checkpoints/step_000123456/`` written to a temporary name and
renamed when complete, so a crash mid-write never leaves a half checkpoint that ``--resume`` picks.
"""

from __future__ import annotations

import json
import pickle
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

from train.selfplay import SnapshotPool

CHECKPOINTS = "checkpoints"


def save_checkpoint(
    run_dir: Path,
    model: Any,
    pool: SnapshotPool,
    env_states: list[bytes] | None,
    extra: dict[str, Any],
    keep: int = 3,
) -> Path:
    """Write a checkpoint at the model's current timestep; keep the newest ``keep``."""
    root = run_dir / CHECKPOINTS
    final = root / f"step_{model.num_timesteps:012d}"
    tmp = root / f".tmp_{model.num_timesteps:012d}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save(tmp / "model.zip")
    pool.save(tmp / "pool")
    state = {
        "torch_rng": torch.get_rng_state(),
        "numpy_rng": np.random.get_state(),
        "python_rng": random.getstate(),
        "env_states": env_states,
        "extra": extra,
    }
    with open(tmp / "state.pkl", "wb") as f:
        pickle.dump(state, f)
    (tmp / "info.json").write_text(json.dumps({"timesteps": model.num_timesteps}))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    for old in sorted(p for p in root.glob("step_*") if p.is_dir())[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def latest_checkpoint(run_dir: Path) -> Path | None:
    root = Path(run_dir) / CHECKPOINTS
    done = sorted(p for p in root.glob("step_*") if (p / "state.pkl").is_file())
    return done[-1] if done else None


def load_state(ckpt: Path) -> dict[str, Any]:
    """The pickled run state (RNGs, env states, callback state); a file this program wrote."""
    with open(ckpt / "state.pkl", "rb") as f:
        return pickle.load(f)


def restore_rngs(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch_rng"])
    np.random.set_state(state["numpy_rng"])
    random.setstate(state["python_rng"])
