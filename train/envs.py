"""Vectorized training envs for a config: SB3 Dummy/Subproc VecEnvs over the Gymnasium view, or
the batched ``RackoVecEnv`` (``vec_env: batched``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import gymnasium
from gymnasium.wrappers import RecordEpisodeStatistics

from racko_env.gym_env import RackoGymEnv
from train.config import TrainConfig


def make_single_env(
    num_players: int,
    opponents: list[Any],
    weights: list[float],
    reward: str,
    episode: str,
    rules: dict[str, Any],
) -> gymnasium.Env:
    """One learner-view env with episode statistics in ``info["episode"]`` (what SB3 logs).

    Module-level and torch-free so that subprocess workers can build it from a pickled partial.
    """
    env = RackoGymEnv(
        num_players=num_players,
        opponents=opponents,
        opponent_weights=weights,
        reward=reward,
        episode=episode,
        **rules,
    )
    return RecordEpisodeStatistics(env)


def make_vec_env(cfg: TrainConfig, opponents: list[Any], weights: list[float]) -> Any:
    """The VecEnv of ``cfg.vec_env`` with ``cfg.n_envs`` games, opponents drawn from the pool,
    wrapped in ``RackShaping`` when ``cfg.shaping`` > 0."""
    venv = _make_raw_vec_env(cfg, opponents, weights)
    if cfg.shaping > 0:
        from train.shaping import RackShaping

        venv = RackShaping(venv, cfg.shaping, cfg.shaping_kind, cfg.num_players)
    return venv


def _make_raw_vec_env(cfg: TrainConfig, opponents: list[Any], weights: list[float]) -> Any:
    if cfg.vec_env == "batched":
        try:
            from train.sb3_vec_env import RackoVecEnv
        except ImportError as exc:
            raise RuntimeError(
                f"vec_env: batched needs train.sb3_vec_env ({exc}); use vec_env: subproc or dummy"
            ) from None
        return RackoVecEnv(
            cfg.n_envs,
            num_players=cfg.num_players,
            opponents=opponents,
            opponent_weights=weights,
            seed=cfg.seed,
            reward=cfg.reward,
            episode=cfg.episode,
            **cfg.rules_options(),
        )
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fn = partial(
        make_single_env,
        cfg.num_players,
        opponents,
        weights,
        cfg.reward,
        cfg.episode,
        cfg.rules_options(),
    )
    if cfg.vec_env == "subproc":
        return SubprocVecEnv([fn] * cfg.n_envs)
    return DummyVecEnv([fn] * cfg.n_envs)


def env_states(vec_env: Any) -> list[bytes] | None:
    """Per-env play state for an exact resume (None when the VecEnv cannot provide it)."""
    if hasattr(vec_env, "get_state"):
        return [vec_env.get_state()]
    return list(vec_env.env_method("get_state"))


def restore_env_states(vec_env: Any, states: list[bytes] | None) -> None:
    if states is None:
        return
    if hasattr(vec_env, "set_state"):
        vec_env.set_state(states[0])
        return
    for i, blob in enumerate(states):
        vec_env.env_method("set_state", blob, indices=[i])
