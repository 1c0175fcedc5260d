"""The training VecEnv of a config: the batched engine as SB3's ``VecEnv`` (``RackoVecEnv``),
and its play state as data for an exact resume."""

from __future__ import annotations

from typing import Any

from train.common.config import TrainConfig
from train.sb3.vec_env import RackoVecEnv


def make_vec_env(cfg: TrainConfig, opponents: list[Any], weights: list[float]) -> RackoVecEnv:
    """``cfg.n_envs`` games against opponents drawn from the pool by weight."""
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


def env_states(vec_env: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The VecEnv's play state as data (its games, deals and opponents' state), for an exact
    resume; ``vec_env`` may be wrapped (the feature cache)."""
    return getattr(vec_env, "venv", vec_env).get_state()


def restore_env_states(vec_env: Any, state: tuple[dict[str, Any], dict[str, Any]] | None) -> bool:
    """Put a saved play state back; False when there is none (the games are dealt afresh)."""
    if state is None:
        return False
    getattr(vec_env, "venv", vec_env).set_state(*state)
    return True
