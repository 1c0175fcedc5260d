"""Behaviour cloning warm start: teach the fresh policy to imitate a teacher bot before PPO.

PPO from a random policy against strong bots sees almost no wins, so it learns slowly. Cloning a
teacher (e.g. ``expert``) first gives PPO a competent starting point that self-play and the
baselines then improve. Data: every decision of every seat in games where all seats are the
teacher (played through ``racko_v1.raw_env`` with seeded deals, so it is reproducible).

``collect_teacher_data`` is the public piece: ``train/ppo.py`` clones what it collects with the
project's fitting loop (``train.sb3.warmstart.clone_actor``) for the config's ``pretrain``
section.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from racko_env import racko_v1
from racko_env.observation import OBS_SIZE

BATCHED_TEACHERS = ("random", "heuristic", "expert")  # have vectorized twins in agents.batched


def collect_teacher_data(
    teacher: str,
    num_players: int,
    rules: dict[str, Any],
    decisions: int,
    seed: int,
    episode: str = "round",
    batched: bool = False,
    n_envs: int = 256,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``decisions`` (observation, mask, action) triples from teacher-vs-teacher games.

    Default: every seat's decisions in ``racko_v1`` games, one game at a time (the data the
    shipped bots were trained on). ``batched=True`` plays ``n_envs`` games at once in
    ``racko_env.vector`` with the teacher's ``agents.batched`` twin (the same decisions, ~3.4x
    more decisions per second here) and records one seat per game (rotating); other data, so
    it is opt-in to keep earlier configs reproducible.
    """
    import agents

    if decisions < 1:
        raise ValueError(f"decisions must be at least 1, got {decisions}")
    if batched:
        return collect_batched(teacher, num_players, rules, decisions, seed, episode, n_envs)[:3]
    bots = [agents.load(teacher, num_players=num_players, **rules) for _ in range(num_players)]
    env = racko_v1.raw_env(num_players=num_players, episode=episode, **rules)
    obs_buf = np.zeros((decisions, OBS_SIZE), dtype=np.float32)
    mask_buf = np.zeros((decisions, 14), dtype=bool)
    act_buf = np.zeros(decisions, dtype=np.int64)
    n, game = 0, 0
    rng = np.random.default_rng(seed)
    while n < decisions:
        env.reset(seed=int(rng.integers(2**63)))
        for bot in bots:
            bot.reset()
        round_number = env.game.round_number
        game += 1
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if env.game.round_number != round_number:
                round_number = env.game.round_number
                for bot in bots:
                    bot.reset()
            seat = env.agent_name_mapping[agent]
            action = int(bots[seat].act(obs))
            obs_buf[n] = obs["observation"]
            mask_buf[n] = obs["action_mask"].astype(bool)
            act_buf[n] = action
            n += 1
            if n == decisions:
                break
            env.step(action)
    return obs_buf, mask_buf, act_buf


def collect_batched(
    teacher: str,
    num_players: int,
    rules: dict[str, Any],
    decisions: int,
    seed: int,
    episode: str = "round",
    n_envs: int = 256,
    player: Any = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(obs, masks, the teacher's actions, the player's agreement with them) of the learner seat in
    ``RackoVecEnv`` games against the teacher. ``player`` (a batch policy) moves there, labelled by
    the teacher; None: the teacher plays the seat too (teacher-vs-teacher games)."""
    from agents.batched import load_batch
    from train.sb3.vec_env import RackoVecEnv

    if teacher not in BATCHED_TEACHERS:
        raise ValueError(f"batched collection needs one of {BATCHED_TEACHERS}, got {teacher!r}")
    env = RackoVecEnv(
        n_envs, num_players=num_players, opponents=[teacher], seed=seed, episode=episode, **rules
    )
    label = load_batch(teacher, num_players, seed=seed + 1, **rules)
    obs_buf = np.zeros((decisions, OBS_SIZE), dtype=np.float32)
    mask_buf = np.zeros((decisions, 14), dtype=bool)
    act_buf = np.zeros(decisions, dtype=np.int64)
    same, obs, n = 0, env.reset(), 0
    while n < decisions:
        masks = env.action_masks()
        wanted = np.asarray(label.act_batch(obs, masks), dtype=np.int64)
        played = wanted if player is None else np.asarray(player.act_batch(obs, masks), np.int64)
        k = min(len(obs), decisions - n)
        obs_buf[n : n + k], mask_buf[n : n + k], act_buf[n : n + k] = obs[:k], masks[:k], wanted[:k]
        same += int(np.sum(played[:k] == wanted[:k]))
        n += k
        obs, _, _, _ = env.step(played)
    env.close()
    return obs_buf, mask_buf, act_buf, same / decisions
