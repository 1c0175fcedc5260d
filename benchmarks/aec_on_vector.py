"""Would ``racko_v0`` be faster on the batched engine at one game? (issue 27, item 7)

``racko_v0`` steps the readable engine (``RackoGame``) and keeps every seat's observation current
with ``SeatViews``, an incremental twin of ``observation.encode``. The question is whether an AEC
env stepping ``VectorRacko`` with ``num_games=1`` (the batched numpy engine and its ``Encoder``)
could replace both twins without losing the speed target (``env_speed.TARGET_RATIO`` x
``connect_four_v3``). This script holds that prototype, ``VectorAECEnv``, and measures it in one
interleaved run beside ``racko_v0`` and ``connect_four_v3`` with ``benchmarks.env_speed``'s harness
(random legal play, the same chooser, the same wrappers).

Before timing, the prototype must play the same games as ``racko_v0``: ``ReferenceChance`` draws the
deals and refill shuffles from a ``random.Random`` exactly as ``RackoGame`` does, so the same seed
and the same actions give the same game; ``check_same_games`` plays seeded random games through
both envs in lockstep and compares every observation, mask, reward, episode flag, info and agent.

    python -m benchmarks.aec_on_vector                       # 2 s per measurement, 3 repeats
    python -m benchmarks.aec_on_vector --seconds 3 --repeats 5 --json out_aec.json
    python -m benchmarks.aec_on_vector --profile 5 --variant compiled   # a py-spy target

The result and the decision are in ``docs/env.md`` ("The AEC env on the batched engine").
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from benchmarks.env_speed import CLOCKS, REFERENCE, TARGET_RATIO, steps_per_second
from racko_env.actions import NUM_ACTIONS, as_action_id
from racko_env.observation import (
    DISCARD_TOP,
    DRAW_SIZE,
    DRAW_TOP_KNOWN,
    HELD,
    HELD_FROM_DISCARD,
    IN_DISCARD,
    OBS_SIZE,
    OBS_SIZES,
    OFF_TURN_MASK,
    OPP_PRESENT,
    OPP_SCORES,
    OPP_SLOTS,
    OWN_SCORE,
    PARTNERS,
    PHASE,
    PHASE_MASKS,
    RACK,
    TURN,
    UNSEEN,
)
from racko_env.racko_v0 import ActionSpace
from racko_env.rules import RACKO_SCORE
from racko_env.vector import VectorRacko
from racko_env.vector.engine import IN_DISCARD as _IN_DISCARD
from racko_env.vector.engine import IN_DRAW as _IN_DRAW
from racko_env.vector.engine import IN_HAND as _IN_HAND
from racko_env.wrappers import wrap_classic

# racko_v0 (what the prototype would replace) gives layout version 1, the first entries of version 2
V1_SIZE = OBS_SIZES[1]
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")


class ReferenceChance:
    """The batched engine's chance drawn from one ``random.Random`` the way ``RackoGame`` draws it.

    ``RackoGame.new_game`` seeds its ``Random``, samples the dealer draw (highest card deals), then
    shuffles the deck; a refill shuffles the discard pile under its top. ``random.shuffle`` depends
    only on the length of the list, so shuffling ``range(m)`` gives the permutation that
    ``VectorGame`` applies (``chance.py``'s convention). One game only (``num_games=1``).
    """

    def __init__(self) -> None:
        self.rng = random.Random()

    def first_dealers(self, games: np.ndarray, num_players: int) -> np.ndarray:
        num_cards = 10 * num_players + 20  # deck_size; the draw is over the whole deck
        draw = self.rng.sample(range(1, num_cards + 1), num_players)
        return np.array([max(range(num_players), key=draw.__getitem__)])

    def deck_orders(self, games: np.ndarray, num_cards: int) -> np.ndarray:
        deck = list(range(1, num_cards + 1))
        self.rng.shuffle(deck)
        return np.array([deck])

    def refill_orders(self, games: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
        perm = list(range(int(lengths[0])))
        self.rng.shuffle(perm)
        row = np.zeros((1, width), dtype=np.intp)
        row[0, : len(perm)] = perm
        return row


class VectorAECEnv(AECEnv):
    """``racko_v0.raw_env``'s AEC protocol over ``VectorRacko(num_games=1)``: the prototype.

    Same agents, spaces, observations, masks, rewards, episode ends and infos as ``racko_v0``
    (``check_same_games`` holds it to that); no render and no read-only accessors (a prototype:
    only what the AEC loop of the benchmark needs).
    """

    metadata = {"name": "racko_v0_on_vector", "render_modes": [], "is_parallelizable": False}

    def __init__(
        self, num_players: int = 2, episode: str = "round", reward: str = "win", **rules: Any
    ) -> None:
        super().__init__()
        self._chance = ReferenceChance()
        self.vec = VectorRacko(1, num_players, episode, reward, chance=self._chance, **rules)
        self.game = self.vec.game
        n = self.vec.num_players
        self.episode = episode
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (V1_SIZE,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: ActionSpace() for a in self.possible_agents}
        self._seeder = random.Random()
        self._games = np.zeros(1, dtype=np.intp)  # the one game, as the batched calls take it
        self._seats = np.zeros(1, dtype=np.intp)
        self._actions = np.zeros(1, dtype=np.intp)
        self.agents: list[str] = []
        self._has_reset = False

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        options = options or {}
        if seed is not None:
            self._seeder.seed(seed)
        self._chance.rng.seed(self._seeder.getrandbits(64))  # as racko_v0 seeds RackoGame
        deck = options.get("deck_order")
        self.vec.reset(
            first_dealer=options.get("first_dealer"),
            deck_orders=None if deck is None else np.asarray([deck]),
        )
        self._rewards_given = False
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[int(self.game.current[0])]
        self._has_reset = True

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """A full batched encode of one seat of one game, on every call (no incremental views)."""
        player = self.agent_name_mapping[agent]
        self._seats[0] = player
        game = self.game
        return {
            "observation": self.vec.observe(self._games, self._seats)[0][:V1_SIZE],
            "action_mask": (
                PHASE_MASKS[game.phase[0]] if game.current[0] == player else OFF_TURN_MASK
            ).copy(),
        }

    def step(self, action: int | None) -> None:
        if not self._has_reset:
            raise RuntimeError("step() called before reset(); call reset() first")
        agents = self.agents
        if not agents:
            raise RuntimeError("step() called after the episode ended; call reset() first")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"action None for {agent}, who is on turn and not done")
        game = self.game
        self._actions[0] = as_action_id(action)
        round_before = game.round_number[0]
        result = self.vec.step(self._actions)  # raises ValueError for an illegal action
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_given:
            rewards = self.rewards
            for a in agents:
                rewards[a] = 0.0
            self._rewards_given = False
        # A round ended if the engine says so, or (game mode) if VectorRacko dealt the next one.
        if game.round_over[0] or game.round_number[0] != round_before:
            self._finish_round(result.rewards[0])
        ended = bool(result.terminated[0] or result.truncated[0])
        next_player = int(game.current[0])
        if ended:
            done = self.truncations if result.truncated[0] else self.terminations
            for a in agents:
                done[a] = True
            next_player = (next_player + 1) % len(self.possible_agents)
        self.agent_selection = self.possible_agents[next_player]
        if self._rewards_given:
            self._accumulate_rewards()

    def _finish_round(self, step_rewards: np.ndarray) -> None:
        self._rewards_given = True
        points = self.game.last_round_points[0].tolist()
        for p, a in enumerate(self.possible_agents):
            self.rewards[a] = float(step_rewards[p])
            # Only the Rack-O player scores RACKO_SCORE or more (a rack ascending without Rack-O,
            # possible with min_run, scores 50): the engine's racko_player is gone once game mode
            # has dealt the next round.
            self.infos[a] = {"round_points": points[p], "went_racko": points[p] >= RACKO_SCORE}

    def close(self) -> None:
        pass


class FreeObserveEnv(VectorAECEnv):
    """The prototype with an observation that costs nothing (a constant vector, the true mask): an
    upper bound for any encoder, compiled or not, on top of the batched step at one game."""

    _blank = np.zeros(V1_SIZE, dtype=np.float32)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = self.agent_name_mapping[agent]
        game = self.game
        return {
            "observation": self._blank.copy(),
            "action_mask": (
                PHASE_MASKS[game.phase[0]] if game.current[0] == player else OFF_TURN_MASK
            ).copy(),
        }


# ----------------------------------------------------------------------- compiled where it pays

_HELD, _DISCARD_TOP, _DRAW_TOP_KNOWN, _DRAW_SIZE = HELD, DISCARD_TOP, DRAW_TOP_KNOWN, DRAW_SIZE
_HELD_FROM_DISCARD, _TURN, _OWN_SCORE = HELD_FROM_DISCARD, TURN, OWN_SCORE
_RACK0, _OPP0, _PHASE0 = RACK.start, OPP_SLOTS.start, PHASE.start
_IN0, _UN0 = IN_DISCARD.start - 1, UNSEEN.start - 1  # card c sits at _IN0 + c / _UN0 + c
_OPP_SCORE0, _CONST0, _CONST1 = OPP_SCORES.start, OPP_PRESENT.start, PARTNERS + 1


@numba.njit(cache=True)
def _common_turn(racks, public_slots, draw, discard, draw_len, discard_len, owner, public, held,
                 from_discard, current, phase, turn, turn_limit, a):  # fmt: skip
    """``VectorGame.step`` for game 0 when nothing rare happens; False (and nothing changed) for
    anything else: an illegal action, a turn end that goes Rack-O (or might), reaches the turn
    limit or empties the draw pile. Those go through the batched engine."""
    ph = phase[0]
    if ph == 0:
        if a == 10:  # draw pile
            top = draw_len[0] - 1
            card = draw[0, top]
            held[0] = card
            owner[0, card] = _IN_HAND
            draw_len[0] = top
            phase[0] = 1
            return True
        if a == 11:  # take the discard
            top = discard_len[0] - 1
            card = discard[0, top]
            held[0] = card
            from_discard[0] = True
            discard_len[0] = top
            owner[0, card] = _IN_HAND
            phase[0] = 2
            return True
        return False
    if ph == 1 and a == 12:  # keep
        phase[0] = 2
        return True
    if not ((ph == 1 and a == 13) or (ph == 2 and a < 10 and a >= 0)):
        return False
    if turn[0] + 1 >= turn_limit or draw_len[0] == 0:
        return False
    cur = current[0]
    h = held[0]
    ascending = True  # the rack after the move: ascending means Rack-O (or a min_run check)
    for i in range(9):
        x = h if i == a else racks[0, cur, i]
        y = h if i + 1 == a else racks[0, cur, i + 1]
        if y <= x:
            ascending = False
            break
    if ascending:
        return False
    out = h
    if a < 10:
        old = racks[0, cur, a]
        out = old
        racks[0, cur, a] = h
        seen = from_discard[0]
        public_slots[0, cur, a] = h if seen else 0
        owner[0, h] = cur
        public[0, old] = False
        public[0, h] = seen
    dl = discard_len[0]
    discard[0, dl] = out
    discard_len[0] = dl + 1
    owner[0, out] = _IN_DISCARD
    held[0] = 0
    from_discard[0] = False
    turn[0] += 1
    current[0] = (cur + 1) % racks.shape[1]
    phase[0] = 0
    return True


@numba.njit(cache=True)
def _encode_seat(seat, racks, public_slots, draw, discard, draw_len, discard_len, owner, public,
                 held, from_discard, current, phase, turn, draw_known, totals, team_of, values,
                 const, turn_limit, inv_target, include_scores, out):  # fmt: skip
    """``Encoder.observe`` of one seat of game 0 into ``out`` (float32 [OBS_SIZE])."""
    n = racks.shape[1]
    on = current[0] == seat and phase[0] <= 2
    out[:] = 0.0
    for i in range(10):
        out[_RACK0 + i] = values[racks[0, seat, i]]
    for k in range(1, n):
        other = (seat + k) % n
        for i in range(10):
            out[_OPP0 + (k - 1) * 10 + i] = values[public_slots[0, other, i]]
    if on:
        out[_HELD] = values[held[0]]
        out[_PHASE0 + phase[0]] = 1.0
        if from_discard[0]:
            out[_HELD_FROM_DISCARD] = 1.0
    if discard_len[0] > 0:
        out[_DISCARD_TOP] = values[discard[0, discard_len[0] - 1]]
    if draw_known[0] and draw_len[0] > 0:
        out[_DRAW_TOP_KNOWN] = values[draw[0, draw_len[0] - 1]]
    out[_DRAW_SIZE] = values[draw_len[0]]
    out[_TURN] = turn[0] / turn_limit
    if include_scores:
        out[_OWN_SCORE] = min(totals[0, team_of[seat]] * inv_target, 1.0)
        for k in range(1, n):
            out[_OPP_SCORE0 + k - 1] = min(totals[0, team_of[(seat + k) % n]] * inv_target, 1.0)
    out[_CONST0:_CONST1] = const
    hidden_hand = not (on or from_discard[0])
    for c in range(1, owner.shape[1]):
        w = owner[0, c]
        if w == _IN_DISCARD:
            out[_IN0 + c] = 1.0
        elif w == _IN_DRAW or (w < _IN_DRAW and w != seat and not public[0, c]):
            out[_UN0 + c] = 1.0
        elif w == _IN_HAND and hidden_hand:
            out[_UN0 + c] = 1.0
    return out


class CompiledEnv(VectorAECEnv):
    """The prototype with its two hot paths compiled (numba) over ``VectorGame``'s own arrays:
    the common turn (``_common_turn``; the rare ones still go through ``VectorRacko.step``) and the
    encoding of one seat (``_encode_seat``). What "compiled where that pays" would give at best
    without a new state layout: one kernel call per step and per observation."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        g = self.game
        self._turn_state = (g.racks, g.public_slots, g.draw, g.discard, g.draw_len,
                            g.discard_len, g.owner, g.public, g.held, g.held_from_discard,
                            g.current, g.phase, g.turn)  # fmt: skip
        self._turn_limit = g.config.turn_limit
        enc = self.vec.encoder
        self._obs_state = (*self._turn_state, g.draw_known, g.totals, g.team_of, enc.values,
                           enc._const, g.config.turn_limit, 1.0 / g.config.target_score,
                           self.vec.include_scores)  # fmt: skip

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = self.agent_name_mapping[agent]
        game = self.game
        out = np.empty(OBS_SIZE, dtype=np.float32)
        return {
            "observation": _encode_seat(player, *self._obs_state, out)[:V1_SIZE],
            "action_mask": (
                PHASE_MASKS[game.phase[0]] if game.current[0] == player else OFF_TURN_MASK
            ).copy(),
        }

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if (
            type(action) is int
            and self._has_reset
            and self.agents
            and not self.terminations[agent]
            and not self.truncations[agent]
            and _common_turn(*self._turn_state, self._turn_limit, action)
        ):  # nothing rare: no rewards, no episode end, only the next agent
            self._cumulative_rewards[agent] = 0.0
            if self._rewards_given:
                rewards = self.rewards
                for a in self.agents:
                    rewards[a] = 0.0
                self._rewards_given = False
            self.agent_selection = self.possible_agents[self.game.current[0]]
            return
        super().step(action)


def vector_env(variant: str = "numpy", **kwargs: Any) -> AECEnv:
    """The prototype in ``racko_v0.env()``'s wrapper stack, so that the timing compares like with
    like; ``variant``: "numpy" (``VectorAECEnv``), "compiled" (``CompiledEnv``) or "step only"
    (``FreeObserveEnv``, an upper bound for any encoder on the numpy step)."""
    return wrap_classic(VARIANTS[variant](**kwargs), illegal_reward=-1.0)


VARIANTS: dict[str, type[VectorAECEnv]] = {
    "numpy": VectorAECEnv,
    "compiled": CompiledEnv,
    "step only": FreeObserveEnv,
}


# ----------------------------------------------------------------------- the differential check


def check_same_games(
    configs: list[dict], games: int, seed: int, make: Callable[..., AECEnv] = VectorAECEnv
) -> int:
    """Play ``games`` seeded random games per config through ``racko_v0.raw_env`` and ``make(**cfg)``
    (the prototype) in lockstep; raise ``AssertionError`` at the first difference. Returns the
    number of steps compared."""
    from racko_env import racko_v0

    steps = 0
    for cfg in configs:
        ref, new = racko_v0.raw_env(**cfg), make(**cfg)
        rng = random.Random(seed)
        for _ in range(games):
            episode_seed = rng.getrandbits(31)
            ref.reset(seed=episode_seed)
            new.reset(seed=episode_seed)
            while ref.agents:
                _assert_same_state(ref, new, cfg)
                agent = ref.agent_selection
                if ref.terminations[agent] or ref.truncations[agent]:
                    action = None
                else:
                    action = rng.choice(np.flatnonzero(ref.observe(agent)["action_mask"]).tolist())
                ref.step(action)
                new.step(action)
                steps += 1
            _assert_same_state(ref, new, cfg)
            assert not new.agents, f"{cfg}: the prototype's episode did not end with racko_v0's"
    return steps


def _assert_same_state(ref: AECEnv, new: AECEnv, cfg: dict) -> None:
    where = f"{cfg}, turn {ref.game.turn}"
    assert new.agent_selection == ref.agent_selection, f"{where}: agent_selection differs"
    assert new.agents == ref.agents, f"{where}: agents differ"
    for name in ("rewards", "_cumulative_rewards", "terminations", "truncations", "infos"):
        assert getattr(new, name) == getattr(ref, name), f"{where}: {name} differ"
    for agent in ref.agents:
        a, b = ref.observe(agent), new.observe(agent)
        for key in ("observation", "action_mask"):
            assert a[key].dtype == b[key].dtype, f"{where}: {key} dtype of {agent} differs"
            assert np.array_equal(a[key], b[key]), f"{where}: {key} of {agent} differs"


# Every episode mode, reward mode and rules option; short turn limits and targets keep the check
# quick (truncated rounds, refills and game-mode deals all happen within them).
CHECK_CONFIGS: list[dict] = [
    {"num_players": 2},
    {"num_players": 3, "reward": "score", "turn_limit": 120},
    {"num_players": 4, "episode": "game", "target_score": 60, "turn_limit": 60},
    {
        "num_players": 4,
        "partners": True,
        "episode": "game",
        "reward": "score",
        "target_score": 60,
        "turn_limit": 60,
    },
    {"num_players": 2, "empty_pile": "flip", "turn_limit": 120},
    {"num_players": 2, "min_run": 3, "bonus": True, "turn_limit": 60},
]


# ----------------------------------------------------------------------- the measurement


def env_factories(players: list[int]) -> dict[str, Callable[[], Any]]:
    """Name -> zero-argument constructor of each wrapped AEC env, in the order measured."""
    from pettingzoo.classic import connect_four_v3

    from racko_env import racko_v0

    factories: dict[str, Callable[[], Any]] = {REFERENCE: connect_four_v3.env}
    for n in players:
        factories[f"racko_v0 {n}p"] = functools.partial(racko_v0.env, num_players=n)
        for variant in VARIANTS:
            factories[f"{variant} {n}p"] = functools.partial(vector_env, variant, num_players=n)
    return factories


def run(players: list[int], seconds: float, repeats: int, seed: int, clock: str) -> dict:
    factories = env_factories(players)
    samples: dict[str, list[float]] = {name: [] for name in factories}
    load: list[float] = []
    for make in factories.values():  # compile the kernels (or load them from numba's cache)
        steps_per_second(make, 0.05, seed)
    for r in range(repeats):  # interleaved: every env once per repeat
        load.append(os.getloadavg()[0])
        for name, make in factories.items():
            samples[name].append(steps_per_second(make, seconds, seed + r, CLOCKS[clock])[0])
    reference = statistics.median(samples[REFERENCE])
    results = {
        name: {
            "steps_per_s": statistics.median(rates),
            "min": min(rates),
            "max": max(rates),
            "ratio_to_connect_four": statistics.median(rates) / reference,
        }
        for name, rates in samples.items()
    }
    for n in players:
        theirs = results[f"racko_v0 {n}p"]["steps_per_s"]
        for name in (f"{variant} {n}p" for variant in VARIANTS):
            results[name]["ratio_to_racko_v0"] = results[name]["steps_per_s"] / theirs
    return {
        "target_ratio": TARGET_RATIO,
        "seconds_per_measurement": seconds,
        "repeats": repeats,
        "clock": clock,
        "load_average_1min": {
            "median": statistics.median(load),
            "min": min(load),
            "max": max(load),
        },
        "results": results,
    }


def format_table(report: dict) -> str:
    lines = [f"{'env':<16} {'steps/s':>9} {'min':>9} {'max':>9} {'x c4':>7} {'x racko_v0':>11}"]
    lines.append("-" * len(lines[0]))
    for name, r in report["results"].items():
        vs = f"{r['ratio_to_racko_v0']:>11.2f}" if "ratio_to_racko_v0" in r else ""
        lines.append(
            f"{name:<16} {r['steps_per_s']:>9,.0f} {r['min']:>9,.0f} {r['max']:>9,.0f} "
            f"{r['ratio_to_connect_four']:>7.2f} {vs}"
        )
    la = report["load_average_1min"]
    lines.append(
        f"median of {report['repeats']} interleaved runs of {report['seconds_per_measurement']} s, "
        f"{report['clock']} clock; 1-min load average {la['median']:.1f} "
        f"({la['min']:.1f}-{la['max']:.1f})"
    )
    for name, r in report["results"].items():
        if not name.startswith((REFERENCE, "racko_v0")):
            met = "met" if r["ratio_to_connect_four"] >= TARGET_RATIO else "NOT met"
            lines.append(f"target {name} >= {TARGET_RATIO:g}x {REFERENCE}: {met}")
    return "\n".join(lines)


def profile(seconds: float, num_players: int, variant: str) -> None:
    """Only one variant's random-play loop, for ``py-spy record -- python -m ... --profile S``
    (after a short warm-up that compiles, or loads from numba's cache, the kernels)."""
    make = functools.partial(vector_env, variant, num_players=num_players)
    steps_per_second(make, 0.2, 0)
    rate, _ = steps_per_second(make, seconds, 0)
    print(f"{variant} {num_players}p: {rate:,.0f} steps/s")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats per env")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    parser.add_argument("--check-games", type=int, default=2, help="games per differential config")
    parser.add_argument("--profile", type=float, metavar="S", help="only play --variant for S s")
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="compiled")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be positive and --repeats at least 1")
    if bad := [n for n in args.players if n not in (2, 3, 4)]:
        parser.error(f"--players must be 2, 3 or 4, got {bad}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.profile:
        profile(args.profile, args.players[0], args.variant)
        return 0
    for variant in ("numpy", "compiled") if args.check_games else ():  # "step only" encodes nothing
        start = time.perf_counter()
        steps = check_same_games(CHECK_CONFIGS, args.check_games, args.seed, VARIANTS[variant])
        print(
            f"{variant}: the same games as racko_v0, {steps:,} steps of {args.check_games} games "
            f"x {len(CHECK_CONFIGS)} configs compared ({time.perf_counter() - start:.1f} s)"
        )
    report = run(args.players, args.seconds, args.repeats, args.seed, args.clock)
    print(format_table(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
