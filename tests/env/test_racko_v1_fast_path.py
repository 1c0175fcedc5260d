"""The fast AEC env equals the plain reference path, step for step.

``racko_v1.env()`` keeps every seat's observation current incrementally (``SeatViews``), inlines
the action mask, touches rewards only around a round's end, and runs PettingZoo's wrappers through
their one-hop subclasses (``racko_env.wrappers``). The reference here does none of that: every
observation is ``observation.encode`` of the engine's state, the mask is ``observation.action_mask``,
rewards are zeroed and added up on every step, and the wrappers are PettingZoo's own classes. Both
play the same seeded games (random legal play, with illegal, out-of-range and ``None`` actions mixed
in) for 2-4 players and the rules options; every return value, error and piece of state must match.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from pettingzoo.utils import wrappers as pz_wrappers

from racko_env import racko_v1
from racko_env.observation import action_mask, encode


class PlainEnv(racko_v1.raw_env):
    """``racko_v1.raw_env`` without its fast paths: full encodes, and rewards reset every step."""

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = self.agent_name_mapping[agent]
        return {
            "observation": encode(self.game, player, self.episode == "game"),
            "action_mask": action_mask(self.game, player),
        }

    def step(self, action: int | None) -> None:
        if not self._has_reset:
            raise RuntimeError("step() called before reset(); call reset() first")
        if not self.agents:
            raise RuntimeError(
                "step() called after the episode ended (every agent is done); call reset() first"
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(
                f"action None for {agent}, who is on turn and not done; legal actions are "
                f"{list(self.game.legal_actions())}"
            )
        game = self.game
        turn = game.turn
        game.apply(action)
        self._cumulative_rewards[agent] = 0.0
        for a in self.agents:
            self.rewards[a] = 0.0
        if self.reward_mode == "turns" and game.turn > turn:
            self.rewards[agent] = -1.0
        ended = game.round_over and self._finish_round()
        next_player = (game.current + 1) % game.num_players if ended else game.current
        self.agent_selection = self.possible_agents[next_player]
        self._accumulate_rewards()


def reference_env(**options: Any) -> Any:
    """The plain env in PettingZoo's own classic wrappers."""
    env = pz_wrappers.TerminateIllegalWrapper(PlainEnv(**options), illegal_reward=-1.0)
    return pz_wrappers.OrderEnforcingWrapper(pz_wrappers.AssertOutOfBoundsWrapper(env))


def outcome(call: Any, *args: Any, **kwargs: Any) -> tuple:
    """What ``call(*args, **kwargs)`` gave back, or the error it raised (type and message)."""
    try:
        return ("ok", call(*args, **kwargs))
    except Exception as err:  # noqa: BLE001 - the error itself is what is compared
        return ("error", type(err).__name__, str(err))


def assert_same(fast: Any, ref: Any) -> None:
    """Equal values, with numpy arrays compared by dtype, shape and content, and numbers by type."""
    if isinstance(ref, np.ndarray):
        assert isinstance(fast, np.ndarray) and fast.dtype == ref.dtype
        assert fast.flags.writeable == ref.flags.writeable
        np.testing.assert_array_equal(fast, ref)
    elif isinstance(ref, dict):
        assert type(fast) is dict and list(fast) == list(ref)
        for key in ref:
            assert_same(fast[key], ref[key])
    elif isinstance(ref, tuple | list):
        assert type(fast) is type(ref) and len(fast) == len(ref)
        for f, r in zip(fast, ref, strict=True):
            assert_same(f, r)
    else:
        assert type(fast) is type(ref) and fast == ref, (fast, ref)


STATE = ("agents", "agent_selection", "rewards", "_cumulative_rewards")
STATE += ("terminations", "truncations", "infos")


def assert_same_state(fast: Any, ref: Any) -> None:
    for name in STATE:
        assert_same(getattr(fast, name), getattr(ref, name))


def play_side_by_side(options: dict, episodes: int, seed: int) -> dict[str, int]:
    """Drive both envs with the same calls; returns counts of what was compared."""
    fast, ref = racko_v1.env(**options), reference_env(**options)
    rng = random.Random(seed)
    steps = rounds = rewarded = illegal = 0
    for episode in range(episodes):
        assert_same(
            outcome(fast.reset, seed=seed + episode), outcome(ref.reset, seed=seed + episode)
        )
        # A third of the episodes end with an illegal move somewhere (TerminateIllegalWrapper).
        illegal_at = steps + rng.randrange(100) if episode % 3 == 2 else -1
        while ref.agents:
            assert_same_state(fast, ref)
            if rng.random() < 0.9:  # usually last(); else step() must observe for itself
                seen = outcome(fast.last), outcome(ref.last)
                assert_same(*seen)
                if rng.random() < 0.1:  # returned arrays are the caller's to change (and the
                    for result in seen:  # wrapper checks the next move against this very mask)
                        result[1][0]["observation"][:] = 0.5
                        result[1][0]["action_mask"][:] = 1
            seats = ref.possible_agents  # every seat's view, on or off turn
            for agent in rng.sample(seats, min(2, len(seats))):
                assert_same(outcome(fast.observe, agent), outcome(ref.observe, agent))
            if rng.random() < 0.02:  # out of the action space: asserted, nothing changes
                bad = rng.choice([14, -1, True, 2.5, "3", np.int64(99)])
                assert_same(outcome(fast.step, bad), outcome(ref.step, bad))
                assert_same_state(fast, ref)
            agent = ref.agent_selection
            if ref.terminations[agent] or ref.truncations[agent]:
                action = None
            else:
                mask = action_mask(ref.unwrapped.game, ref.unwrapped.agent_name_mapping[agent])
                legal = np.flatnonzero(mask).tolist()
                if steps == illegal_at:
                    action = rng.choice([a for a in range(14) if a not in legal])
                    illegal += 1
                else:
                    action = rng.choice(legal)
                if rng.random() < 0.3:
                    action = np.int64(action)  # numpy integers take the same path
            assert_same(outcome(fast.step, action), outcome(ref.step, action))
            steps += 1
            rewarded += any(ref.rewards.values())
        rounds += ref.unwrapped.game.round_number
        assert_same_state(fast, ref)
        assert_same(outcome(fast.step, None), outcome(ref.step, None))
        assert_same(outcome(fast.last), outcome(ref.last))
    return {"steps": steps, "rounds": rounds, "rewarded": rewarded, "illegal": illegal}


GAME = dict(episode="game", target_score=60, turn_limit=50)  # several short rounds a game
OPTION_SETS = [
    dict(num_players=2),
    dict(num_players=2, reward="score", empty_pile="flip", min_run=3, turn_limit=80),
    dict(num_players=2, **GAME, reward="score"),
    dict(num_players=3, **GAME, reward="score", empty_pile="flip", bonus=True),
    dict(num_players=3, **GAME),
    dict(num_players=4, **GAME, partners=True),
    dict(num_players=4, **GAME, partners=True, reward="score", bonus=True),
    dict(num_players=4, empty_pile="flip", turn_limit=70),
    dict(num_players=2, **GAME, reward="turns"),
    dict(num_players=1, rack_size=6, deck_size=20, reward="turns", turn_limit=200),
]


@pytest.mark.parametrize(
    "options",
    [  # the quick subset: three of them, 2 and 4 players, rounds and games, every option
        pytest.param(o, marks=() if i in (1, 6, 7) else pytest.mark.slow)
        for i, o in enumerate(OPTION_SETS)
    ],
    ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()),
)
def test_env_equals_the_reference_path(options: dict) -> None:
    counts = play_side_by_side(options, episodes=6, seed=11)
    assert counts["steps"] > 300 and counts["illegal"] == 2
    assert counts["rewarded"] >= 3  # round ends not cut short by an illegal move (ties give 0)
    if options.get("episode") == "game":
        assert counts["rounds"] > 6  # games of several rounds: rewards between rounds are checked


def test_agent_iter_equals_pettingzoos() -> None:
    fast, ref = racko_v1.env(num_players=3), reference_env(num_players=3)
    for env in (fast, ref):
        env.reset(seed=5)
    rng = random.Random(0)
    seen = []
    for a_fast, a_ref in zip(fast.agent_iter(500), ref.agent_iter(500), strict=True):
        assert a_fast == a_ref
        (
            obs,
            *_,
        ) = ref.last()
        _, _, term, trunc, _ = fast.last()
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        action = None if term or trunc else rng.choice(legal)
        seen.append(a_ref)
        fast.step(action)
        ref.step(action)
    assert len(seen) > 100
    # next() twice without a step in between: the order-enforcing assertion, in both.
    for env in (fast, ref):
        env.reset(seed=1)
    its = [iter(env.agent_iter()) for env in (fast, ref)]
    assert_same(outcome(next, its[0]), outcome(next, its[1]))
    assert_same(outcome(next, its[0]), outcome(next, its[1]))


def test_before_reset_equals_pettingzoos() -> None:
    fast, ref = racko_v1.env(), reference_env()
    for call in (
        lambda e: e.step(10),
        lambda e: e.observe("player_0"),
        lambda e: e.last(),
        lambda e: e.agent_iter(),
        lambda e: e.agent_selection,
        lambda e: e.rewards,
        lambda e: e.action_space("player_1").n,
        lambda e: e.observation_space("player_1")["observation"].shape,
    ):
        assert_same(outcome(call, fast), outcome(call, ref))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_deep_copy_plays_on_like_the_original(n: int) -> None:
    """Search and tree methods copy envs mid-game: the copy's incremental views are its own."""
    import copy

    env = racko_v1.env(num_players=n)
    env.reset(seed=5)
    rng = random.Random(0)
    for _ in range(30):
        obs, *_ = env.last()
        env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    twin = copy.deepcopy(env)
    for _ in range(60):
        if not env.agents:
            break
        a, b = env.last(), twin.last()
        np.testing.assert_array_equal(a[0]["observation"], b[0]["observation"])
        action = rng.choice(np.flatnonzero(a[0]["action_mask"]).tolist())
        env.step(action)
        twin.step(action)
    for agent in env.possible_agents:
        np.testing.assert_array_equal(
            env.observe(agent)["observation"], twin.observe(agent)["observation"]
        )
