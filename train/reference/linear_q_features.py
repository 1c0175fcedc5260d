"""Linear Q-learning on the feature observation, in one file of numpy: a reference to read.

    python train/reference/linear_q_features.py --total-steps 150000 --opponent heuristic --out runs/linq

The learner plays one seat of ``--num-envs`` games at once against a bot (the racko vector env,
``racko/Racko-v1`` on the batched engine), observing the structured features
(``agents.feature_obs.FeatureObservationVector``: per slot the card, its neighbours, the planner's
cost of the rack with the decision card put there, ...; then the global columns).
Q(s, a) is linear in a per-action feature vector phi(s, a), and the slots share their weights:

- slot action i (put the card into slot i) reads slot i's block of columns and the global
  columns: one weight vector scores every slot, because each block has the same columns;
- each other action (draw, take the discard, keep, discard) has its own weights over the global
  columns.

Training is Watkins' Q-learning with semi-gradient updates (one per step, the mean over the
games' transitions; the step size decays linearly to 0), epsilon-greedy over the legal actions
(epsilon decays linearly), reward +1 / -1 for winning / losing the round, plus potential-based
shaping on the rack's plan cost (``--shaping``; 0 turns it off). At the end the greedy
policy is evaluated in duplicate rounds (every deal in both seatings, 95% Wilson intervals)
against each ``--eval-opponents`` bot, and OUT gets ``linear_q.npz`` (the weights; load them with
``LinearQ.load``) and ``metrics.json``: that, the games, the shaping potential and the progress
line are ``train.common.feature_runs``, shared with the DQN. Same ``--seed``, same run.
Docs: ``docs/training/features.md``.
"""

from __future__ import annotations

import io
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents.feature_obs import features_of
from agents.features import GLOBAL_FEATURES, RACK_SIZE, SLOT_FEATURES
from racko_env.actions import NUM_ACTIONS
from racko_env.files import write_bytes_atomic
from train.common.feature_runs import bot_problem, finish, make_envs, potential, progress
from train.common.flags import parse_dataclass


@dataclass
class Args:
    """Every setting of a run; each field is also a command-line flag (``--total-steps``)."""

    seed: int = 1
    num_players: int = 2
    opponent: str = "heuristic"
    """the bot the learner trains against ('random', 'heuristic', 'expert', a bot file)"""
    total_steps: int = 150_000
    """learner decisions to train on"""
    num_envs: int = 32
    """games played side by side (one decision in each per step)"""
    alpha: float = 0.003
    """step size of the semi-gradient update (of the mean over a step's transitions)"""
    gamma: float = 0.99
    shaping: float = 1.0
    """potential-based shaping: + shaping * (gamma * Phi(s') - Phi(s)), Phi = -scaled plan cost
    (0: the win reward alone, which learns far more slowly)"""
    target_every: int = 0
    """updates between copies of w into the target weights the bootstrap reads (0: w itself)"""
    eps_start: float = 0.3
    eps_end: float = 0.02
    eps_fraction: float = 0.5
    """fraction of the run over which epsilon decays from eps_start to eps_end"""
    eval_rounds: int = 1000
    """duplicate deals against each evaluation opponent at the end (0: skip)"""
    eval_opponents: str = "heuristic,expert"
    out: str = ""
    """folder for linear_q.npz and metrics.json (empty: write nothing)"""
    quiet: bool = False


def parse_args(argv: list[str] | None = None) -> Args:
    """The settings from the command line, a flag per field of ``Args`` (``train.common.flags``)."""
    return parse_dataclass(
        Args,
        "python train/reference/linear_q_features.py",
        __doc__.split("\n")[0],
        argv,
        check_args,
    )


def check_args(args: Args) -> str | None:
    """A one-line description of the first bad setting, or None."""
    if args.num_players not in (2, 3, 4):
        return f"--num-players must be 2, 3 or 4, got {args.num_players}"
    if args.total_steps < 1 or args.num_envs < 1:
        return "--total-steps and --num-envs must be at least 1"
    if not 0 < args.alpha < 1 or not 0 <= args.gamma <= 1:
        return "--alpha must be in (0, 1) and --gamma in [0, 1]"
    if not (0 <= args.eps_end <= 1 and 0 <= args.eps_start <= 1 and 0 < args.eps_fraction <= 1):
        return "--eps-start and --eps-end must be in [0, 1], --eps-fraction in (0, 1]"
    if args.eval_rounds < 0:
        return f"--eval-rounds must be 0 or more, got {args.eval_rounds}"
    return bot_problem(args)


# ----------------------------------------------------------------------------- the Q function

SLOT_WIDTH = SLOT_FEATURES + GLOBAL_FEATURES + 1  # a slot's block, the globals, a bias
OTHER_WIDTH = GLOBAL_FEATURES + 1  # the globals, a bias
OTHERS = NUM_ACTIONS - RACK_SIZE  # draw, take the discard, keep, discard
NUM_WEIGHTS = SLOT_WIDTH + OTHERS * OTHER_WIDTH


def action_features(feats: np.ndarray) -> np.ndarray:
    """Feature rows (B, FEATURE_SIZE) -> phi (B, 14, NUM_WEIGHTS): Q(s, a) = phi[a] @ w.

    Slot actions fill the first SLOT_WIDTH columns (shared weights); other action k fills its own
    OTHER_WIDTH columns after them, so each has its own weights.
    """
    b = len(feats)
    slots = feats[:, : RACK_SIZE * SLOT_FEATURES].reshape(b, RACK_SIZE, SLOT_FEATURES)
    glob = feats[:, RACK_SIZE * SLOT_FEATURES :]
    phi = np.zeros((b, NUM_ACTIONS, NUM_WEIGHTS), dtype=np.float64)
    phi[:, :RACK_SIZE, :SLOT_FEATURES] = slots
    phi[:, :RACK_SIZE, SLOT_FEATURES : SLOT_WIDTH - 1] = glob[:, None, :]
    phi[:, :RACK_SIZE, SLOT_WIDTH - 1] = 1.0
    for k in range(OTHERS):
        start = SLOT_WIDTH + k * OTHER_WIDTH
        phi[:, RACK_SIZE + k, start : start + GLOBAL_FEATURES] = glob
        phi[:, RACK_SIZE + k, start + GLOBAL_FEATURES] = 1.0
    return phi


def greedy(q: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The legal action with the highest Q per row (the lowest id on ties)."""
    return np.where(masks.astype(bool), q, -np.inf).argmax(axis=-1)


class LinearQ(agents.Bot):
    """The greedy policy of weights ``w`` as a bot: ``act`` for one seat (the AEC env's dict),
    ``act_batch`` for many (``racko_eval.play_duplicate``), both from the raw observation."""

    name = "linear_q"

    def __init__(self, w: np.ndarray, num_cards: int) -> None:
        self.w, self.num_cards = np.asarray(w, dtype=np.float64), int(num_cards)

    def q_values(self, feats: np.ndarray) -> np.ndarray:
        return action_features(feats) @ self.w

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return greedy(self.q_values(features_of(obs, self.num_cards)), masks)

    def act(self, observation: dict[str, Any]) -> int:
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        return int(self.act_batch(obs, np.asarray(observation["action_mask"])[None])[0])

    def save(self, path: Path) -> None:
        """The weights as ``.npz``, written atomically (``LinearQ.load`` reads it, no pickle)."""
        data = io.BytesIO()
        np.savez(data, w=self.w, num_cards=self.num_cards)
        write_bytes_atomic(path, data.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> LinearQ:
        with np.load(path, allow_pickle=False) as data:
            return cls(data["w"], int(data["num_cards"]))


# ----------------------------------------------------------------------------- training


def train(args: Args) -> tuple[LinearQ, dict[str, Any]]:
    """Q-learning for ``total_steps`` learner decisions; returns the greedy bot and the history.

    Each step plays one decision in every game and makes one update from all their transitions
    (the mean of their semi-gradients). A game whose episode ended on the last step is being
    dealt again on this one: its action is ignored and it gives no transition.
    """
    rng = np.random.default_rng(args.seed)
    envs = make_envs(args)
    w = np.zeros(NUM_WEIGHTS)
    w_target = w.copy()
    obs, info = envs.reset(seed=args.seed)
    phi, mask, last_obs = action_features(obs), info["action_mask"], obs
    restarting = np.zeros(args.num_envs, dtype=bool)
    rows = np.arange(args.num_envs)
    returns: list[float] = []
    history: list[dict[str, float]] = []
    episode_return = np.zeros(args.num_envs)
    start, step, next_report, updates = time.time(), 0, 0, 0
    while step < args.total_steps:
        frac = min(step / (args.eps_fraction * args.total_steps), 1.0)
        eps = args.eps_start + frac * (args.eps_end - args.eps_start)
        actions = greedy(phi @ w, mask)
        explore = rng.random(args.num_envs) < eps
        for i in np.flatnonzero(explore & mask.any(axis=1)):
            actions[i] = rng.choice(np.flatnonzero(mask[i]))
        obs, reward, terminated, truncated, info = envs.step(actions)
        next_phi, next_mask = action_features(obs), info["action_mask"]
        done = terminated | truncated  # the turn limit is part of the game: no bootstrap either
        live = ~restarting
        q = np.einsum("bk,k->b", phi[rows, actions], w)
        bootstrap = w_target if args.target_every else w
        best_next = np.where(next_mask, next_phi @ bootstrap, -np.inf).max(axis=1)
        target = reward + args.gamma * np.where(done, 0.0, best_next)
        if args.shaping:  # Ng, Harada and Russell (1999): the best policy stays the same
            phi_next = np.where(done, 0.0, potential(obs))
            target += args.shaping * (args.gamma * phi_next - potential(last_obs))
        delta = np.where(live, target - q, 0.0)
        alpha = args.alpha * (1.0 - step / args.total_steps)  # decays linearly to 0
        w += alpha * (delta @ phi[rows, actions]) / max(live.sum(), 1)
        updates += 1
        if args.target_every and updates % args.target_every == 0:
            w_target = w.copy()
        episode_return += reward
        for i in np.flatnonzero(done & live):
            returns.append(float(episode_return[i]))
        episode_return[done] = 0.0
        step += int(live.sum())
        restarting = done
        phi, mask, last_obs = next_phi, next_mask, obs
        if step >= next_report:
            next_report += max(args.total_steps // 10, 1)
            progress(history, returns, step, eps, start, args.quiet)
    envs.close()
    return LinearQ(w, envs.num_cards), {"history": history, "seconds": time.time() - start}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    bot, training = train(args)

    def save(out: Path) -> Path:
        bot.save(out / "linear_q.npz")
        return out / "linear_q.npz"

    return finish(args, bot, training, save)


if __name__ == "__main__":
    sys.exit(main())
