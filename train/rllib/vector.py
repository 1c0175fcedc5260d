"""The RLlib trainer's vector path (``env: vector``): its env runners step
``racko_env.vector_env.RackoVectorEnv`` through Gymnasium's vector API.

RLlib calls ``make_vector_env`` with the env config plus ``num_envs``; the env's observation
becomes the dict the masked module reads. Every ``league.snapshot_every`` iterations the learner
is frozen into a ``FrozenPolicy``; the newest ``league.size`` (``SnapshotLeague``, saved with each
checkpoint) go to every env runner as plain arrays and sit in the ``league`` seats. Seeds: RLlib's
``seed + worker_index`` mixed with the iteration the run started at (``salt``) fix every deal,
seat and opponent draw."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorWrapper
from gymnasium.vector.utils import batch_space

from racko_env.observation import OBS_SIZE
from racko_env.vector_env import SELF, RackoVectorEnv
from train.rllib.env import observation_space

SNAPSHOTS = "snapshots"  # the league's folder in a checkpoint


class DictObservations(VectorWrapper):
    """``RackoVectorEnv`` as the masked module wants it: dict observations, the mask inside; the
    infos (the mask) are not handed on, so RLlib's per-env info lists stay empty."""

    def __init__(self, env: RackoVectorEnv, salt: int = 0) -> None:
        super().__init__(env)
        self.salt = int(salt)
        self.features = env.features
        self.single_observation_space = observation_space(self.features)
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)

    def _dict(self, obs: np.ndarray, info: dict[str, Any]) -> dict[str, np.ndarray]:
        out = {
            "observation": obs[:, :OBS_SIZE],
            "action_mask": info["action_mask"].astype(np.float32),
        }
        if self.features:
            out["features"] = obs[:, OBS_SIZE:]
        return out

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if seed is not None:
            seed = int(np.random.SeedSequence([int(seed), self.salt]).generate_state(1)[0])
        obs, info = self.env.reset(seed=seed, options=options)
        return self._dict(obs, info), {}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        return self._dict(obs, info), rewards, terminated, truncated, {}


def make_vector_env(config: dict[str, Any]) -> gym.vector.VectorEnv:
    """RLlib's vector entry point: ``RLlibConfig.env_config()`` plus ``num_envs``."""
    opponents = {(SELF if k == "league" else k): float(w) for k, w in config["opponents"].items()}
    salt = int(config.get("salt", 0))
    seed = int(np.random.SeedSequence([int(config.get("seed", 0)), salt]).generate_state(1)[0])
    env = RackoVectorEnv(
        int(config["num_envs"]),
        num_players=int(config.get("num_players", 2)),
        opponents=opponents,
        seed=seed,
        reward=config.get("reward", "win"),
        episode=config.get("episode", "round"),
        features=bool(config.get("features", False)),
        **dict(config.get("rules", {})),
    )
    return DictObservations(env, salt)


class SnapshotLeague:
    """The frozen copies of the learner that sit in ``league`` seats on the vector path."""

    def __init__(self, size: int, latest_weight: float) -> None:
        from train.common.snapshot import SnapshotPool

        self.pool = SnapshotPool(size, latest_weight)
        self.latest_weight = latest_weight

    def add(self, module: Any, name: str) -> None:
        """Freeze the structured module's current weights into a new snapshot."""
        from train.network.frozen import FrozenPolicy
        from train.rllib.module import to_network

        self.pool.add(FrozenPolicy(to_network(module), name))

    def push(self, algo: Any) -> None:
        """Seat the snapshots in every env runner's games (as plain arrays over the wire)."""
        payload = [(s.to_arrays(), s.name) for s in self.pool.snapshots]
        latest = self.latest_weight

        def seat(runner: Any) -> None:
            from train.network.frozen import FrozenPolicy

            env = getattr(runner, "env", None)
            if env is not None:
                snaps = [FrozenPolicy.from_arrays(a, n) for a, n in payload]
                env.unwrapped.set_self_play(snaps, latest_weight=latest)

        remote = algo.config.num_env_runners > 0
        algo.env_runner_group.foreach_env_runner(seat, local_env_runner=not remote)

    def save(self, folder: Path) -> None:
        self.pool.save(folder / SNAPSHOTS)

    def load(self, folder: Path) -> None:
        import train.network.frozen  # noqa: F401  (registers the snapshots' kind, "structured")

        if (folder / SNAPSHOTS).is_dir():
            self.pool.load(folder / SNAPSHOTS)
