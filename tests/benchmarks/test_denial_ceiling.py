"""benchmarks/denial_ceiling.py: its full-turn options agree with the bot it steers, and it runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from racko_env.actions import Phase
from racko_env.engine import RackoGame


@pytest.fixture(scope="module")
def ceiling(benchmark_script):
    return benchmark_script("denial_ceiling")


def test_the_bots_own_turn_is_its_cheapest_option(ceiling):
    """The oracle ranks whole turns by the bot's own logits: the bot's choice must be their minimum."""
    oracle = ceiling.DenialOracle(delta=0.0)
    checked = 0
    for seed in range(6):
        game = RackoGame(num_players=2)
        game.new_game(seed=seed)
        while not game.round_over:
            seat = game.current
            if game.phase != Phase.DRAW:
                options = oracle._options(game, seat)
                own_moves = oracle.own_moves(game, seat)
                value = dict((moves, v) for v, moves in options)[own_moves]
                assert value <= min(v for v, _ in options) + 1e-3 + 1e-5
                assert np.isfinite(value)
                checked += 1
            oracle.play_turn_part(game, seat)  # delta 0: plays exactly the bot's decision
    assert checked > 50


def test_script_reports_every_delta(ceiling, tmp_path):
    out = tmp_path / "ceiling.json"
    ceiling.main(["--rounds", "4", "--deltas", "0", "0.3", "--json", str(out)])
    rows = json.loads(out.read_text())
    assert [r["delta"] for r in rows] == [0.0, 0.3] and all(r["rounds"] == 4 for r in rows)
    assert rows[0]["swaps"] == 0
    assert all(0.0 <= r["win_rate"] <= 1.0 for r in rows)
