"""Vectorized training envs for a config: SB3 Dummy/Subproc VecEnvs over the Gymnasium view, or
the batched ``RackoVecEnv`` (``vec_env: batched``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import gymnasium
from gymnasium.wrappers import RecordEpisodeStatistics

from racko_env.gym_env import RackoGymEnv
from train.common.config import TrainConfig


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
        from train.sb3.shaping import RackShaping

        venv = RackShaping(venv, cfg.shaping, cfg.ppo.gamma, cfg.shaping_kind)
    return venv


def _make_raw_vec_env(cfg: TrainConfig, opponents: list[Any], weights: list[float]) -> Any:
    if cfg.vec_env == "batched":
        try:
            from train.sb3.vec_env import RackoVecEnv
        except ImportError as exc:
            raise RuntimeError(
                f"vec_env: batched needs train.sb3.vec_env ({exc}); use vec_env: subproc or dummy"
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


def env_states(vec_env: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The VecEnv's play state as data, for an exact resume; None when it cannot give one.

    Only the batched ``RackoVecEnv`` (``vec_env: batched``) saves its games as data; the
    Dummy/Subproc VecEnvs over the Gymnasium view hold live bot objects whose state has no
    data-only form, so a run resumed with those starts fresh deals (docs/training.md).
    """
    inner = getattr(vec_env, "venv", vec_env)  # RackShaping wraps the VecEnv
    if isinstance(inner, _batched_class()):
        return inner.get_state()
    return None


def restore_env_states(vec_env: Any, state: tuple[dict[str, Any], dict[str, Any]] | None) -> bool:
    """Put a saved play state back; False when there is none (the games are dealt afresh)."""
    if state is None:
        return False
    inner = getattr(vec_env, "venv", vec_env)
    if not isinstance(inner, _batched_class()):
        raise ValueError("a saved batched-env state can only go back into vec_env: batched")
    inner.set_state(*state)
    return True


def _batched_class() -> type:
    from train.sb3.vec_env import RackoVecEnv

    return RackoVecEnv
