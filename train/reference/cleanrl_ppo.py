"""Masked PPO for Rack-O in one file, in plain PyTorch (CleanRL style): a reference to read.

    python train/reference/cleanrl_ppo.py --total-timesteps 200000 --opponent heuristic --out runs/cleanrl

Everything a PPO needs is on this page, top to bottom, with no RL library: the PettingZoo AEC env
(``racko_v1``), an actor-critic network, invalid-action masking through the logits, rollouts of
whole rounds, generalized advantage estimation (GAE), the clipped surrogate objective, and at the
end an ONNX bot file (``bot.onnx`` + ``bot.json``, the same format ``train/sb3/export.py`` writes)
evaluated against a baseline in a duplicate tournament with 95% intervals. ``train/ppo.py`` is
the full trainer (SB3's MaskablePPO, batched envs, checkpoints); this file is for learning how it
works. Docs: ``docs/training/cleanrl.md``.

Turn-based multi-agent PPO, the way this file does it: every seat the learner controls has its
own trajectory (its own decisions, in order). A reward the env hands a seat between two of its
decisions belongs to the earlier decision. With ``--opponent self`` the one network plays every
seat and learns from all of them (self-play); with a bot name it plays one seat (rotating from
round to round) against that bot.

``--num-players 1`` is full-size solitaire (``racko/RackoSolitaire-v0``, -1 per turn) with one
seat; its bot file plays solitaire only, its evaluation compares mean turns with
``--eval-opponent``'s on the same deals (the ladder's step 2: ``docs/coursework/ladder.md``).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

import agents
from racko_env import racko_v1
from racko_env.actions import NUM_ACTIONS
from racko_env.files import write_text_atomic
from racko_env.observation import OBS_SIZE
from racko_env.rules import deck_size
from racko_env.solitaire_env import RackoSolitaireEnv, mean_ci95, play_turns
from train.common.flags import parse_dataclass
from train.common.snapshot import MASKED_LOGIT

SOLITAIRE = {"rack_size": 10, "deck_size": 40}  # --num-players 1: full-size solitaire


@dataclass
class Args:
    """Every setting of a run; each field is also a command-line flag (``--total-timesteps``)."""

    seed: int = 1
    """seed of everything: network init, deals, sampling, the evaluation"""
    num_players: int = 2
    """players per table (2-4), or 1: full-size solitaire (-1 per turn; no opponent, no reward)"""
    opponent: str = "heuristic"
    """'self' for self-play, or a bot spec to train against ('random', 'heuristic', 'expert')"""
    reward: str = "score"
    """'score': round points / 75 for every seat (denser), or 'win': zero-sum +1 / -1"""
    turn_limit: int = 400
    """turns after which a round without Rack-O is cut off (small values make smoke runs fast)"""
    shaping: float = 0.0
    """potential-based shaping: + shaping * (change of the mover's zone potential) per move"""
    turn_cost: float = 0.1
    """solitaire: the learner's reward per turn is -turn_cost (the env's -1, scaled down)"""
    total_timesteps: int = 200_000
    """learner decisions to train on"""
    num_envs: int = 8
    """AEC envs played side by side (the network acts for all of them in one forward pass)"""
    rollout_steps: int = 2048
    """learner decisions per update (a rollout is whole rounds, so a few more are collected)"""
    learning_rate: float = 3e-4
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over the run"""
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 128
    """width of the two hidden layers of the actor and of the critic"""
    eval_rounds: int = 200
    """duplicate deals against --eval-opponent at the end (0: skip)"""
    eval_opponent: str = "heuristic"
    export_check: int = 300
    """observations on which the ONNX bot must pick the network's own action"""
    out: str = ""
    """folder for bot.onnx, bot.json and metrics.json (empty: write nothing)"""
    tensorboard: bool = False
    """log to OUT/tb (needs --out)"""
    torch_threads: int = 1
    quiet: bool = False


def parse_args(argv: list[str] | None = None) -> Args:
    """The settings from the command line, a flag per field of ``Args`` (``train.common.flags``)."""
    return parse_dataclass(
        Args, "python train/reference/cleanrl_ppo.py", __doc__.split("\n")[0], argv, check_args
    )


def check_args(args: Args) -> str | None:
    """A one-line description of the first bad setting, or None."""
    if args.num_players not in (1, 2, 3, 4):
        return f"--num-players must be 2, 3 or 4 (or 1: solitaire), got {args.num_players}"
    if args.reward not in ("score", "win"):
        return f"--reward must be 'score' or 'win', got {args.reward!r}"
    for name in ("total_timesteps", "num_envs", "rollout_steps", "num_minibatches", "hidden"):
        if getattr(args, name) < 1:
            return f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}"
    if args.shaping < 0 or args.turn_limit < 1:
        return f"--shaping must be 0+ and --turn-limit 1+, got {args.shaping}, {args.turn_limit}"
    if args.eval_rounds < 0 or args.export_check < 0:
        return "--eval-rounds and --export-check must be 0 or more"
    if args.tensorboard and not args.out:
        return "--tensorboard needs --out (the logs go to OUT/tb)"
    if args.opponent != "self" and args.num_players > 1:
        try:
            agents.load(args.opponent, args.num_players)
        except (ValueError, FileNotFoundError) as err:
            return f"--opponent: {err}"
    return None


# ----------------------------------------------------------------------------- the network


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    """Orthogonal weights, constant bias: the initialization CleanRL's PPO uses."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    """Separate actor and critic MLPs over the observation vector (``OBS_SIZE`` or ``width``)."""

    def __init__(self, hidden: int = 128, width: int = OBS_SIZE) -> None:
        super().__init__()

        def mlp(outputs: int, std: float) -> nn.Sequential:  # width -> hidden -> hidden -> outputs
            return nn.Sequential(
                *(layer_init(nn.Linear(width, hidden)), nn.Tanh()),
                *(layer_init(nn.Linear(hidden, hidden)), nn.Tanh()),
                layer_init(nn.Linear(hidden, outputs), std=std),
            )

        self.critic, self.actor = mlp(1, 1.0), mlp(NUM_ACTIONS, 0.01)

    def get_value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Invalid-action masking: illegal actions get a logit so low their probability is 0.

        Masking the logits (not the sampled action) keeps the log-probabilities and the entropy
        those of the distribution the agent really samples from, so the PPO ratio stays right.
        """
        return torch.where(mask, self.actor(obs), torch.tensor(MASKED_LOGIT))

    def get_action_and_value(
        self, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        dist = Categorical(logits=self.masked_logits(obs, mask))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.get_value(obs)

    def greedy(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The most likely legal action per row: how the exported bot plays."""
        with torch.no_grad():
            logits = self.masked_logits(torch.as_tensor(obs), torch.as_tensor(mask, dtype=bool))
        return logits.argmax(dim=1).numpy()


class TorchBot(agents.Bot):
    """The trained network as a bot (greedy), for evaluating without exporting."""

    def __init__(self, agent: Agent, name: str = "cleanrl_ppo") -> None:
        self.agent, self.name = agent, name

    def act(self, observation: dict[str, Any]) -> int:
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        mask = np.asarray(observation["action_mask"], dtype=bool)[None]
        return int(self.agent.greedy(obs, mask)[0])


# ----------------------------------------------------------------------------- rollouts


def zone_potential(rack: list[int], num_cards: int) -> float:
    """How close each card is to its home slot (card c of N belongs in slot (c-1)*10//N): 0-1.
    Shaping with the change of a potential (Ng, Harada and Russell, 1999) leaves the best policy
    unchanged while giving a signal on every move instead of only at the end of the round."""
    k = len(rack)
    return sum(1 - abs(i - (c - 1) * k // num_cards) / (k - 1) for i, c in enumerate(rack)) / k


@dataclass
class Trajectory:
    """One seat's decisions in one round, and what followed each of them."""

    obs: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)


class Table:
    """One AEC env and who sits where: learner seats (the network) and bot seats."""

    def __init__(self, args: Args, index: int) -> None:
        self.args, self.index = args, index
        kwargs = {"num_players": args.num_players, "reward": args.reward}
        self.env = racko_v1.raw_env(**kwargs, turn_limit=args.turn_limit)
        self.num_cards, self.width = deck_size(args.num_players), OBS_SIZE
        self.episodes = 0
        self.bots: dict[int, agents.Bot] = {}
        if args.opponent != "self":
            for seat in range(args.num_players):
                self.bots[seat] = agents.load(
                    args.opponent, args.num_players, seed=args.seed + 1000 * index + seat
                )

    def new_round(self, seed: int) -> None:
        """Deal a round; against a bot the learner's seat rotates from round to round."""
        self.env.reset(seed=seed)
        n = self.args.num_players
        if self.args.opponent == "self":
            self.learner_seats = set(range(n))
        else:
            self.learner_seats = {(self.index + self.episodes) % n}
            for bot in self.bots.values():
                bot.reset()
        self.episodes += 1
        self.open = {seat: Trajectory() for seat in self.learner_seats}
        self.done = False
        self.returns = dict.fromkeys(self.learner_seats, 0.0)
        self.credited = dict.fromkeys(self.learner_seats, 0.0)  # shaping * gamma * phi(s') paid

    def seat_on_turn(self) -> int:
        return self.env.agent_name_mapping[self.env.agent_selection]

    def observe(self, seat: int) -> dict[str, np.ndarray]:
        return self.env.observe(self.env.possible_agents[seat])

    def step(self, action: int) -> None:
        """Play one decision, and hand each learner seat the rewards the env gave it."""
        env = self.env
        mover = self.seat_on_turn()
        shaped = self.args.shaping > 0 and mover in self.learner_seats
        before = zone_potential(env.game.racks[mover], self.num_cards) if shaped else 0.0
        env.step(action)
        ended = all(env.terminations[a] or env.truncations[a] for a in env.possible_agents)
        if shaped:  # only the mover's rack changed; the shaping is not part of the return
            # gamma * phi(s') - phi(s), with phi = 0 once the round is over: over a seat's whole
            # trajectory the shaped terms sum to -phi(s0), so the best policy stays the same
            after = 0.0 if ended else zone_potential(env.game.racks[mover], self.num_cards)
            self.credited[mover] = self.args.shaping * self.args.gamma * after
            self.open[mover].rewards[-1] += self.credited[mover] - self.args.shaping * before
        if ended:  # whoever ended the round, phi = 0 there: take back what was paid for phi(s')
            for seat in self.learner_seats:
                if self.open[seat].rewards:
                    self.open[seat].rewards[-1] -= self.credited[seat]
                self.credited[seat] = 0.0
        for seat in self.learner_seats:
            r = float(env.rewards[env.possible_agents[seat]])
            self.returns[seat] += r
            traj = self.open[seat]
            if traj.rewards:  # a reward before a seat's first decision has no decision to credit
                traj.rewards[-1] += r
        self.done = ended


class SolitaireTable(Table):
    """Full-size solitaire (``racko/RackoSolitaire-v0``): one learner seat, -1 per turn."""

    def __init__(self, args: Args, index: int) -> None:
        self.args, self.index, self.bots = args, index, {}
        self.env = RackoSolitaireEnv(**SOLITAIRE, turn_limit=args.turn_limit)
        self.num_cards, self.width = 40, self.env.observation_space.shape[0]

    def new_round(self, seed: int) -> None:
        self.view, self.info = self.env.reset(seed=seed)
        self.learner_seats, self.open = {0}, {0: Trajectory()}
        self.done, self.returns, self.credited = False, {0: 0.0}, {0: 0.0}

    def seat_on_turn(self) -> int:
        return 0

    def observe(self, seat: int) -> dict[str, np.ndarray]:
        return {"observation": self.view, "action_mask": self.info["action_mask"]}

    def step(self, action: int) -> None:
        """Play one decision; reward: the env's -1 per turn times ``turn_cost``, plus ``shaping`` x
        the change of the zone potential (1 at Rack-O): summed over a round that ends in Rack-O,
        1 - phi(deal) whatever the play, but a cut-off round is paid for its progress."""
        game = self.env.game
        before = zone_potential(game.racks[0], self.num_cards)
        self.view, reward, terminated, truncated, self.info = self.env.step(action)
        after = 1.0 if terminated else zone_potential(game.racks[0], self.num_cards)
        bonus = self.args.shaping * (after - before)
        self.open[0].rewards[-1] += float(reward) * self.args.turn_cost + bonus
        self.returns[0] += float(reward)  # reported as the env pays it: minus the turns
        self.done = terminated or truncated


def collect_rollout(
    agent: Agent, tables: list[Table], args: Args, rng: np.random.Generator
) -> tuple[list[Trajectory], list[float]]:
    """Play whole rounds on every table until ``rollout_steps`` learner decisions are in.

    Each tick, every table whose player on turn is a learner seat gets its action from one
    batched forward pass; bot seats move on their own. A table that finishes starts a new round
    only while more decisions are wanted, so the rollout ends with every round complete.
    """
    finished: list[Trajectory] = []
    returns: list[float] = []
    collected = 0
    for table in tables:
        table.new_round(int(rng.integers(2**31)))
    active = list(tables)
    while active:
        for table in active:  # bots move until a learner seat is on turn (or the round ends)
            while not table.done and table.seat_on_turn() not in table.learner_seats:
                seat = table.seat_on_turn()
                table.step(table.bots[seat].act(table.observe(seat)))
        waiting = [t for t in active if not t.done]
        if waiting:
            seats = [t.seat_on_turn() for t in waiting]
            views = [t.observe(s) for t, s in zip(waiting, seats, strict=True)]
            obs = np.stack([v["observation"] for v in views])
            masks = np.stack([v["action_mask"].astype(bool) for v in views])
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(
                    torch.as_tensor(obs), torch.as_tensor(masks)
                )
            for i, (table, seat) in enumerate(zip(waiting, seats, strict=True)):
                traj = table.open[seat]
                traj.obs.append(obs[i])
                traj.masks.append(masks[i])
                traj.actions.append(int(action[i]))
                traj.logprobs.append(float(logprob[i]))
                traj.values.append(float(value[i]))
                traj.rewards.append(0.0)
                table.step(int(action[i]))
                collected += 1
        still = []
        for table in active:
            if table.done:
                finished.extend(t for t in table.open.values() if t.actions)
                returns.extend(table.returns.values())
                if collected < args.rollout_steps:
                    table.new_round(int(rng.integers(2**31)))
                    still.append(table)
            else:
                still.append(table)
        active = still
    return finished, returns


def compute_gae(traj: Trajectory, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns of one complete trajectory (its value after the end is 0)."""
    values = np.asarray(traj.values, dtype=np.float32)
    rewards = np.asarray(traj.rewards, dtype=np.float32)
    advantages = np.zeros_like(values)
    last = 0.0
    for t in reversed(range(len(values))):
        next_value = values[t + 1] if t + 1 < len(values) else 0.0
        delta = rewards[t] + gamma * next_value - values[t]
        last = delta + gamma * lam * last
        advantages[t] = last
    return advantages, advantages + values


# ----------------------------------------------------------------------------- training


def train(args: Args) -> tuple[Agent, dict[str, Any]]:
    """Run PPO; returns the trained agent and the training history."""
    torch.set_num_threads(args.torch_threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    kind = SolitaireTable if args.num_players == 1 else Table
    tables = [kind(args, i) for i in range(args.num_envs)]
    agent = Agent(args.hidden, tables[0].width)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    writer = None
    if args.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(Path(args.out) / "tb"))
    history: list[dict[str, float]] = []
    global_step, start = 0, time.time()
    while global_step < args.total_timesteps:
        if args.anneal_lr:
            frac = 1.0 - global_step / args.total_timesteps
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        trajectories, returns = collect_rollout(agent, tables, args, rng)
        parts = [compute_gae(t, args.gamma, args.gae_lambda) for t in trajectories]
        b_obs = torch.as_tensor(np.concatenate([np.stack(t.obs) for t in trajectories]))
        b_masks = torch.as_tensor(np.concatenate([np.stack(t.masks) for t in trajectories]))
        b_actions = torch.as_tensor(np.concatenate([t.actions for t in trajectories]))
        b_logprobs = torch.as_tensor(np.concatenate([t.logprobs for t in trajectories]))
        b_values = torch.as_tensor(np.concatenate([t.values for t in trajectories]))
        b_advantages = torch.as_tensor(np.concatenate([a for a, _ in parts]))
        b_returns = torch.as_tensor(np.concatenate([r for _, r in parts]))
        batch_size = len(b_actions)
        global_step += batch_size
        minibatch_size = max(1, batch_size // args.num_minibatches)

        clipfracs = []
        for _epoch in range(args.update_epochs):
            order = torch.as_tensor(rng.permutation(batch_size))
            for start_i in range(0, batch_size, minibatch_size):
                mb = order[start_i : start_i + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb], b_masks[mb], b_actions[mb]
                )
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_adv = b_advantages[mb]
                if args.norm_adv and len(mb) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)

                # The clipped surrogate objective (as a loss: its negative).
                pg_loss1 = -mb_adv * ratio
                pg_loss2 = -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()

                if args.clip_vloss:
                    v_unclipped = (newvalue - b_returns[mb]) ** 2
                    v_clipped = b_values[mb] + torch.clamp(
                        newvalue - b_values[mb], -args.clip_coef, args.clip_coef
                    )
                    v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - b_returns[mb]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()

                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        row = {
            "global_step": global_step,
            "episodes": len(returns),
            "mean_return": float(np.mean(returns)) if returns else 0.0,
            "policy_loss": pg_loss.item(),
            "value_loss": v_loss.item(),
            "entropy": entropy_loss.item(),
            "approx_kl": approx_kl.item(),
            "clipfrac": float(np.mean(clipfracs)),
            "steps_per_second": global_step / max(time.time() - start, 1e-9),
        }
        history.append(row)
        if writer is not None:
            for key, value in row.items():
                if key != "global_step":
                    writer.add_scalar(f"charts/{key}", value, global_step)
        if not args.quiet:
            print(
                f"step {global_step:>8}  return {row['mean_return']:+.3f} over "
                f"{row['episodes']} rounds  entropy {row['entropy']:.2f}  "
                f"kl {row['approx_kl']:.4f}  {row['steps_per_second']:.0f} steps/s",
                flush=True,
            )
    if writer is not None:
        writer.close()
    return agent, {"history": history, "seconds": time.time() - start}


# ----------------------------------------------------------------------------- export + evaluation


def export_bot(agent: Agent, out: Path, args: Args, training: dict[str, Any]) -> Path:
    """Write OUT/bot.onnx + OUT/bot.json (docs/bot-format.md): the actor's layers as a graph
    (``train.common.onnx_export``) that must pick the network's own greedy action on
    ``export_check`` observations of real play before anything is written, atomically."""
    from train.common.onnx_export import build_onnx, verify_export, write_bot
    from train.common.snapshot import SnapshotPolicy

    linears = [m for m in agent.actor if isinstance(m, nn.Linear)]
    layers = [(m.weight.detach().numpy(), m.bias.detach().numpy()) for m in linears]
    policy = SnapshotPolicy(layers, "tanh", name="cleanrl_ppo")
    onnx_bytes = build_onnx(policy).SerializeToString()
    rules = {"turn_limit": args.turn_limit, **(SOLITAIRE if args.num_players == 1 else {})}
    verify_export(
        onnx_bytes, agent.greedy, args.num_players, rules, args.export_check, "PPO network"
    )
    onnx_path, _ = write_bot(
        onnx_bytes, out, args.num_players, rules, None, training, args.export_check
    )
    return onnx_path


def evaluate(bot: Any, args: Args) -> dict[str, Any]:
    """A duplicate tournament against ``eval_opponent``: win rate with its 95% Wilson interval."""
    from racko_eval import run_tournament

    players, rounds = [bot, args.eval_opponent], args.eval_rounds
    report = run_tournament(
        players, args.num_players, rounds=rounds, seed=args.seed, turn_limit=args.turn_limit
    )
    ours = report["bots"][0]
    keys = ("win_rate", "win_rate_ci95", "mean_round_score")
    result = {"opponent": args.eval_opponent, "deals": rounds, "rounds": ours["played"]}
    (low, high), result = ours["win_rate_ci95"], {**result, **{key: ours[key] for key in keys}}
    print(
        f"against {result['opponent']}: won {100 * result['win_rate']:.1f}% of "
        f"{result['rounds']} rounds (95% CI {100 * low:.1f}-{100 * high:.1f}%), "
        f"mean round score {result['mean_round_score']:.1f}"
    )
    return result


def evaluate_solitaire(bot: Any, args: Args) -> dict[str, Any]:
    """Mean turns (95% interval) of the bot and ``eval_opponent`` on the same deals: env seeds
    0 on, the practice deals of the ``solitaire_full`` rubric."""
    result: dict[str, Any] = {"opponent": args.eval_opponent, "deals": args.eval_rounds}
    rules, line = {**SOLITAIRE, "turn_limit": args.turn_limit}, "mean turns"
    for who, spec in (("bot", bot), ("opponent", args.eval_opponent)):
        player = agents.load(spec, 1, seed=args.seed, **rules)
        mean, low, high = mean_ci95(play_turns(player, range(args.eval_rounds), **rules))
        result[f"{who}_mean_turns"], result[f"{who}_ci95"] = mean, [low, high]
        line += f" {'' if who == 'bot' else spec + ' '}{mean:.2f} (95% CI {low:.2f}-{high:.2f})"
    print(line + f" on the same {args.eval_rounds} deals")
    return result


def write_eval_record(
    out: Path, result: dict[str, Any], args: Args, minutes: float, steps: int
) -> None:
    """``final_eval.json`` and ``eval_history.json``, every trainer's schema (eval_record)."""
    from train.common.eval_record import history_row, opponent_result, write_final, write_history

    opp, ci95 = result["opponent"], result["win_rate_ci95"]
    extra = {"played": result["rounds"], "mean_round_score": result["mean_round_score"]}
    entry = opponent_result(opp, result["deals"], result["win_rate"], ci95, args.seed, **extra)
    write_final(out, {opp: entry})
    row = history_row({opp: entry}, minutes, result["deals"], timesteps=steps, final=True)
    write_history(out, [row])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.monotonic()
    agent, training = train(args)
    metrics: dict[str, Any] = {"args": dataclasses.asdict(args), **training}
    bot: Any = TorchBot(agent)
    if args.out:
        info = {"algorithm": "masked PPO (train/reference/cleanrl_ppo.py)", "seed": args.seed}
        info["timesteps"] = training["history"][-1]["global_step"]
        bot = str(export_bot(agent, Path(args.out), args, info))
        print(f"wrote {bot} and its manifest bot.json")
    if args.eval_rounds and args.num_players == 1:
        metrics["evaluation"] = evaluate_solitaire(bot, args)
    elif args.eval_rounds:
        metrics["evaluation"] = result = evaluate(bot, args)
        if args.out:
            steps = training["history"][-1]["global_step"]
            write_eval_record(Path(args.out), result, args, (time.monotonic() - start) / 60, steps)
    if args.out:
        write_text_atomic(Path(args.out) / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
