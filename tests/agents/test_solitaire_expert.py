"""``expert`` in solitaire, scored exactly (racko_env.solitaire.evaluate): never better than the
optimum, and as the same bot playing its table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agents
from agents.batched import load_batch
from racko_env.solitaire import evaluate, solve
from racko_env.solitaire_env import batch_table, bot_table, observation_index


def test_experts_exact_value_is_never_better_than_the_optimum() -> None:
    bot = agents.load("expert", num_players=1, rack_size=3, deck_size=6)
    optimum = solve(3, 6).expected_turns
    table = bot_table(bot, 3, 6)
    turns = evaluate(table, 3, 6)
    assert optimum - 1e-12 <= turns < 1.5 * optimum
    assert evaluate(bot, 3, 6) == turns


class _Recorder:
    """A bot that plays another and records each question's tabular state and answer."""

    def __init__(self, bot: Any, k: int, n: int) -> None:
        self.bot, self.k, self.n, self.asked = bot, k, n, {}

    def reset(self) -> None:
        self.bot.reset()

    def act(self, observation: Any) -> int:
        action = int(self.bot.act(observation))
        self.asked[observation_index(observation, self.k, self.n)] = action
        return action


@pytest.mark.slow
def test_the_batched_experts_table_is_the_per_game_experts() -> None:
    k, n = 3, 8
    recorder = _Recorder(agents.load("expert", num_players=1, rack_size=k, deck_size=n), k, n)
    per_game = bot_table(recorder, k, n)
    batched = load_batch("expert", 1, rack_size=k, deck_size=n)
    table = batch_table(batched, k, n)
    asked = np.array(sorted(recorder.asked))
    assert len(asked) > 1000
    np.testing.assert_array_equal(table[asked], [recorder.asked[o] for o in asked.tolist()])
    exact = evaluate(per_game, k, n)
    assert evaluate(table, k, n) == exact
    assert evaluate(batched, k, n) == exact
    assert exact > solve(k, n).expected_turns
