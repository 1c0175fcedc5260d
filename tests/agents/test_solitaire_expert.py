"""``expert`` in solitaire, scored exactly (racko_env.solitaire.evaluate): never better than the
optimum, and as the same bot playing its table."""

from __future__ import annotations

import agents
from racko_env.solitaire import evaluate, solve
from racko_env.solitaire_env import bot_table


def test_experts_exact_value_is_never_better_than_the_optimum() -> None:
    bot = agents.load("expert", num_players=1, rack_size=3, deck_size=6)
    optimum = solve(3, 6).expected_turns
    table = bot_table(bot, 3, 6)
    turns = evaluate(table, 3, 6)
    assert optimum - 1e-12 <= turns < 1.5 * optimum
    assert evaluate(bot, 3, 6) == turns
