"""Compute the structured policy's features once per observation, where the env hands it out.

The features (``train.sb3.policy.RackFeatures``) have no weights, but the planner inside them is the
costliest part of the forward pass. PPO looks at each observation once to act and then
``n_epochs`` more times to learn; computing the features when the env returns the observation and
keeping them beside it in the rollout buffer does that work once instead of ``1 + n_epochs`` times.

``FeatureCache`` is a ``VecEnvWrapper`` whose observations are ``[observation (177) | features]``;
``train.sb3.policy.StructuredExtractor`` reads the features when they are there and computes them when
handed a bare observation (the exported graph and frozen opponents). Nothing else changes: the
policy learns from exactly the numbers it would compute itself (tested).
"""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

from racko_env.observation import OBS_SIZE
from train.sb3.policy import RackFeatures, flat_features


class FeatureCache(VecEnvWrapper):
    """Observations ``[obs | RackFeatures(obs) flattened]`` (float32); masks pass through."""

    def __init__(self, venv: VecEnv, num_cards: int) -> None:
        self.features = RackFeatures(num_cards, draw_rows_only=True)
        width = OBS_SIZE + self.features.size
        space = spaces.Box(-np.inf, np.inf, (width,), np.float32)
        super().__init__(venv, observation_space=space)

    def augment(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float32)
        with torch.no_grad():
            feats = flat_features(*self.features(torch.as_tensor(obs)))
        return np.concatenate([obs, feats.numpy()], axis=1)

    def reset(self) -> np.ndarray:
        return self.augment(self.venv.reset())

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        ended = [i for i, info in enumerate(infos) if "terminal_observation" in info]
        if ended:
            terminal = self.augment(np.stack([infos[i]["terminal_observation"] for i in ended]))
            for row, i in enumerate(ended):
                infos[i]["terminal_observation"] = terminal[row]
        return self.augment(obs), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return get_action_masks(self.venv)
