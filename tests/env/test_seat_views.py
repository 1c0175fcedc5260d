"""The env's step-by-step observations equal a full re-encode after every step, for every seat."""

import random

import numpy as np
import pytest

from racko_env import racko_v1
from racko_env.observation import encode

OPTION_SETS = [
    dict(num_players=2),
    dict(num_players=2, empty_pile="flip", min_run=3, turn_limit=120),
    dict(num_players=3, empty_pile="flip", bonus=True),
    dict(num_players=4, partners=True, bonus=True, turn_limit=90),
    dict(num_players=4, empty_pile="shuffle", turn_limit=60),
]


# Whole games of random play are long: the quick subset (pytest -m "not slow") checks the game
# view with one of the option sets (2 players, flip and runs); the full suite with all of them.
QUICK_GAMES = (OPTION_SETS[1],)


@pytest.mark.parametrize(
    ("options", "episode"),
    [
        pytest.param(
            options,
            episode,
            id="-".join([episode, *(f"{k}={v}" for k, v in options.items())]),
            marks=() if episode == "round" or options in QUICK_GAMES else pytest.mark.slow,
        )
        for episode in ("round", "game")
        for options in OPTION_SETS
    ],
)
def test_incremental_views_match_full_encode(options, episode):
    env = racko_v1.raw_env(episode=episode, target_score=150, **options)
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
