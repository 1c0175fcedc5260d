"""The tabular baselines (train/reference/tabular_*.py): a small run of each beats random play, by exact
policy evaluation, and writes its curve and result."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from racko_env.solitaire import evaluate, space
from train.common.tabular import parse_args
from train.reference import tabular_mc, tabular_q_learning, tabular_sarsa

BASELINES = {"mc": tabular_mc, "sarsa": tabular_sarsa, "q_learning": tabular_q_learning}


def _random_turns(k: int, n: int) -> float:
    sp = space(k, n)
    legal = sp.legal[np.arange(sp.num_observations) // sp.num_states].astype(float)
    return evaluate(legal / legal.sum(axis=1, keepdims=True), k, n, turn_limit=400)


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_a_small_run_beats_random_play(name: str, tmp_path: Path) -> None:
    module = BASELINES[name]
    defaults = getattr(module, "DEFAULTS", {})
    small = ["--rack-size", "3", "--deck-size", "6", "--total-steps", "150000", "--num-envs", "256"]
    args = parse_args(
        module.NAME,
        "",
        [*small, "--eval-points", "2", "--out", str(tmp_path), "--quiet"],
        **{**defaults, "total_steps": 150_000},
    )
    result = module.train(args)
    random_turns = _random_turns(3, 6)
    assert result["optimum"] <= result["expected_turns"] < random_turns
    assert result["expected_turns"] < 1.5 * result["optimum"]
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["gap_percent"] == pytest.approx(result["gap_percent"])
    assert len(saved["curve"]) == 2 and (tmp_path / "curve.png").stat().st_size > 1000
