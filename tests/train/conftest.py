"""Fixtures of the trainer tests."""

from __future__ import annotations

from pathlib import Path

import pytest

SMOKE = Path(__file__).resolve().parents[2] / "configs" / "smoke.yaml"


@pytest.fixture()
def short_run(tmp_path) -> Path:
    """A finished PPO run of the smoke config, 512 env steps (one checkpoint, step 512)."""
    from train.sb3 import run as ppo

    out = tmp_path / "short"
    args = ["--config", str(SMOKE), "--out", str(out), "--total-steps", "512", "--no-progress"]
    assert ppo.main(args) == 0
    return out
