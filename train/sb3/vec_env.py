"""``RackoVecEnv``: many Rack-O games as one stable-baselines3 ``VecEnv``, for fast MaskablePPO.

The games, seating, rewards and state are ``racko_env.learner_games.LearnerGames`` with the
vectorized bots of ``agents.batched``; this class is SB3's API over it. Ended games restart at
once (SB3's auto-reset), their infos holding ``terminal_observation``, ``TimeLimit.truncated`` and
a Monitor-style ``episode``; every info holds the returned observation's ``action_mask``."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from agents.batched import group_features, load_batch
from racko_env.actions import NUM_ACTIONS
from racko_env.learner_games import LearnerGames, register_state_policy
from train.common.snapshot import SnapshotPolicy

register_state_policy("snapshot", SnapshotPolicy)


class RackoVecEnv(LearnerGames, VecEnv):
    """``num_envs`` games of Rack-O seen from one learner seat each, as SB3's ``VecEnv``; the
    arguments are ``LearnerGames``'s (opponent specs or ``BatchPolicy`` objects and their weights,
    ``seed``, and ``racko_v1``'s ``reward``, ``episode`` and rules options)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("load_policy", load_batch)
        kwargs.setdefault("feature_fn", group_features)
        LearnerGames.__init__(self, *args, **kwargs)
        width = self.games.encoder.size  # the game's layout (OBS_SIZE for the rule book's)
        obs_space = spaces.Box(0.0, 1.0, (width,), dtype=np.float32)
        VecEnv.__init__(self, self.num_envs, obs_space, spaces.Discrete(NUM_ACTIONS))

    def reset(self) -> np.ndarray:
        if self._seeds[0] is not None:
            self._reseed(int(self._seeds[0]))
        self._reset_seeds()
        self._reset_options()
        self._start(self._all)
        self._needs_reset = False
        obs = self.games.observe(self._all, self._learner, out=self._obs)
        self.reset_infos = [{"action_mask": m} for m in self.action_masks()]
        return obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> VecEnvStepReturn:
        if self._needs_reset or self._actions is None:
            raise RuntimeError("call reset() before step()")
        games = self.games
        # ValueError for an illegal action
        rewards, terminated, truncated = self._play(self._actions, self._all)
        self._actions = None
        done = terminated | truncated
        obs = games.observe(self._all, self._learner, out=self._obs)
        ended = np.flatnonzero(done)
        ended_info = {}
        if ended.size:
            now = round(time.time() - self.t_start, 6)
            for i in ended.tolist():
                ended_info[i] = {
                    "terminal_observation": obs[i].copy(),
                    "TimeLimit.truncated": bool(truncated[i]),
                    "episode": {
                        "r": float(self._ep_return[i]),
                        "l": int(self._ep_len[i]),
                        "t": now,
                    },
                }
            self._start(ended)  # rewards before a new episode's first decision come next step
            obs[ended] = games.observe(ended, self._learner[ended])
        masks = self.action_masks()
        infos = [{"action_mask": m} for m in masks]
        for i, info in ended_info.items():
            infos[i].update(info)
        return obs.copy(), rewards.astype(np.float32), done, infos

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self, attr_name)  # AttributeError names a missing attribute
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        if len(list(self._get_indices(indices))) != self.num_envs:
            raise ValueError("RackoVecEnv shares its attributes across games: set them for all")
        setattr(self, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        which = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in which]
        method = getattr(self, method_name)  # AttributeError names a missing method
        result = method(*method_args, **method_kwargs)
        return [result for _ in which]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def _get_indices(self, indices: VecEnvIndices) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices
