"""Reward shaping for training: a dense signal for building a good rack.

On each learner move the reward gains ``coef * (phi' - phi)``, the change of a rack potential
phi in [0, 1] computed from the learner's own rack (observation indices 0-9) before and after the
move. Only the learner's own moves change its rack, so this credits exactly its placements.

- ``zone``: the mean over slots of ``1 - |slot - zone(card)| / 9`` where ``zone(c) =
  floor((c - 1) * 10 / N)`` (the classic slot-zone idea: each card has a home slot); 1 means every
  card is in its home slot.
- ``ascending``: the length of the longest strictly ascending subsequence / 10 (1 = Rack-O).

It works on any VecEnv (SB3's or the batched ``RackoVecEnv``) because it reads only observations;
the episode statistics SB3 logs stay the unshaped rewards.
"""

from __future__ import annotations

import bisect

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from racko_env.observation import RACK, TURN
from racko_env.rules import deck_size

KINDS = ("zone", "ascending")


def ascending_length(rack: np.ndarray) -> int:
    """Length of the longest strictly ascending subsequence (patience sorting)."""
    tails: list[float] = []
    for card in rack.tolist():
        i = bisect.bisect_left(tails, card)
        tails[i : i + 1] = [card]
    return len(tails)


def zone_potential(scaled_rack: np.ndarray, num_cards: int) -> float:
    """Mean closeness of each card to its home slot (1 = all home); cards given as c / N."""
    cards = np.rint(np.asarray(scaled_rack) * num_cards)
    home = np.floor((cards - 1) * 10 / num_cards)
    return float(np.mean(1.0 - np.abs(np.arange(10) - home) / 9.0))


class RackShaping(VecEnvWrapper):
    """Adds ``coef * (phi' - phi)`` to every learner step (see the module docstring)."""

    def __init__(self, venv: VecEnv, coef: float, kind: str, num_players: int) -> None:
        if not np.isfinite(coef) or coef < 0:
            raise ValueError(f"shaping coefficient must be a finite number >= 0, got {coef!r}")
        if kind not in KINDS:
            raise ValueError(f"shaping kind must be one of {KINDS}, got {kind!r}")
        super().__init__(venv)
        self.coef = float(coef)
        self.kind = kind
        self.num_cards = deck_size(num_players)
        self.last_obs: np.ndarray | None = None

    def potential(self, obs: np.ndarray) -> float:
        if self.kind == "zone":
            return zone_potential(obs[RACK], self.num_cards)
        return ascending_length(obs[RACK]) / 10

    def reset(self) -> np.ndarray:
        obs = self.venv.reset()
        self.last_obs = np.array(obs, copy=True)
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        if self.last_obs is None:
            raise RuntimeError("RackShaping: step before reset (or a resume without last_obs)")
        rewards = np.asarray(rewards, dtype=np.float32).copy()
        for i in range(len(rewards)):
            after = infos[i]["terminal_observation"] if dones[i] else obs[i]
            before = self.last_obs[i]
            if after[TURN] < before[TURN]:  # a new round was dealt in between (game mode)
                continue
            rewards[i] += self.coef * (self.potential(after) - self.potential(before))
        self.last_obs = np.array(obs, copy=True)
        return obs, rewards, dones, infos
