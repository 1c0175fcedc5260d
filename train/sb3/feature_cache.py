"""The structured policy's features computed once per observation, where the env hands it out.

The planner inside the features is the costliest part of the forward pass, and PPO looks at each
observation ``1 + n_epochs`` times. ``FeatureCache`` computes them once, with the compiled kernel
``agents.features.rack_features`` (the same numbers as the torch ``RackFeatures``, tested), and
hands out ``[observation | features]``, which ``StructuredExtractor`` reads as they are."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

from agents.features import feature_shape, rack_features
from racko_env.observation import DEFAULT, Layout


class FeatureCache(VecEnvWrapper):
    """Observations ``[obs | RackFeatures(obs) flattened]`` (float32) of the game's layout
    ``layout`` (``layout_for(config)``; the rule book's by default); masks pass through."""

    def __init__(self, venv: VecEnv, num_cards: int, layout: Layout = DEFAULT) -> None:
        self.num_cards = int(num_cards)
        self.layout = layout
        width = layout.size + feature_shape(layout).size
        space = spaces.Box(-np.inf, np.inf, (width,), np.float32)
        super().__init__(venv, observation_space=space)

    def augment(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float32)
        slots, glob = rack_features(obs, self.num_cards, self.layout)
        return np.concatenate([obs, slots.reshape(len(obs), -1), glob], axis=1)

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
