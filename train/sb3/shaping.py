"""Potential-based reward shaping: a dense signal for building a good rack that cannot change
which policy is best.

On each learner step the reward gains ``coef * (gamma * phi(s') - phi(s))`` (Ng, Harada and
Russell, 1999) for a rack potential phi of the learner's own rack (observation indices 0-9), with
``phi(s') = 0`` when the step ended the episode (terminated or truncated). With the discount
``gamma`` PPO uses, the discounted shaped terms of a whole episode telescope to
``-coef * phi(s0)``: a constant of the first deal, so the optimal policy stays the one that wins.
An earlier version added ``coef * (phi' - phi)`` without gamma and without phi = 0 at the end, so
an episode's return gained ``coef * phi(final rack)`` and a zone-shaped rack outweighed winning
(experiments/README.md).

- ``ascending``: the length of the longest strictly ascending subsequence / 10 (1 = Rack-O).

It works on any VecEnv (SB3's or the batched ``RackoVecEnv``) because it reads only observations;
the episode statistics SB3 logs stay the unshaped rewards.
"""

from __future__ import annotations

import bisect

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from racko_env.observation import RACK

KINDS = ("ascending",)


def ascending_length(rack: np.ndarray) -> int:
    """Length of the longest strictly ascending subsequence (patience sorting)."""
    tails: list[float] = []
    for card in rack.tolist():
        i = bisect.bisect_left(tails, card)
        tails[i : i + 1] = [card]
    return len(tails)


def potential(obs: np.ndarray, kind: str = "ascending") -> float:
    """phi(s) in [0, 1] for one learner observation."""
    if kind not in KINDS:
        raise ValueError(f"shaping kind must be one of {KINDS}, got {kind!r}")
    return ascending_length(np.asarray(obs)[RACK]) / 10


def shaping_term(phi: float, phi_next: float, done: bool, gamma: float) -> float:
    """``gamma * phi(s') - phi(s)`` with ``phi(s') = 0`` at the end of an episode."""
    return (0.0 if done else gamma * phi_next) - phi


class RackShaping(VecEnvWrapper):
    """Adds ``coef * (gamma * phi(s') - phi(s))`` to every learner step (module docstring)."""

    def __init__(self, venv: VecEnv, coef: float, gamma: float, kind: str = "ascending") -> None:
        if not np.isfinite(coef) or coef < 0:
            raise ValueError(f"shaping coefficient must be a finite number >= 0, got {coef!r}")
        if not 0 < gamma <= 1:
            raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
        if kind not in KINDS:
            raise ValueError(f"shaping kind must be one of {KINDS}, got {kind!r}")
        super().__init__(venv)
        self.coef = float(coef)
        self.gamma = float(gamma)
        self.kind = kind
        self.last_obs: np.ndarray | None = None

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
            phi = potential(self.last_obs[i], self.kind)
            phi_next = 0.0 if dones[i] else potential(obs[i], self.kind)
            rewards[i] += self.coef * shaping_term(phi, phi_next, bool(dones[i]), self.gamma)
        self.last_obs = np.array(obs, copy=True)
        return obs, rewards, dones, infos
