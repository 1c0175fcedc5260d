"""``RackoVecEnv.get_state()`` is data only (JSON + numpy) and restores the games exactly."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from racko_env.observation import OBS_SIZE
from train.common.snapshot import SnapshotPolicy
from train.sb3.vec_env import RackoVecEnv


def _env(snapshot: SnapshotPolicy) -> RackoVecEnv:
    env = RackoVecEnv(
        6, num_players=3, opponents=["random", "heuristic", snapshot], seed=11, turn_limit=60
    )
    env.reset()
    return env


def _play(env: RackoVecEnv, rng: np.random.Generator, steps: int) -> list:
    out = []
    for _ in range(steps):
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, _ = env.step(actions)
        out.append((obs.copy(), rewards.copy(), dones.copy()))
    return out


@pytest.mark.slow
def test_state_round_trips_through_json_and_npz_and_replays_exactly() -> None:
    rng = np.random.default_rng(0)
    snapshot = SnapshotPolicy(
        [(rng.normal(size=(14, OBS_SIZE)).astype(np.float32), np.zeros(14, np.float32))],
        "relu",
        "s@0",
    )
    env = _env(snapshot)
    _play(env, np.random.default_rng(1), 30)
    meta, arrays = env.get_state()
    meta = json.loads(json.dumps(meta))  # plain JSON
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as data:  # plain arrays, no objects
        arrays = {k: data[k] for k in data.files}
    ahead = _play(env, np.random.default_rng(2), 80)

    other = _env(SnapshotPolicy([(np.zeros((14, OBS_SIZE), np.float32), np.zeros(14))], "tanh"))
    other.set_state(meta, arrays)
    again = _play(other, np.random.default_rng(2), 80)
    for (o1, r1, d1), (o2, r2, d2) in zip(ahead, again, strict=True):
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)
    assert any(d.any() for _, _, d in ahead)  # episodes ended and new ones were drawn


def test_state_of_an_unsaveable_opponent_is_refused_and_mismatches_are_named() -> None:
    class Custom:
        def act_batch(self, obs, masks):
            return masks.argmax(axis=1)

    env = RackoVecEnv(2, opponents=[Custom()], seed=0)
    env.reset()
    with pytest.raises(ValueError, match="cannot save the state of opponent"):
        env.get_state()
    small = RackoVecEnv(2, opponents=["random"], seed=0)
    small.reset()
    meta, arrays = small.get_state()
    with pytest.raises(ValueError, match="state is for 2 games of 2 players"):
        RackoVecEnv(3, opponents=["random"], seed=0).set_state(meta, arrays)


def test_registered_policy_classes_are_saved_as_data() -> None:
    from racko_env import learner_games

    class Fixed:
        def __init__(self, action: int, name: str = "fixed") -> None:
            self.action, self.name = action, name

        def act_batch(self, obs, masks):
            return np.where(masks[:, self.action], self.action, masks.argmax(axis=1))

        def to_arrays(self):
            return {"action": np.array(self.action)}

        @classmethod
        def from_arrays(cls, arrays, name):
            return cls(int(arrays["action"]), name)

    with pytest.raises(TypeError, match="to_arrays"):
        learner_games.register_state_policy("bad", int)
    learner_games.register_state_policy("fixed-test", Fixed)
    try:
        env = RackoVecEnv(2, opponents=[Fixed(12, "f")], seed=0)
        env.reset()
        meta, arrays = env.get_state()
        assert meta["policies"][0]["type"] == "fixed-test"
        other = RackoVecEnv(2, opponents=["random"], seed=0)
        other.set_state(meta, arrays)
        assert [p.action for p in other.opponent_pool] == [12]
    finally:
        del learner_games.STATE_POLICIES["fixed-test"]
