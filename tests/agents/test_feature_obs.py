"""The feature observation wrappers (``agents.feature_obs``): shapes, bounds, equality with the
feature kernel on the same observation, and the Gymnasium and PettingZoo API checkers."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import racko_env  # noqa: F401 - registers racko/Racko-v1
from agents.feature_obs import (
    FEATURE_SIZE,
    SLOT_MEANINGS,
    FeatureObservation,
    FeatureObservationVector,
    columns,
    feature_observation_v0,
    feature_space,
    features_of,
    markdown_table,
    num_cards_of,
)
from agents.features import GLOBAL_FEATURES, SLOT_FEATURES, flat_features, rack_features
from racko_env import racko_v1
from racko_env.gym_env import RackoGymEnv
from racko_env.rules import deck_size

SHORT = {"turn_limit": 60}


def _play(env: gymnasium.Env, seed: int, steps: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observation, mask) pairs of ``steps`` random legal decisions from reset(seed)."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    seen = [(obs, info["action_mask"])]
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            obs, info = env.reset()
        seen.append((obs, info["action_mask"]))
    return seen


def test_columns_describe_every_feature() -> None:
    cols = columns()
    assert len(cols) == FEATURE_SIZE == 10 * SLOT_FEATURES + GLOBAL_FEATURES
    assert [c.index for c in cols] == list(range(FEATURE_SIZE))
    assert len({c.name for c in cols}) == FEATURE_SIZE
    assert all(c.low < c.high and c.meaning for c in cols)
    table = markdown_table()
    assert "`slot<s>.cost`" in table and "`take_adv_log`" in table
    # one row per slot-block column (the one-hot as one row), one per global column
    assert table.count("\n") - 1 == SLOT_FEATURES - 9 + GLOBAL_FEATURES
    assert set(SLOT_MEANINGS) <= {c.name.split(".", 1)[1] for c in cols[:SLOT_FEATURES]}


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3, 4])
def test_gym_wrapper_matches_kernel_and_stays_in_bounds(n: int) -> None:
    env = FeatureObservation(RackoGymEnv(num_players=n, opponents=["heuristic"], **SHORT))
    raw = RackoGymEnv(num_players=n, opponents=["heuristic"], **SHORT)
    space = env.observation_space
    assert space == feature_space(deck_size(n))
    assert space.shape == (FEATURE_SIZE,) and space.dtype == np.float32
    for (feat, mask), (obs, raw_mask) in zip(_play(env, n, 300), _play(raw, n, 300), strict=True):
        assert feat.dtype == np.float32 and feat.shape == (FEATURE_SIZE,)
        assert space.contains(feat), "a feature left its column's bounds"
        expected = flat_features(*rack_features(obs[None], deck_size(n)))[0]
        np.testing.assert_array_equal(feat, expected)
        np.testing.assert_array_equal(mask, raw_mask)
    assert env.action_masks().shape == (14,)


def test_gym_wrapper_through_make_passes_check_env() -> None:
    env = FeatureObservation(gymnasium.make("racko/Racko-v1", opponents=["heuristic"], **SHORT))
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs) and info["action_mask"].any()


def test_bounds_hold_on_random_observations() -> None:
    """Observations from random play of every seat (off-turn views included) of 4 players."""
    aec = racko_v1.env(num_players=4, **SHORT)
    aec.reset(seed=11)
    rng = np.random.default_rng(11)
    rows = []
    for _agent in aec.agent_iter(2000):
        obs, _, term, trunc, _ = aec.last()
        rows += [aec.observe(a)["observation"] for a in aec.agents]
        if term or trunc:
            aec.reset(seed=int(rng.integers(1000)))
            continue
        aec.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    feats = features_of(np.stack(rows), deck_size(4))
    space = feature_space(deck_size(4))
    assert feats.shape == (len(rows), FEATURE_SIZE)
    assert np.all(feats >= space.low) and np.all(feats <= space.high)


def test_aec_wrapper_keeps_mask_and_passes_api_test() -> None:
    env = feature_observation_v0(racko_v1.env(num_players=3, **SHORT))
    api_test(env, num_cycles=200)
    plain = racko_v1.env(num_players=3, **SHORT)
    env.reset(seed=5)
    plain.reset(seed=5)
    for agent in env.agent_iter(200):
        obs, *_, term, trunc, _ = env.last()
        raw = plain.observe(agent)
        assert env.observation_space(agent).contains(obs)
        np.testing.assert_array_equal(obs["action_mask"], raw["action_mask"])
        np.testing.assert_array_equal(obs["observation"], features_of(raw["observation"], 50))
        action = None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0])
        env.step(action)
        plain.step(action)


def test_refusals_name_the_problem() -> None:
    with pytest.raises(ValueError, match="layout version 2"):
        FeatureObservation(gymnasium.make("racko/Racko-v1", observation_version=1))
    with pytest.raises(ValueError, match="rack_size=5"):
        num_cards_of({"num_players": 2, "rack_size": 5})
    with pytest.raises(ValueError, match="layout version 2"):
        features_of(np.zeros(177, dtype=np.float32), 40)


@pytest.mark.slow
def test_vector_wrapper_equals_the_features_the_vector_env_appends() -> None:
    make = {"num_envs": 8, "vectorization_mode": "vector_entry_point", "opponents": ["expert"]}
    envs = FeatureObservationVector(gymnasium.make_vec("racko/Racko-v1", seed=2, **make, **SHORT))
    ref = gymnasium.make_vec("racko/Racko-v1", seed=2, features=True, **make, **SHORT)
    assert envs.single_observation_space == feature_space(40)
    obs, info = envs.reset(seed=2)
    ref_obs, _ = ref.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(100):
        np.testing.assert_array_equal(obs, ref_obs[:, -FEATURE_SIZE:])
        assert envs.observation_space.contains(obs)
        masks = info["action_mask"]
        np.testing.assert_array_equal(masks, envs.action_masks())
        actions = [rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks]
        obs, *_, info = envs.step(np.array(actions))
        ref_obs, *_ = ref.step(np.array(actions))


def test_solitaire_features_leave_out_the_opponents_and_match_the_lifted_observation() -> None:
    from agents.feature_obs import SOLITAIRE_FEATURE_SIZE, solitaire_lift

    env = FeatureObservation(gymnasium.make("racko/RackoSolitaire-v0"))
    check_env(env.unwrapped)
    cols = columns(40, solitaire=True)
    assert env.observation_space.shape == (SOLITAIRE_FEATURE_SIZE,) == (len(cols),)
    assert not any("opp_" in c.name or c.name == "partners" for c in cols)
    assert {c.name for c in cols} <= {c.name for c in columns(40)}
    full = {c.name: c.index for c in columns(40)}
    lift = solitaire_lift(40)
    for obs, _ in _play(env.env, seed=3, steps=150):
        features = env.observation(obs)
        assert env.observation_space.contains(features)
        lifted = flat_features(*rack_features((obs @ lift)[None], 40))[0]
        assert np.array_equal(features, lifted[[full[c.name] for c in cols]])
    with pytest.raises(ValueError, match="rack_size=3"):
        FeatureObservation(gymnasium.make("racko/RackoSolitaire-v0", rack_size=3, deck_size=8))
