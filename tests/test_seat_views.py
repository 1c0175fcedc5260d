"""The env's step-by-step observations equal a full re-encode after every step, for every seat."""

import random

import numpy as np
import pytest

from racko_env import racko_v0
from racko_env.observation import encode

OPTION_SETS = [
    dict(num_players=2),
    dict(num_players=2, empty_pile="flip", min_run=3, turn_limit=120),
    dict(num_players=3, empty_pile="flip", bonus=True),
    dict(num_players=4, partners=True, bonus=True, turn_limit=90),
    dict(num_players=4, empty_pile="shuffle", turn_limit=60),
]


@pytest.mark.parametrize(
    "options", OPTION_SETS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items())
)
@pytest.mark.parametrize("episode", ["round", "game"])
def test_incremental_views_match_full_encode(options, episode):
    env = racko_v0.raw_env(episode=episode, target_score=150, **options)
    rng = random.Random(7)
    checked = 0
    for seed in range(6):
        env.reset(seed=seed)
        for _agent in env.agent_iter(max_iter=3000):
            obs, _, term, trunc, _ = env.last()
            game = env.game
            for p, a in enumerate(env.possible_agents):
                np.testing.assert_array_equal(
                    env.observe(a)["observation"], encode(game, p, episode == "game")
                )
            checked += 1
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(rng.choice(legal)))
    assert checked > 500


def test_reset_options_fix_the_first_deal():
    env = racko_v0.raw_env(num_players=2)
    deck = list(range(40, 0, -1))
    env.reset(seed=3, options={"first_dealer": 1, "deck_order": deck})
    # Dealer is seat 1, so seat 0 gets the first card (40) in its back slot, and moves first.
    assert env.rack("player_0") == (22, 24, 26, 28, 30, 32, 34, 36, 38, 40)
    assert env.rack("player_1") == (21, 23, 25, 27, 29, 31, 33, 35, 37, 39)
    assert env.discard_top == 20
    assert env.agent_selection == "player_0"
    np.testing.assert_array_equal(env.observe("player_0")["observation"], encode(env.game, 0))
    with pytest.raises(ValueError, match="deck_order"):
        env.reset(options={"deck_order": [1, 2, 3]})


def test_rules_flags_are_shared_and_name_the_flag_in_errors():
    import argparse

    from racko_env.cli import add_rules_arguments, flag_names, rules_options
    from racko_env.config import RulesConfig

    parser = argparse.ArgumentParser()
    add_rules_arguments(parser)
    args = parser.parse_args(["--empty-pile", "flip", "--turn-limit", "50", "--bonus"])
    options = rules_options(args)
    assert RulesConfig(num_players=2, **options) == RulesConfig(
        num_players=2, empty_pile="flip", turn_limit=50, bonus=True
    )
    with pytest.raises(ValueError) as err:
        RulesConfig(num_players=2, **{**options, "turn_limit": 0})
    assert flag_names(str(err.value)).startswith("--turn-limit must be at least 1")
