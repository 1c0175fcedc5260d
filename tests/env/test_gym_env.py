"""The single-agent Gymnasium view: API, masks, seat rotation, reward delivery vs the AEC env, and
the view on the learner-seat core held equal to the reference (the view over the AEC env it was)."""

from __future__ import annotations

import copy
import json

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import racko_env  # noqa: F401  (registers racko/Racko-v1)
from racko_env import racko_v1
from racko_env.gym_env import RackoGymEnv
from racko_env.observation import OBS_SIZE
from tests.env.reference_gym_env import RackoGymEnv as ReferenceGymEnv


class Recorder:
    """A bot that plays uniformly at random and appends every action to a shared trace."""

    name = "recorder"

    def __init__(self, trace: list[int], seed: int) -> None:
        self.trace = trace
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    def act(self, observation: dict) -> int:
        action = int(self.rng.choice(np.flatnonzero(observation["action_mask"])))
        self.trace.append(action)
        return action


def test_make_and_check_env() -> None:
    env = gymnasium.make("racko/Racko-v1", num_players=2, opponents=["heuristic"])
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
    mask = env.unwrapped.action_masks()
    assert mask.dtype == bool and mask.shape == (14,) and mask.any()
    assert np.array_equal(info["action_mask"], mask)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_masks_never_empty_and_seats_rotate(num_players: int) -> None:
    env = RackoGymEnv(num_players=num_players, opponents=["random", "heuristic"])
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=11)
    seats = [info["seat"]]
    while len(seats) < 2 * num_players + 1:
        mask = env.action_masks()
        assert mask.any(), "the learner was handed an all-False mask"
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        if term or trunc:
            _, info = env.reset()
            seats.append(info["seat"])
    offset = seats[0]
    assert seats == [(offset + k) % num_players for k in range(len(seats))]


@pytest.mark.slow
def test_same_seed_same_episodes() -> None:
    def play(seed: int) -> list[tuple]:
        env = RackoGymEnv(num_players=3, opponents=["random", "heuristic"])
        rng = np.random.default_rng(1)
        obs, _ = env.reset(seed=seed)
        out = []
        for _ in range(300):
            a = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, r, term, trunc, _ = env.step(a)
            out.append((a, r, term, trunc, obs.tobytes()))
            if term or trunc:
                obs, _ = env.reset()
        return out

    assert play(5) == play(5)
    assert play(5) != play(6)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("num_players", "reward", "episode", "rules"),
    [
        (2, "win", "round", {}),
        pytest.param(2, "score", "round", {}, marks=pytest.mark.slow),
        pytest.param(3, "win", "round", {}, marks=pytest.mark.slow),
        (4, "score", "round", {"partners": True}),
        # whole games of random play (about 8,000 steps each): the quick subset has game
        # episodes in test_view_equals_reference, against the view over the AEC env
        pytest.param(2, "score", "game", {"target_score": 150}, marks=pytest.mark.slow),
        pytest.param(3, "win", "game", {"target_score": 120}, marks=pytest.mark.slow),
    ],
)
def test_reward_delivery_matches_aec(num_players, reward, episode, rules) -> None:
    """Replaying each episode's actions in racko_v1 gives the learner seat the same return."""
    trace: list[int] = []
    env = RackoGymEnv(
        num_players=num_players,
        opponents=[Recorder(trace, seed=7)],
        reward=reward,
        episode=episode,
        **rules,
    )
    rng = np.random.default_rng(3)
    ended_by_opponent = 0
    env.reset(seed=num_players)
    for _ in range(12 if episode == "round" else 3):
        seat, deal_seed = env.learner, env.deal_seed
        episode_trace = list(trace)  # the opponents' moves before the learner's first decision
        trace.clear()
        ret, done = 0.0, False
        while not done:
            a = int(rng.choice(np.flatnonzero(env.action_masks())))
            episode_trace.append(a)
            _, r, term, trunc, info = env.step(a)
            episode_trace += trace
            last_mover_is_opponent = bool(trace)
            trace.clear()
            ret += r
            done = term or trunc
        ended_by_opponent += last_mover_is_opponent
        aec = racko_v1.raw_env(num_players=num_players, reward=reward, episode=episode, **rules)
        aec.reset(seed=deal_seed)
        me = aec.possible_agents[seat]
        aec_return = 0.0
        for a in episode_trace:
            aec.step(a)
            aec_return += aec.rewards[me]
        assert aec.terminations[me] or aec.truncations[me]
        assert (aec.terminations[me], aec.truncations[me]) == (term, trunc)
        assert ret == pytest.approx(aec_return)
        env.reset()
    if episode == "round":
        assert ended_by_opponent > 0, "no episode ended on an opponent's move: test too weak"


def test_learner_loss_is_delivered_when_an_opponent_ends_the_round() -> None:
    env = RackoGymEnv(num_players=2, opponents=["heuristic"], reward="win", seat=0)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    losses = 0
    for _ in range(5):
        done = False
        while not done:
            a = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, r, term, trunc, info = env.step(a)
            done = term or trunc
        if term and not info["went_racko"]:
            assert r == -1.0
            losses += 1
        env.reset()
    assert losses > 0


def test_illegal_action_ends_episode_with_penalty() -> None:
    env = RackoGymEnv(num_players=2, opponents=["random"])
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, r, term, trunc, info = env.step(illegal)
    assert (r, term, trunc, info["illegal_action"]) == (-1.0, True, False, illegal)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_state_roundtrip_continues_identically() -> None:
    env = RackoGymEnv(num_players=3, opponents=["random", "heuristic"])
    rng = np.random.default_rng(2)
    env.reset(seed=9)
    for _ in range(40):
        _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if term or trunc:
            env.reset()
    blob = env.get_state()
    rng_copy = copy.deepcopy(rng)

    def run(e: RackoGymEnv, r: np.random.Generator) -> list:
        out = []
        for _ in range(200):
            obs, rew, term, trunc, _ = e.step(int(r.choice(np.flatnonzero(e.action_masks()))))
            out.append((obs.tobytes(), rew, term, trunc))
            if term or trunc:
                e.reset()
        return out

    first = run(env, rng)
    other = RackoGymEnv(num_players=3, opponents=["random"])
    other.reset(seed=123)
    other.set_state(blob)
    assert run(other, rng_copy) == first


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seat": 2}, "seat"),
        ({"opponents": []}, "opponents"),
        ({"opponents": ["random"], "opponent_weights": [1, 2]}, "opponent_weights"),
        ({"opponents": ["random"], "opponent_weights": [-1]}, "opponent_weights"),
        ({"opponents": [object()]}, "neither"),
        ({"bogus_option": 1}, "bogus_option"),
    ],
)
def test_bad_arguments_are_refused(kwargs, match) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        RackoGymEnv(num_players=2, **kwargs)


def test_gym_env_needs_no_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys, gymnasium, racko_env\n"
        "env = gymnasium.make('racko/Racko-v1', num_players=2, opponents=['heuristic'])\n"
        "env.reset(seed=0)\n"
        "env.step(int(env.unwrapped.action_masks().argmax()))\n"
        "assert 'torch' not in sys.modules and 'stable_baselines3' not in sys.modules\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize(
    "action",
    [10.7, "10", -0.5, None, float("nan"), np.array([10, 11]), np.array([10]), True, 10.0],
    ids=["10.7", "str", "-0.5", "None", "nan", "array", "1-element array", "True", "10.0"],
)
def test_learner_actions_are_checked_not_coerced(action) -> None:
    """None, NaN, floats, strings, bools and arrays all raise the same clear error; nothing is
    rounded into a move, and the episode goes on (the caller's bug, not a move)."""
    env = RackoGymEnv(num_players=2, opponents=["random"])
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match=r"integer action id 0\.\.13 .*got"):
        env.step(action)
    assert np.array_equal(env._obs(), obs)
    legal = int(np.flatnonzero(env.action_masks())[0])
    env.step(np.int64(legal))  # numpy integers play


@pytest.mark.parametrize("action", [-1, 14, 99, np.int64(-1)])
def test_integer_actions_outside_the_space_end_the_episode_like_illegal_ones(action) -> None:
    env = RackoGymEnv(num_players=2, opponents=["random"])
    env.reset(seed=0)
    _, r, term, trunc, info = env.step(action)
    assert (r, term, trunc, info["illegal_action"]) == (-1.0, True, False, int(action))


def test_step_before_reset_says_so() -> None:
    env = RackoGymEnv(num_players=2, opponents=["random"])
    with pytest.raises(RuntimeError, match=r"before reset\(\)"):
        env.step(10)


def test_an_opponent_playing_a_float_is_an_error_naming_it() -> None:
    class FloatBot:
        name = "floaty"

        def reset(self) -> None:
            pass

        def act(self, observation: dict) -> float:
            return float(np.flatnonzero(observation["action_mask"])[0])

    env = RackoGymEnv(num_players=2, opponents=[FloatBot()], seat=1)
    with pytest.raises(ValueError, match=r"opponent floaty \(player_0\) played 10\.0"):
        for seed in range(5):
            env.reset(seed=seed)


def _play_both(kwargs: dict, seed: int, steps: int, illegal_every: int = 0) -> int:
    """Play the view and the reference side by side with the same learner actions: every
    observation, mask, reward, end, info, seat, deal seed and table (render) must be equal."""
    new, ref = (
        RackoGymEnv(render_mode="ansi", **kwargs),
        ReferenceGymEnv(render_mode="ansi", **kwargs),
    )
    rng = np.random.default_rng(seed)
    episodes, done = 0, True
    for k in range(steps):
        if done:
            reset_seed = seed if k == 0 or rng.random() < 0.2 else None
            (o1, i1), (o2, i2) = new.reset(seed=reset_seed), ref.reset(seed=reset_seed)
            assert o1.tobytes() == o2.tobytes() and o1.dtype == o2.dtype
            assert i1.keys() == i2.keys() and np.array_equal(i1["action_mask"], i2["action_mask"])
            assert (new.learner, new.deal_seed, i1["seat"]) == (
                ref.learner,
                ref.deal_seed,
                i2["seat"],
            )
            assert new.render() == ref.render()
            episodes += 1
        mask = ref.action_masks()
        assert np.array_equal(new.action_masks(), mask)
        illegal = illegal_every and k % illegal_every == illegal_every - 1
        action = int(np.flatnonzero(~mask)[0] if illegal else rng.choice(np.flatnonzero(mask)))
        o1, r1, t1, u1, i1 = new.step(action)
        o2, r2, t2, u2, i2 = ref.step(action)
        assert o1.tobytes() == o2.tobytes()
        assert (r1, t1, u1) == (r2, t2, u2)
        assert type(r1) is float and type(t1) is bool and type(u1) is bool
        assert i1.keys() == i2.keys()
        for key in i1:
            assert np.array_equal(i1[key], i2[key]), key
        assert new.render() == ref.render()
        done = t1 or u1
    return episodes


@pytest.mark.parametrize(
    ("kwargs", "seed"),
    [
        pytest.param(  # quick: the 2-player game below
            {"num_players": 2, "opponents": ["random", "heuristic"]}, 0, marks=pytest.mark.slow
        ),
        pytest.param(  # quick: the 2-player game below
            {"num_players": 3, "opponents": ["random", "heuristic"], "opponent_weights": [1, 3]},
            1,
            marks=pytest.mark.slow,
        ),
        pytest.param(
            {"num_players": 4, "opponents": ["random"], "reward": "score", "partners": True},
            2,
            marks=pytest.mark.slow,
        ),
        (
            {"num_players": 2, "opponents": ["random"], "reward": "score", "episode": "game"},
            3,
        ),
        pytest.param(  # quick: the 2-player game above
            {"num_players": 3, "opponents": ["heuristic", "random"], "episode": "game"},
            4,
            marks=pytest.mark.slow,
        ),
        pytest.param(
            {"num_players": 2, "opponents": ["random"], "seat": 1, "observation_version": 1},
            5,
            marks=pytest.mark.slow,
        ),
        pytest.param(
            {"num_players": 2, "opponents": ["random"], "empty_pile": "flip", "turn_limit": 30},
            6,
            marks=pytest.mark.slow,
        ),
        pytest.param(
            {"num_players": 2, "opponents": ["heuristic"], "min_run": 3, "bonus": True},
            7,
            marks=pytest.mark.slow,
        ),
    ],
)
def test_view_equals_reference(kwargs: dict, seed: int) -> None:
    """Same seed, same learner actions: the view on the core gives the reference's stream."""
    assert _play_both(kwargs, seed, steps=1500, illegal_every=211) > 5


@pytest.mark.slow
def test_view_equals_reference_with_bot_objects() -> None:
    """Per-game bot objects (seeded each episode, reset each round) and batch policies as
    opponents, and a pool swapped mid-run: the same stream as the reference."""

    class Counter:  # a bot whose moves depend on its reset() and seed() calls
        name = "counter"

        def __init__(self) -> None:
            self.rng = np.random.default_rng(0)
            self.moves = 0

        def seed(self, seed: int) -> None:
            self.rng = np.random.default_rng(seed)

        def reset(self) -> None:
            self.moves = 0

        def act(self, observation: dict) -> int:
            legal = np.flatnonzero(observation["action_mask"])
            self.moves += 1
            return int(legal[-1] if self.moves % 3 == 0 else self.rng.choice(legal))

    class FirstLegal:  # a batch policy
        def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return masks.argmax(axis=1)

    def kwargs() -> dict:
        return {"num_players": 3, "opponents": [Counter(), FirstLegal()], "episode": "game"}

    # one Counter per env (their state must not be shared between the two)
    new, ref = RackoGymEnv(**kwargs()), ReferenceGymEnv(**kwargs())
    rng = np.random.default_rng(9)
    (o1, _), (o2, _) = new.reset(seed=9), ref.reset(seed=9)
    for k in range(1200):
        if k == 600:
            new.set_opponent_pool([Counter(), "random"], [2, 1])
            ref.set_opponent_pool([Counter(), "random"], [2, 1])
        assert o1.tobytes() == o2.tobytes()
        action = int(rng.choice(np.flatnonzero(ref.action_masks())))
        o1, r1, t1, u1, _ = new.step(action)
        o2, r2, t2, u2, _ = ref.step(action)
        assert (r1, t1, u1) == (r2, t2, u2)
        if t1 or u1:
            (o1, _), (o2, _) = new.reset(), ref.reset()
            assert new.deal_seed == ref.deal_seed


def test_state_is_data_only() -> None:
    env = RackoGymEnv(num_players=2, opponents=["random"])
    env.reset(seed=0)
    meta, arrays = env.get_state()
    json.dumps(meta)
    assert all(isinstance(v, np.ndarray) for v in arrays.values())
    env = RackoGymEnv(num_players=2, opponents=[Recorder([], 0)])
    env.reset(seed=0)
    with pytest.raises(ValueError, match="cannot save"):  # a bot object is not data
        env.get_state()
