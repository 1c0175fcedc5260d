"""Layout version 2: the opponents' slot histories; the env versions ``racko_v1`` / ``Racko-v1``.

What one turn makes public lands in every other seat's observation (where the card came from, when
the slot changed, the card that came out, the discard passed over); none of it is a private fact.
``observation_version=1`` gives version 1's view of the same game (its first entries).
"""

from __future__ import annotations

import functools
import random

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, seed_test

import racko_env
from racko_env import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, RackoGame, racko_v1
from racko_env.observation import (
    OBS_SIZE,
    OBS_SIZES,
    OPP_DECLINED,
    OPP_SLOT_CHANGED,
    OPP_SLOT_DRAWN,
    OPP_SLOT_OUT,
    OPP_SLOTS,
    UNSEEN,
    encode,
    view,
)
from racko_env.rules import RACK_SIZE

V1 = OBS_SIZES[1]


def _slot(obs: np.ndarray, field: slice, opponent: int, slot: int) -> float:
    return float(obs[field.start + opponent * RACK_SIZE + slot])


def _fixed_game(**options: object) -> RackoGame:
    """Two players, dealer seat 1: seat 0 holds 22, 24, .., 40, seat 1 21, .., 39, top 20."""
    game = RackoGame(num_players=2, **options)
    game.new_game(seed=0, first_dealer=1, deck_order=list(range(40, 0, -1)))
    return game


def test_one_turn_each_way_is_public() -> None:
    game = _fixed_game(turn_limit=50)
    n, limit = 40, 50
    fresh = encode(game, 1)
    assert not fresh[OBS_SIZES[1] :].any()  # dealt: no history yet
    # Seat 0 draws from the draw pile (passing over the 20), keeps it, puts it into slot 3 (28 out).
    drawn_card = game.draw[-1]
    game.apply(DRAW_PILE)
    game.apply(KEEP)
    game.apply(3)
    seen = encode(game, 1)
    assert _slot(seen, OPP_SLOTS, 0, 3) == 0.0  # the card itself stays private
    assert _slot(seen, OPP_SLOT_DRAWN, 0, 3) == 1.0
    assert _slot(seen, OPP_SLOT_CHANGED, 0, 3) == np.float32(1 / limit)
    assert _slot(seen, OPP_SLOT_OUT, 0, 3) == np.float32(28 / n)
    assert seen[OPP_DECLINED.start] == np.float32(20 / n)
    assert seen[UNSEEN.start + drawn_card - 1] == 1.0
    assert not encode(game, 0)[OBS_SIZES[1] :].any()  # one's own history is not in one's view
    # Seat 1 takes the 28 into slot 8 (37 out): a card from the discard pile, seen going in.
    game.apply(TAKE_DISCARD)
    game.apply(8)
    seen = encode(game, 0)
    assert _slot(seen, OPP_SLOTS, 0, 8) == np.float32(28 / n)
    assert _slot(seen, OPP_SLOT_DRAWN, 0, 8) == 0.0
    assert _slot(seen, OPP_SLOT_CHANGED, 0, 8) == np.float32(2 / limit)
    assert _slot(seen, OPP_SLOT_OUT, 0, 8) == np.float32(37 / n)
    assert seen[OPP_DECLINED.start] == 0.0  # seat 1 has passed nothing over yet
    # Seat 0 draws and throws the card away at once: the slot history is unchanged, the 37 passed.
    game.apply(DRAW_PILE)
    game.apply(DISCARD)
    after = encode(game, 1)
    np.testing.assert_array_equal(after[OPP_SLOT_DRAWN], encode(game, 1)[OPP_SLOT_DRAWN])
    assert after[OPP_DECLINED.start] == np.float32(37 / n)
    assert _slot(after, OPP_SLOT_CHANGED, 0, 3) == np.float32(1 / limit)


def test_a_new_round_of_a_game_resets_the_histories() -> None:
    game = RackoGame(num_players=3, turn_limit=6, target_score=10_000)
    game.new_game(seed=2)
    rng = random.Random(2)
    while not game.round_over:
        game.apply(rng.choice(game.legal_actions()))
    assert any(any(row) for row in game.slot_changed)
    game.start_round()
    for p in range(3):
        assert not encode(game, p, include_scores=True)[OBS_SIZES[1] :].any()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(2, 4),
    seed=st.integers(0, 2**32 - 1),
    flip=st.booleans(),
    game_mode=st.booleans(),
)
def test_a_card_drawn_and_kept_never_reaches_another_seat(n, seed, flip, game_mode) -> None:
    """After every placement of a card drawn from the draw pile, every other seat sees the card as
    unseen and nowhere, and its observation is the same whichever hidden card the slot got."""
    game = RackoGame(num_players=n, turn_limit=90, empty_pile="flip" if flip else "shuffle")
    game.new_game(seed=seed)
    chooser = random.Random(seed)
    values = np.arange(game.num_cards + 1) / game.num_cards
    placed = 0
    while not game.round_over:
        mover, was_private = game.current, game.held is not None and not game.held_from_discard
        action = chooser.choice(game.legal_actions())
        game.apply(action)
        if not (was_private and action < RACK_SIZE) or game.round_over:
            continue
        placed += 1
        card = game.racks[mover][action]
        hidden_draw = game.draw[:-1] if game.draw_known else game.draw
        for p in range(n):
            if p == mover:
                continue
            seen = encode(game, p, game_mode)
            assert seen[UNSEEN.start + card - 1] == 1.0
            slot_values = seen[OPP_SLOTS]
            assert not np.isclose(slot_values, values[card]).any()
            if hidden_draw:  # the same public history with another hidden card in that slot
                what_if = game.clone()
                k = chooser.randrange(len(hidden_draw))
                what_if.racks[mover][action], what_if.draw[k] = what_if.draw[k], card
                np.testing.assert_array_equal(encode(what_if, p, game_mode), seen)
    assert placed > 0


# ----------------------------------------------------------------- env versions


@pytest.mark.parametrize("episode", ["round", "game"])
@pytest.mark.parametrize("n", [2, 3, 4], ids=["2p", "3p", "4p"])
def test_racko_v1_passes_pettingzoo_api_and_seed_tests(n: int, episode: str) -> None:
    short = {"turn_limit": 20} if episode == "game" else {}
    api_test(racko_v1.env(num_players=n, episode=episode, **short), num_cycles=300)
    seed_test(functools.partial(racko_v1.env, num_players=n, episode=episode, **short))


def test_racko_v1_identity_and_spaces() -> None:
    env = pettingzoo.make("aec", "racko/racko-v1", num_players=3)
    assert isinstance(env.unwrapped, racko_v1.raw_env) and racko_env.racko_v1 is racko_v1
    assert env.metadata["name"] == "racko_v1" and env.unwrapped.obs_version == 2
    assert env.observation_space("player_0")["observation"].shape == (OBS_SIZE,)
    assert "racko/racko-v0" not in pettingzoo.aec_registry  # only the newest version is shipped


def test_gymnasium_racko_v1_checks_and_version_1_is_its_prefix() -> None:
    env = gymnasium.make("racko/Racko-v1", num_players=2, opponents=["heuristic"])
    check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=3)
    assert obs.shape == (OBS_SIZE,) and env.observation_space.shape == (OBS_SIZE,)
    old = gymnasium.make(
        "racko/Racko-v1", num_players=2, opponents=["heuristic"], observation_version=1
    )
    old_obs, _ = old.reset(seed=3)
    assert old_obs.shape == (V1,) and old.observation_space.shape == (V1,)
    rng = np.random.default_rng(0)
    for _ in range(60):
        np.testing.assert_array_equal(view(obs, 1), old_obs)
        action = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
        obs, _, term, trunc, _ = env.step(action)
        old_obs, *_ = old.step(action)
        if term or trunc:
            obs, _ = env.reset()
            old_obs, _ = old.reset()
    with pytest.raises(ValueError, match="unknown observation layout version 9"):
        gymnasium.make("racko/Racko-v1", observation_version=9)


def test_make_vec_gives_each_version_its_width() -> None:
    kwargs = dict(num_envs=3, vectorization_mode="vector_entry_point", opponents="heuristic")
    new = gymnasium.make_vec("racko/Racko-v1", seed=1, **kwargs)
    old = gymnasium.make_vec("racko/Racko-v1", seed=1, observation_version=1, **kwargs)
    assert new.single_observation_space.shape == (OBS_SIZE,)
    assert old.single_observation_space.shape == (V1,)
    obs, info = new.reset(seed=1)
    old_obs, _ = old.reset(seed=1)
    np.testing.assert_array_equal(view(obs, 1), old_obs)
    actions = info["action_mask"].argmax(axis=1)
    np.testing.assert_array_equal(view(new.step(actions)[0], 1), old.step(actions)[0])
