"""Reward shaping for training: a dense signal for building an ascending rack.

On each learner move the reward gains ``coef * (L' - L) / 10``, where L is the length of the
longest strictly ascending subsequence of the learner's own rack (observation indices 0-9; 10 =
Rack-O) before the move and L' after it. Only the learner's own moves change its rack, so this
credits exactly its placements. It works on any VecEnv (SB3's or the batched ``RackoVecEnv``)
because it reads only observations; the episode statistics SB3 logs stay the unshaped rewards.
"""

from __future__ import annotations

import bisect

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from racko_env.observation import RACK, TURN


def ascending_length(rack: np.ndarray) -> int:
    """Length of the longest strictly ascending subsequence (patience sorting)."""
    tails: list[float] = []
    for card in rack.tolist():
        i = bisect.bisect_left(tails, card)
        tails[i : i + 1] = [card]
    return len(tails)


class AscendingShaping(VecEnvWrapper):
    """Adds ``coef * (L' - L) / 10`` to every learner step (see the module docstring)."""

    def __init__(self, venv: VecEnv, coef: float) -> None:
        if not np.isfinite(coef) or coef < 0:
            raise ValueError(f"shaping coefficient must be a finite number >= 0, got {coef!r}")
        super().__init__(venv)
        self.coef = float(coef)
        self.last_obs: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        obs = self.venv.reset()
        self.last_obs = np.array(obs, copy=True)
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        if self.last_obs is None:
            raise RuntimeError("AscendingShaping: step before reset (or a resume without last_obs)")
        rewards = np.asarray(rewards, dtype=np.float32).copy()
        for i in range(len(rewards)):
            after = infos[i]["terminal_observation"] if dones[i] else obs[i]
            before = self.last_obs[i]
            if after[TURN] < before[TURN]:  # a new round was dealt in between (game mode)
                continue
            gain = ascending_length(after[RACK]) - ascending_length(before[RACK])
            rewards[i] += self.coef * gain / 10
        self.last_obs = np.array(obs, copy=True)
        return obs, rewards, dones, infos
