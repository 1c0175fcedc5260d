"""RackoVecEnv: the single-agent view for SB3, checked against the AEC env game by game.

The lockstep test runs every game of the VecEnv beside its own ``racko_v1.raw_env`` with the same
deals and shuffles (see ``test_vector_engine``): the learner's moves are replayed there, the
opponents are the per-game ``heuristic`` bot, and the learner's rewards, episode ends and
observations must match, including rounds that an opponent's move ends.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.vec_env import VecEnv, VecMonitor, VecNormalize
from test_vector_engine import RecordingChance, ScriptedRandom

from agents.batched import (
    BatchHeuristic,
    ModelPolicy,
)
from agents.features import GLOBAL_FEATURES, RACK_SIZE, SLOT_FEATURES
from agents.heuristic import HeuristicBot
from racko_env import racko_v1
from racko_env.observation import OBS_SIZE
from train.sb3.vec_env import RackoVecEnv

FEATURE_WIDTH = RACK_SIZE * SLOT_FEATURES + GLOBAL_FEATURES


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(masks.shape) * masks).argmax(axis=1)


# ----------------------------------------------------------------- reward delivery vs the AEC env


class RefGame:
    """One AEC env playing the VecEnv's game: the learner's seat replays, heuristic opponents."""

    def __init__(self, queue, cfg: dict, bot: HeuristicBot) -> None:
        self.env = racko_v1.raw_env(**cfg)
        self.env.game.rng = ScriptedRandom(queue)
        self.bot = bot
        self.seat = -1

    def start(self, seat: int) -> float:
        """New episode(s) until the learner is on turn; returns reward collected meanwhile."""
        self.seat = seat
        while True:
            self.env.reset()
            reward, done = self.play_opponents()
            if not done:
                return reward

    def play_opponents(self) -> tuple[float, bool]:
        env, me = self.env, f"player_{self.seat}"
        reward = 0.0
        while env.agent_selection != me:
            agent = env.agent_selection
            env.step(self.bot.act(env.observe(agent)))
            reward += env.rewards[me]
            if env.terminations[me] or env.truncations[me]:
                return reward, True
        return reward, False

    def learner_step(self, action: int) -> tuple[float, bool, bool]:
        env, me = self.env, f"player_{self.seat}"
        env.step(action)
        reward = env.rewards[me]
        done = env.terminations[me] or env.truncations[me]
        if not done:
            more, done = self.play_opponents()
            reward += more
        return reward, done, env.truncations[me]


@pytest.mark.slow
@pytest.mark.parametrize(
    "cfg",
    [  # the quick subset (pytest -m "not slow"): a 2-player game and 4 players with partners
        pytest.param(dict(num_players=2, turn_limit=60), marks=pytest.mark.slow),
        dict(num_players=2, reward="score", episode="game", target_score=150, turn_limit=70),
        pytest.param(
            dict(num_players=3, reward="score", turn_limit=80, empty_pile="flip"),
            marks=pytest.mark.slow,
        ),
        dict(num_players=4, partners=True, turn_limit=80),
        pytest.param(
            dict(num_players=3, episode="game", target_score=100, turn_limit=50, bonus=True),
            marks=pytest.mark.slow,
        ),
    ],
    ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()),
)
def test_learner_rewards_match_the_aec_env(cfg: dict) -> None:
    b = 24
    cfg = dict(cfg)
    n = cfg["num_players"]
    venv = RackoVecEnv(b, opponents="heuristic", seed=3, **cfg)
    chance = RecordingChance(b, seed=11)
    venv.games.game.chance = chance
    bot = HeuristicBot(n)
    refs = [RefGame(chance.queues[i], cfg, bot) for i in range(b)]
    obs = venv.reset()
    pending = np.array([refs[i].start(int(venv._learner[i])) for i in range(b)])
    rng = np.random.default_rng(0)
    heur = BatchHeuristic()
    episodes = by_opponent = 0
    for _ in range(250):
        for i, ref in enumerate(refs):
            view = ref.env.observe(f"player_{ref.seat}")
            assert np.array_equal(obs[i], view["observation"])
        masks = venv.action_masks()
        assert masks.any(axis=1).all()
        actions = np.where(
            rng.random(b) < 0.8, heur.act_batch(obs, masks), random_actions(masks, rng)
        )
        obs, rewards, dones, infos = venv.step(actions)
        for i, ref in enumerate(refs):
            r, done, truncated = ref.learner_step(int(actions[i]))
            r += pending[i]
            pending[i] = 0.0
            assert rewards[i] == np.float32(r), (i, rewards[i], r)
            assert dones[i] == done
            if done:
                episodes += 1
                by_opponent += ref.env.game.log[-1].player != ref.seat
                assert infos[i]["TimeLimit.truncated"] == truncated
                assert np.array_equal(
                    infos[i]["terminal_observation"],
                    ref.env.observe(f"player_{ref.seat}")["observation"],
                )
                pending[i] = ref.start(int(venv._learner[i]))
    assert episodes >= 10
    assert by_opponent > 0  # some episodes ended on an opponent's move


# ----------------------------------------------------------------- batched bots


# ----------------------------------------------------------------- VecEnv API


def test_vecenv_api_and_auto_reset() -> None:
    env = RackoVecEnv(32, num_players=2, opponents="random", seed=0, turn_limit=30)
    assert isinstance(env, VecEnv) and env.num_envs == 32
    assert is_masking_supported(env)
    obs = env.reset()
    assert obs.shape == (32, OBS_SIZE) and obs.dtype == np.float32
    assert env.observation_space.contains(obs[0]) and env.action_space.n == 14
    assert get_action_masks(env).shape == (32, 14)
    assert env.get_attr("render_mode") == [None] * 32
    assert env.env_method("action_masks", indices=[1, 2])[1].shape == (14,)
    assert env.env_is_wrapped(VecMonitor) == [False] * 32
    with pytest.raises(AttributeError):
        env.get_attr("no_such_attribute")
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(120):
        masks = get_action_masks(env)
        assert masks.any(axis=1).all()
        obs, rewards, dones, infos = env.step(random_actions(masks, rng))
        assert rewards.dtype == np.float32 and dones.dtype == bool and len(infos) == 32
        for i in np.flatnonzero(dones):
            info = infos[i]
            assert info["terminal_observation"].shape == (OBS_SIZE,)
            assert set(info["episode"]) == {"r", "l", "t"} and info["episode"]["l"] >= 1
            assert info["episode"]["r"] == pytest.approx(rewards[i])  # win mode: one reward
            assert not np.array_equal(info["terminal_observation"], obs[i])
            ended += 1
        assert all(
            np.array_equal(info["action_mask"], m)
            for info, m in zip(infos, env.action_masks(), strict=True)
        )
    assert ended > 20


@pytest.mark.slow
def test_learner_seat_rotates_and_seed_fixes_the_run() -> None:
    def run(seed: int) -> tuple[np.ndarray, list[int]]:
        env = RackoVecEnv(
            8, num_players=3, opponents=["random", "heuristic"], seed=seed, turn_limit=20
        )
        first = env.reset()
        seats = [int(env._learner[0])]
        rng = np.random.default_rng(0)
        total = [first]
        for _ in range(200):
            obs, r, d, _ = env.step(random_actions(env.action_masks(), rng))
            total += [obs, r[:, None]]
            if d[0]:
                seats.append(int(env._learner[0]))
        return np.concatenate([t.reshape(-1) for t in total]), seats

    a, seats = run(1)
    b, _ = run(1)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, run(2)[0])
    assert len(seats) > 4
    assert all((s2 - s1) % 3 == 1 for s1, s2 in zip(seats, seats[1:], strict=False))


def test_seed_method_then_reset_repeats_the_run() -> None:
    env = RackoVecEnv(4, opponents="random", seed=0)
    env.seed(7)
    a = env.reset()
    env.seed(7)
    assert np.array_equal(a, env.reset())


class Recorder:
    """A batch policy that plays like the heuristic and counts the rows it decided."""

    def __init__(self) -> None:
        self.rows = 0

    def act_batch(self, obs, masks):
        self.rows += len(obs)
        return BatchHeuristic().act_batch(obs, masks)


def test_set_opponent_pool_replaces_opponents_for_new_episodes() -> None:
    env = RackoVecEnv(16, opponents={"random": 1.0}, seed=0, turn_limit=20)
    env.reset()
    rec = Recorder()
    env.set_opponent_pool([rec, "heuristic"], weights=[1.0, 0.0])
    assert env.opponent_pool[0] is rec
    rng = np.random.default_rng(0)
    for _ in range(150):
        env.step(random_actions(env.action_masks(), rng))
    assert rec.rows > 0
    assert len(env._policies) == 2  # the old random opponent is gone once its games ended
    with pytest.raises(ValueError, match="one weight per"):
        env.set_opponent_pool(["random"], weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="positive sum"):
        env.set_opponent_pool(["random"], weights=[0.0])
    with pytest.raises(ValueError, match="at least one"):
        env.set_opponent_pool([])


def test_illegal_learner_action_is_an_error() -> None:
    env = RackoVecEnv(2, opponents="random", seed=0)
    env.reset()
    with pytest.raises(ValueError, match="illegal action 5"):
        env.step(np.array([5, 5]))


@pytest.mark.slow  # a soak: 51,200 steps
def test_memory_stays_flat_over_many_episodes() -> None:
    """No Python object accumulates per episode."""
    env = RackoVecEnv(64, opponents=["random", "heuristic"], seed=0, turn_limit=12)
    env.reset()
    rng = np.random.default_rng(0)

    def run(steps: int) -> None:
        for _ in range(steps):
            env.step(random_actions(env.action_masks(), rng))

    run(200)
    gc.collect()
    objects = len(gc.get_objects())
    episodes = int(env._episodes.sum())
    run(600)
    gc.collect()
    assert int(env._episodes.sum()) - episodes > 2000
    assert len(gc.get_objects()) - objects < 100


def test_wrappers_and_a_short_maskable_ppo_run(tmp_path) -> None:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = RackoVecEnv(
        16, num_players=2, opponents="heuristic", seed=0, reward="score", turn_limit=40
    )
    norm = VecNormalize(env, norm_reward=False)
    assert norm.reset().shape == (16, OBS_SIZE)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) > 0  # SB3 logs ep_rew_mean from the episode infos
    snapshot = ModelPolicy(model, deterministic=True)
    env.set_opponent_pool([snapshot, "random"])
    obs = env.reset()
    masks = env.action_masks()
    actions = snapshot.act_batch(obs, masks)
    assert masks[np.arange(16), actions].all()
    env.step(actions)


def test_get_state_set_state_resumes_exactly() -> None:
    def make() -> RackoVecEnv:
        return RackoVecEnv(
            8, num_players=3, opponents=["random", "heuristic"], seed=5, turn_limit=25
        )

    rng = np.random.default_rng(0)
    env = make()
    env.reset()
    for _ in range(40):
        env.step(random_actions(env.action_masks(), rng))
    meta, arrays = env.get_state()  # data only: JSON-able meta and numpy arrays
    other = make()
    other.set_state(meta, arrays)
    a = np.random.default_rng(9)
    b = np.random.default_rng(9)
    for _ in range(60):
        o1, r1, d1, _ = env.step(random_actions(env.action_masks(), a))
        o2, r2, d2, _ = other.step(random_actions(other.action_masks(), b))
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)
    with pytest.raises(ValueError, match="games"):
        RackoVecEnv(4, num_players=3, turn_limit=25).set_state(meta, arrays)


def test_vecenv_obs_match_the_sb3_space_description() -> None:
    from stable_baselines3.common.vec_env.util import obs_space_info

    env = RackoVecEnv(4, num_players=4, partners=True, opponents="heuristic", seed=0)
    keys, shapes, dtypes = obs_space_info(env.observation_space)
    obs = env.reset()
    assert keys == [None] and obs.shape[1:] == shapes[None] and obs.dtype == dtypes[None]
    with pytest.raises(ValueError, match="num_envs"):
        RackoVecEnv(0)
    with pytest.raises(ValueError, match="unknown bot"):
        RackoVecEnv(2, opponents="nobody")
    with pytest.raises(ValueError, match="partners"):
        RackoVecEnv(2, num_players=3, partners=True)


def test_env_package_needs_no_torch_or_sb3() -> None:
    import subprocess
    import sys

    code = (
        "import sys, racko_env.vector as v; v.VectorRacko(4, 3, seed=0); "
        "bad = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


class _FeatureReader:
    """A ``takes_features`` policy that records each ``act_group`` call (plays the heuristic)."""

    takes_features = True
    num_cards = 40
    calls: list[tuple[list[str], np.ndarray, np.ndarray]] = []

    def __init__(self, name: str) -> None:
        self.name = name

    def act_batch(self, obs, masks):  # not used: the env hands features to act_group
        raise AssertionError("act_batch called for a feature-reading policy")

    @staticmethod
    def act_group(policies, owner, features, masks):
        _FeatureReader.calls.append(([p.name for p in policies], owner.copy(), features.copy()))
        return np.array([np.flatnonzero(m)[-1] for m in masks])


def test_feature_reading_opponents_of_a_decision_round_are_one_call() -> None:
    _FeatureReader.calls.clear()
    a, b = _FeatureReader("a"), _FeatureReader("b")
    env = RackoVecEnv(32, num_players=3, opponents=[a, b, "heuristic"], seed=5)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        env.step(random_actions(env.action_masks(), rng))
    assert _FeatureReader.calls
    both = [c for c in _FeatureReader.calls if c[0] == ["a", "b"]]
    assert both, "games of both snapshots in one decision round share one call"
    for names, owner, features in _FeatureReader.calls:
        assert names in (["a"], ["b"], ["a", "b"]) and set(owner.tolist()) == set(range(len(names)))
        assert features.shape == (len(owner), FEATURE_WIDTH)
        assert np.isfinite(features).all()
