"""``RackoVectorEnv``: registered for ``gymnasium.make_vec``, its stream equal to the SB3 VecEnv's
(the same core, two APIs), deterministic, with Gymnasium's two autoreset modes."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import racko_env  # noqa: F401  (registers racko/Racko-v1)
from agents.features import flat_features, rack_features
from racko_env.observation import OBS_SIZE
from racko_env.vector_env import RackoVectorEnv

MIX = {"heuristic": 0.5, "expert": 0.3, "random": 0.2}


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(masks.shape) * masks).argmax(axis=1)


def test_make_vec_returns_the_vector_env() -> None:
    envs = gymnasium.make_vec(
        "racko/Racko-v1",
        num_envs=6,
        vectorization_mode="vector_entry_point",
        opponents=MIX,
        seed=1,
        turn_limit=60,
    )
    assert isinstance(envs, RackoVectorEnv)
    assert envs.num_envs == 6
    assert envs.single_observation_space.shape == (OBS_SIZE,)
    assert envs.single_action_space == gymnasium.spaces.Discrete(14)
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    obs, info = envs.reset()
    assert obs.shape == (6, OBS_SIZE) and obs.dtype == np.float32
    assert envs.observation_space.contains(obs)
    np.testing.assert_array_equal(info["action_mask"], envs.action_masks())
    assert info["action_mask"].any(axis=1).all()  # the learner is always on turn
    with pytest.raises(ValueError, match="illegal|not legal|legal"):
        envs.step(np.where(info["action_mask"], -1, np.arange(14)).max(axis=1) * 0 + 99)
    envs.close()


def _sb3_stream(seed: int, steps: int, features: bool) -> list[tuple]:
    pytest.importorskip("stable_baselines3")
    from train.sb3.feature_cache import FeatureCache
    from train.sb3.vec_env import RackoVecEnv

    venv = RackoVecEnv(16, opponents=MIX, seed=seed, turn_limit=40)
    env = FeatureCache(venv, 40) if features else venv
    rng = np.random.default_rng(seed)
    obs = env.reset()
    masks = venv.action_masks().copy()
    out = [(obs, masks)]
    for _ in range(steps):
        obs, rewards, dones, infos = env.step(random_actions(masks, rng))
        masks = np.stack([info["action_mask"] for info in infos])
        final = {i: info["terminal_observation"] for i, info in enumerate(infos) if dones[i]}
        out.append((obs, masks, rewards.astype(np.float64), dones, final))
    return out


def _gym_stream(seed: int, steps: int, features: bool) -> list[tuple]:
    env = RackoVectorEnv(
        16,
        opponents=MIX,
        seed=seed,
        turn_limit=40,
        features=features,
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    rng = np.random.default_rng(seed)
    obs, info = env.reset()
    masks = info["action_mask"]
    out = [(obs, masks)]
    for _ in range(steps):
        obs, rewards, term, trunc, info = env.step(random_actions(masks, rng))
        masks = info["action_mask"]
        dones = term | trunc
        final = {int(i): info["final_obs"][i] for i in np.flatnonzero(dones)}
        if dones.any():
            np.testing.assert_array_equal(info["_final_obs"], dones)
        out.append((obs, masks, rewards, dones, final))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("features", [False, True])
def test_same_step_stream_equals_the_sb3_vec_env(features: bool) -> None:
    """Observations, masks, rewards, episode ends and last observations, step for step."""
    ours, theirs = _gym_stream(7, 150, features), _sb3_stream(7, 150, features)
    assert sum(len(step[4]) for step in ours[1:]) > 20  # many episodes ended on the way
    for a, b in zip(ours, theirs, strict=True):
        for x, y in zip(a[:4], b[:4], strict=True):
            np.testing.assert_array_equal(x, y)
        if len(a) > 4:
            assert a[4].keys() == b[4].keys()
            for i in a[4]:
                np.testing.assert_array_equal(a[4][i], b[4][i])


def test_features_are_the_kernels() -> None:
    env = RackoVectorEnv(8, opponents="heuristic", seed=3, features=True)
    obs, _ = env.reset()
    raw = obs[:, :OBS_SIZE]
    np.testing.assert_array_equal(obs[:, OBS_SIZE:], flat_features(*rack_features(raw, 40)))


def _next_step_stream(env: RackoVectorEnv, seed: int, steps: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out = [(obs, info["action_mask"])]
    for _ in range(steps):
        out.append(env.step(random_actions(info["action_mask"], rng)))
        info = out[-1][4]
    return out


@pytest.mark.slow
def test_next_step_autoreset_and_determinism() -> None:
    env = RackoVectorEnv(8, opponents=MIX, seed=0, turn_limit=30)
    stream = _next_step_stream(env, 5, 120)
    ended_before = np.zeros(8, dtype=bool)
    resets = 0
    for _obs, rewards, term, trunc, info in stream[1:]:
        # the step after an episode's end: its first observation, reward 0, not ended
        assert (rewards[ended_before] == 0).all()
        assert not (term | trunc)[ended_before].any()
        resets += int(ended_before.sum())
        ended_before = term | trunc
        # a decision waits in every game that goes on; an episode's last observation has none
        np.testing.assert_array_equal(info["action_mask"].any(axis=1), ~ended_before)
    assert resets > 5
    # the same seed, the same stream; reset(seed=...) equals a fresh env with that seed
    again = _next_step_stream(RackoVectorEnv(8, opponents=MIX, seed=5, turn_limit=30), 5, 120)
    for a, b in zip(stream[1:], again[1:], strict=True):
        for x, y in zip(a[:4], b[:4], strict=True):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(a[4]["action_mask"], b[4]["action_mask"])


class Always:
    """A fixed opponent: draws from the pile (action 0 when legal), else the first legal action."""

    def __init__(self) -> None:
        self.calls = 0

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.calls += len(obs)
        return masks.argmax(axis=1)


def test_self_play_snapshots_come_from_the_trainer() -> None:
    with pytest.raises(ValueError, match="positive weight"):
        RackoVectorEnv(2, opponents={"self": 1.0})
    env = RackoVectorEnv(32, opponents={"random": 0.5, "self": 0.5}, seed=0)
    assert len(env.opponent_pool) == 1  # no snapshot yet: the bots alone
    old, new = Always(), Always()
    env.set_self_play([old, new], latest_weight=0.8)
    assert env.opponent_pool[1:] == [old, new]
    np.testing.assert_allclose(env._pool_p, [0.5, 0.1, 0.4])
    obs, info = env.reset(seed=0)
    for _ in range(20):
        obs, *_, info = env.step(info["action_mask"].argmax(axis=1))
    assert new.calls > old.calls > 0


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="autoreset_mode"):
        RackoVectorEnv(2, autoreset_mode="Disabled")
    with pytest.raises(ValueError, match="num_envs"):
        RackoVectorEnv(0)
    with pytest.raises(ValueError, match="one weight per"):
        RackoVectorEnv(2, opponents=["random", "heuristic"], opponent_weights=[1.0])
    env = RackoVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=int))
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=1.5)


def test_bots_and_features_come_from_the_resolver(monkeypatch) -> None:
    """racko_env never imports the batched bots or the features: a resolver carries them."""
    import racko_env.opponents
    from agents.batched import load_batch

    loaded = []

    class Features:
        def width(self, config) -> int:
            return 1

        def features(self, obs: np.ndarray, num_cards: int, layout) -> np.ndarray:
            assert layout.size == obs.shape[1]  # the game's own layout comes along
            return np.asarray(obs[:, :1], dtype=np.float32)

    def resolver(spec, num_players, **rules):
        raise AssertionError("the batched env asks for batch policies")

    def batch(spec, num_players, *, seed=None, **rules):
        loaded.append(spec)
        return load_batch(spec, num_players, seed=seed, **rules)

    resolver.batch, resolver.features = batch, Features()
    monkeypatch.setattr(racko_env.opponents, "_registered", [resolver])
    env = RackoVectorEnv(4, opponents="heuristic", seed=0, features=True)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, OBS_SIZE + 1) and loaded == ["heuristic"]
    np.testing.assert_array_equal(obs[:, -1], obs[:, 0])


def test_features_without_a_resolver_are_one_clear_error(monkeypatch) -> None:
    import racko_env.opponents

    monkeypatch.setattr(racko_env.opponents, "_registered", [])
    monkeypatch.setattr(racko_env.opponents, "_discovered", [])
    with pytest.raises(LookupError, match=r"RackoVectorEnv\(features=True\) needs") as err:
        RackoVectorEnv(2, features=True)
    assert "\n" not in str(err.value)


def test_the_resolver_hands_over_the_batched_bots_and_features() -> None:
    import agents
    import racko_env.opponents
    from agents import StructuredFeatures, load_batched
    from agents.batched import BatchHeuristic, group_features
    from racko_env.config import RulesConfig
    from racko_env.observation import layout_for

    assert racko_env.opponents.provided("batch") is load_batched is agents.load.batch
    provider = racko_env.opponents.provided("features")
    assert isinstance(provider, StructuredFeatures)
    lay = layout_for(RulesConfig(num_players=1, rack_size=4, deck_size=10))
    obs = np.zeros((2, lay.size), np.float32)
    want = group_features(obs, 10, lay)
    assert provider.width(RulesConfig(num_players=1, rack_size=4, deck_size=10)) == want.shape[1]
    np.testing.assert_array_equal(provider.features(obs, 10, lay), want)
    env = RackoVectorEnv(2, opponents="heuristic", seed=0)
    env.reset(seed=0)
    assert {type(p) for p in env._policies.values()} == {BatchHeuristic}
