"""Masked DQN on the feature observation, in one file of plain PyTorch (CleanRL style).

    python train/reference/dqn_features.py --total-steps 300000 --opponent heuristic --out runs/dqn

Everything a DQN needs is on this page, top to bottom: the racko vector env observing the
structured features (``agents.feature_obs.FeatureObservationVector``, one row of ``FEATURE_SIZE``
columns per game), a Q-network, a replay buffer, epsilon-greedy exploration over the legal
actions, the double-DQN target with a target network. What it shares with the linear learner and
is not DQN is in ``train.common.feature_runs``: the games, the shaping potential, the progress
line, and at the end a duplicate evaluation against each ``--eval-opponents`` bot with 95%
intervals and the run's files. Docs: ``docs/training/features.md``.

The Q-network, ``--network``:

- ``slots`` (default): the features' layout used as the network's shape. Every slot's block has
  the same columns, so one small MLP reads [slot i's block, the global columns] and gives the
  Q-value of putting the card into slot i, for all ten slots with the same weights; another MLP
  reads the global columns and gives the Q-values of drawing, taking the discard, keeping and
  discarding.
- ``flat``: a plain MLP from all columns to the 14 Q-values, the generic learner's choice.

Illegal actions never get picked: their Q-values are pushed to -inf before every argmax and max
(acting, and the target's max over the next state's legal actions). The reward is +1 / -1 for
winning / losing the round; the turn limit, part of the game, ends an episode like a win or loss.
Same ``--seed``, same run (``torch.set_num_threads(1)``).
"""

from __future__ import annotations

import io
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

import agents
from agents.feature_obs import FEATURE_SIZE, features_of
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
    network: str = "slots"
    """'slots': one MLP shared by the ten slot actions; 'flat': one MLP over every column"""
    total_steps: int = 150_000
    """learner decisions (transitions) to train on"""
    num_envs: int = 32
    """games played side by side (one decision in each per step)"""
    buffer_size: int = 100_000
    batch_size: int = 128
    learning_rate: float = 5e-4
    gamma: float = 0.99
    hidden: int = 64
    """width of the hidden layers"""
    learning_starts: int = 5_000
    """transitions collected before the first gradient step"""
    train_every: int = 1
    """env steps (of num_envs decisions) between gradient steps"""
    target_every: int = 500
    """gradient steps between copies of the network into the target network"""
    shaping: float = 1.0
    """potential-based shaping: + shaping * (gamma * Phi(s') - Phi(s)), Phi = -scaled plan cost
    (0: the win reward alone, which learns far more slowly)"""
    eps_start: float = 1.0
    eps_end: float = 0.05
    eps_fraction: float = 0.3
    """fraction of the run over which epsilon decays from eps_start to eps_end"""
    eval_rounds: int = 1000
    """duplicate deals against each evaluation opponent at the end (0: skip)"""
    eval_opponents: str = "heuristic,expert"
    out: str = ""
    """folder for dqn.pt (the network's weights) and metrics.json (empty: write nothing)"""
    quiet: bool = False


def parse_args(argv: list[str] | None = None) -> Args:
    """The settings from the command line, a flag per field of ``Args`` (``train.common.flags``)."""
    return parse_dataclass(
        Args, "python train/reference/dqn_features.py", __doc__.split("\n")[0], argv, check_args
    )


def check_args(args: Args) -> str | None:
    """A one-line description of the first bad setting, or None."""
    if args.num_players not in (2, 3, 4):
        return f"--num-players must be 2, 3 or 4, got {args.num_players}"
    if args.network not in ("slots", "flat"):
        return f"--network must be 'slots' or 'flat', got {args.network!r}"
    counts = ("total_steps", "num_envs", "buffer_size", "batch_size", "hidden", "train_every")
    for name in (*counts, "target_every"):  # every count must be 1 or more
        if getattr(args, name) < 1:
            return f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}"
    if not 0 <= args.gamma <= 1 or not 0 <= args.eps_end <= args.eps_start <= 1:
        return "--gamma must be in [0, 1] and 0 <= --eps-end <= --eps-start <= 1"
    if not 0 < args.eps_fraction <= 1 or args.eval_rounds < 0 or args.learning_starts < 0:
        return "--eps-fraction must be in (0, 1]; --eval-rounds, --learning-starts >= 0"
    return bot_problem(args)


# ----------------------------------------------------------------------------- the Q-network

SLOT_COLUMNS = RACK_SIZE * SLOT_FEATURES  # the slot blocks come first, then the global columns


def mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, outputs),
    )  # fmt: skip


class SlotQNetwork(nn.Module):
    """Q-values (B, 14) of feature rows (B, FEATURE_SIZE): slot i's value from [slot i's block,
    the global columns] through one MLP shared by the slots; the other four from the globals."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.slot = mlp(SLOT_FEATURES + GLOBAL_FEATURES, hidden, 1)
        self.other = mlp(GLOBAL_FEATURES, hidden, NUM_ACTIONS - RACK_SIZE)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        slots = x[:, :SLOT_COLUMNS].reshape(-1, RACK_SIZE, SLOT_FEATURES)
        glob = x[:, SLOT_COLUMNS:]
        pairs = torch.cat([slots, glob[:, None, :].expand(-1, RACK_SIZE, -1)], dim=2)
        return torch.cat([self.slot(pairs).squeeze(-1), self.other(glob)], dim=1)


def make_network(kind: str, hidden: int) -> nn.Module:
    return SlotQNetwork(hidden) if kind == "slots" else mlp(FEATURE_SIZE, hidden, NUM_ACTIONS)


def masked(q: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Q-values with every illegal action at -inf (so argmax and max see legal ones only)."""
    return q.masked_fill(~mask, -torch.inf)


class DQNBot(agents.Bot):
    """The greedy policy of a Q-network as a bot: ``act`` for one seat (the AEC env's dict),
    ``act_batch`` for many (``racko_eval.play_duplicate``), both from the raw observation."""

    name = "dqn_features"

    def __init__(self, network: nn.Module, num_cards: int) -> None:
        self.network, self.num_cards = network, int(num_cards)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        feats = torch.as_tensor(features_of(obs, self.num_cards))
        with torch.no_grad():
            q = masked(self.network(feats), torch.as_tensor(np.asarray(masks, dtype=bool)))
        return q.argmax(dim=1).numpy()

    def act(self, observation: dict[str, Any]) -> int:
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        return int(self.act_batch(obs, np.asarray(observation["action_mask"])[None])[0])


# ----------------------------------------------------------------------------- replay buffer


class ReplayBuffer:
    """The last ``size`` transitions: features, action, reward, next features and mask, done."""

    def __init__(self, size: int) -> None:
        self.size, self.count, self.at = size, 0, 0
        self.obs = np.zeros((size, FEATURE_SIZE), dtype=np.float32)
        self.next_obs = np.zeros((size, FEATURE_SIZE), dtype=np.float32)
        self.next_mask = np.zeros((size, NUM_ACTIONS), dtype=bool)
        self.action = np.zeros(size, dtype=np.int64)
        self.reward = np.zeros(size, dtype=np.float32)
        self.done = np.zeros(size, dtype=np.float32)

    def add(self, obs, action, reward, next_obs, next_mask, done) -> None:  # noqa: ANN001
        for i in range(len(obs)):
            j = self.at
            self.obs[j], self.action[j], self.reward[j] = obs[i], action[i], reward[i]
            self.next_obs[j], self.next_mask[j], self.done[j] = next_obs[i], next_mask[i], done[i]
            self.at = (self.at + 1) % self.size
            self.count = min(self.count + 1, self.size)

    def sample(self, batch: int, rng: np.random.Generator) -> list[torch.Tensor]:
        j = rng.integers(self.count, size=batch)
        parts = (self.obs, self.action, self.reward, self.next_obs, self.next_mask, self.done)
        return [torch.as_tensor(p[j]) for p in parts]


# ----------------------------------------------------------------------------- training


def train(args: Args) -> tuple[DQNBot, dict[str, Any]]:
    """DQN for ``total_steps`` learner decisions; returns the greedy bot and the history."""
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    envs = make_envs(args)
    q_net = make_network(args.network, args.hidden)
    target = make_network(args.network, args.hidden)
    target.load_state_dict(q_net.state_dict())
    optimizer = torch.optim.Adam(q_net.parameters(), lr=args.learning_rate)
    buffer = ReplayBuffer(args.buffer_size)
    obs, info = envs.reset(seed=args.seed)
    mask = info["action_mask"]
    restarting = np.zeros(args.num_envs, dtype=bool)
    episode_return = np.zeros(args.num_envs)
    returns: list[float] = []
    history: list[dict[str, float]] = []
    start, step, updates, tick, next_report, loss = time.time(), 0, 0, 0, 0, 0.0
    while step < args.total_steps:
        frac = min(step / (args.eps_fraction * args.total_steps), 1.0)
        eps = args.eps_start + frac * (args.eps_end - args.eps_start)
        with torch.no_grad():
            q = masked(q_net(torch.as_tensor(obs)), torch.as_tensor(mask))
        actions = q.argmax(dim=1).numpy()
        explore = (rng.random(args.num_envs) < eps) & mask.any(axis=1)
        for i in np.flatnonzero(explore):
            actions[i] = rng.choice(np.flatnonzero(mask[i]))
        next_obs, reward, terminated, truncated, info = envs.step(actions)
        next_mask = info["action_mask"]
        done = terminated | truncated
        live = np.flatnonzero(~restarting)  # a game being dealt again gives no transition
        learn = reward.copy()
        if args.shaping:  # Ng, Harada and Russell (1999): the best policy stays the same
            phi_next = np.where(done, 0.0, potential(next_obs))
            learn += args.shaping * (args.gamma * phi_next - potential(obs))
        buffer.add(
            obs[live], actions[live], learn[live], next_obs[live], next_mask[live], done[live]
        )
        episode_return += reward
        returns += episode_return[done & ~restarting].tolist()
        episode_return[done] = 0.0
        step += len(live)
        tick += 1
        restarting, obs, mask = done, next_obs, next_mask

        if (
            buffer.count >= max(args.learning_starts, args.batch_size)
            and tick % args.train_every == 0
        ):
            b_obs, b_act, b_rew, b_next, b_next_mask, b_done = buffer.sample(args.batch_size, rng)
            with torch.no_grad():  # double DQN: the online net picks, the target net values
                best = masked(q_net(b_next), b_next_mask).argmax(dim=1, keepdim=True)
                next_q = target(b_next).gather(1, best).squeeze(1)
                next_q = torch.where(b_next_mask.any(dim=1), next_q, torch.zeros_like(next_q))
                y = b_rew + args.gamma * (1.0 - b_done) * next_q
            q_taken = q_net(b_obs).gather(1, b_act[:, None]).squeeze(1)
            loss_t = nn.functional.smooth_l1_loss(q_taken, y)
            optimizer.zero_grad()
            loss_t.backward()
            nn.utils.clip_grad_norm_(q_net.parameters(), 10.0)
            optimizer.step()
            loss = float(loss_t.detach())
            updates += 1
            if updates % args.target_every == 0:
                target.load_state_dict(q_net.state_dict())

        if step >= next_report:
            next_report += max(args.total_steps // 10, 1)
            progress(history, returns, step, eps, start, args.quiet, loss=loss)
    envs.close()
    return DQNBot(q_net, envs.num_cards), {"history": history, "seconds": time.time() - start}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    bot, training = train(args)

    def save(out: Path) -> Path:
        data = io.BytesIO()
        torch.save(bot.network.state_dict(), data)  # load with torch.load(weights_only=True)
        write_bytes_atomic(out / "dqn.pt", data.getvalue())
        return out / "dqn.pt"

    return finish(args, bot, training, save)


if __name__ == "__main__":
    sys.exit(main())
