"""The decisions the network learns from: states the network itself visits, labelled with the
teacher's (the search bot's) choice there (``collect``), and the structured policy's inputs for
them (``policy_inputs``).

Why the network plays and the teacher only labels (DAgger / expert iteration): a network trained
on the teacher's own games meets, once it plays, states the teacher never led to, where it has
learned nothing; labelling the states of the network's own play teaches it what to do where it
actually goes. The other seats are the config's ``opponent``, as in the evaluation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.features import rack_features
from racko_env.rules import deck_size
from train.common.progress import Phase


def policy_inputs(obs: np.ndarray, num_players: int) -> np.ndarray:
    """``[observation | features]`` rows, the structured policy's input with its features computed
    once (the compiled kernel; ``train.sb3.feature_cache`` does the same for PPO)."""
    obs = np.asarray(obs, dtype=np.float32)
    slots, glob = rack_features(obs, deck_size(num_players))
    return np.concatenate([obs, slots.reshape(len(obs), -1), glob], axis=1)


def collect(
    player: Any,
    teacher: Any,
    decisions: int,
    seed: int,
    num_players: int,
    rules: dict[str, Any],
    opponent: str = "expert",
    n_envs: int = 256,
    progress: Phase | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """``decisions`` (observation, mask, teacher's action) rows of the learner seat, and counts.

    ``player`` and ``teacher`` are batch policies (``act_batch``): the player's moves are played,
    the teacher's are recorded. Decisions with one legal move teach nothing and are skipped.
    ``agreed`` counts the recorded rows where the player already chose the teacher's move.
    """
    from train.sb3.vec_env import RackoVecEnv

    env = RackoVecEnv(n_envs, num_players, opponents=[opponent], seed=seed, **rules)
    obs = env.reset()
    xs, ms, ys = [], [], []
    total, agreed, rounds = 0, 0, 0
    while total < decisions:
        masks = env.action_masks()
        rows = np.flatnonzero(masks.sum(axis=1) > 1)
        played = np.asarray(player.act_batch(obs, masks), dtype=np.int64)
        if rows.size:
            rows = rows[: decisions - total]
            label = np.asarray(teacher.act_batch(obs[rows], masks[rows]), dtype=np.int64)
            xs.append(obs[rows].copy())
            ms.append(masks[rows].copy())
            ys.append(label)
            agreed += int((label == played[rows]).sum())
            total += len(rows)
            if progress is not None:
                progress.advance(len(rows))
        obs, _, dones, _ = env.step(played)
        rounds += int(np.sum(dones))
    env.close()
    info = {"decisions": total, "player_agreed": agreed, "rounds_finished": rounds}
    return np.concatenate(xs), np.concatenate(ms), np.concatenate(ys), info
