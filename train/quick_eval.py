"""The quick batched check every trainer runs while it trains: win rates against fixed bots.

One function for PPO's periodic evaluation and value iteration's per-iteration evaluation (and
any future trainer): ``rounds`` rounds of the learner (any ``BatchPolicy``: a numpy snapshot, a
torch policy wrapped with ``act_batch``) against ``opponent`` in every other seat, played in the
batched ``RackoVecEnv`` (many tables at once, learner seats rotating), with a 95% Wilson interval.
It is seeded, so successive evaluations of one run see the same deals and are comparable.

It is a quick check, not the verdict: the learner's seat and deals are not balanced as in the
duplicate tournament (``train/tournament.py``, ``python train/evaluate.py``), which is what the
final evaluation and the docs' numbers use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from train.tournament import wilson_interval


def quick_win_rate(
    policy: Any,
    opponent: str,
    rounds: int,
    seed: int,
    num_players: int,
    rules: dict[str, Any],
    episode: str = "round",
    n_envs: int = 500,
) -> dict[str, Any]:
    """Share of episodes the learner won alone; each of up to ``n_envs`` tables plays its share.

    Returns ``{"opponent", "rounds", "wins", "win_rate", "ci95"}``; ``rounds`` is the number
    actually played (``rounds`` rounded up to a multiple of the table count).
    """
    from train.sb3_vec_env import RackoVecEnv

    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    n_envs = min(n_envs, rounds)
    per = -(-rounds // n_envs)
    env = RackoVecEnv(
        n_envs, num_players, opponents=[opponent], seed=seed, reward="win", episode=episode, **rules
    )
    try:
        obs = env.reset()
        done_count = np.zeros(n_envs, dtype=np.int64)
        wins = 0
        while (done_count < per).any():
            obs, rewards, dones, _ = env.step(policy.act_batch(obs, env.action_masks()))
            counted = dones & (done_count < per)
            wins += int((rewards[counted] > 0).sum())
            done_count += dones
    finally:
        env.close()
    played = per * n_envs
    lo, hi = wilson_interval(wins, played)
    return {
        "opponent": opponent,
        "rounds": played,
        "wins": wins,
        "win_rate": wins / played,
        "ci95": [lo, hi],
    }


def quick_win_rates(
    policy: Any,
    opponents: list[str],
    rounds: int,
    seed: int,
    num_players: int,
    rules: dict[str, Any],
    episode: str = "round",
) -> dict[str, dict[str, Any]]:
    """``quick_win_rate`` against each opponent (the same deals for each)."""
    return {
        opp: quick_win_rate(policy, opp, rounds, seed, num_players, rules, episode)
        for opp in opponents
    }
