"""What the three tabular baselines share and is not reinforcement learning: their settings as
flags, the run's setup (the vector env, the table, the evaluation points and the clock), the
exact check of a Q-table against the optimum, the learning-curve plot and the result file. The
learning itself is in each baseline's file, top to bottom:
``train/reference/tabular_mc.py``, ``train/reference/tabular_sarsa.py``, ``train/reference/tabular_q_learning.py``.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

import racko_env  # noqa: F401  (registers racko/RackoSolitaire-v0)
from racko_env.files import write_text_atomic
from racko_env.solitaire import evaluate, greedy_policy, solve
from train.common.flags import parse_dataclass


@dataclass
class TabularArgs:
    """The settings every tabular baseline takes; each field is also a flag (``--rack-size``)."""

    rack_size: int = 3
    """slots of the rack (k)"""
    deck_size: int = 8
    """cards 1..N"""
    seed: int = 1
    """seed of the deals, the draws and the exploration"""
    total_steps: int = 6_000_000
    """decisions to learn from, all games together"""
    time_limit: float = 0.0
    """stop after this many seconds of learning (0: no limit)"""
    num_envs: int = 1024
    """games played side by side (the vector env)"""
    epsilon_start: float = 0.3
    """exploration at the start: the chance of a random legal action"""
    epsilon_end: float = 0.02
    """exploration at the end"""
    epsilon_fraction: float = 0.5
    """fraction of the steps over which exploration falls linearly from start to end"""
    init_value: float = -2.0
    """every action's value before learning (returns are minus the turns still to play)"""
    step_power: float = 0.6
    """step size 1 / visits ** step_power of each state and action"""
    turn_limit: int = 400
    """turns after which a game is cut off (the env's truncation)"""
    eval_points: int = 8
    """exact evaluations of the greedy policy along the way (the learning curve's points)"""
    out: str = ""
    """folder for curve.png and result.json (empty: runs/<baseline>)"""
    quiet: bool = False


def parse_args(name: str, doc: str, argv: list[str] | None = None, **defaults: Any) -> TabularArgs:
    """The dataclass's fields as flags, so the defaults live in one place; ``defaults``: the
    baseline's own (its tuned settings)."""

    def check(args: TabularArgs) -> str | None:
        if args.num_envs < 1 or args.total_steps < args.num_envs or args.eval_points < 1:
            return "need num_envs >= 1, total_steps >= num_envs and eval_points >= 1"
        return None

    args = parse_dataclass(
        TabularArgs, f"python train/reference/{name}.py", doc, argv, check, **defaults
    )
    if not args.out:
        args.out = f"runs/{name}"
    return args


def epsilon(args: TabularArgs, progress: float) -> float:
    """The exploration rate at ``progress`` (0..1) of the run: a linear fall, then flat."""
    fall = min(progress / max(args.epsilon_fraction, 1e-9), 1.0)
    return args.epsilon_start + (args.epsilon_end - args.epsilon_start) * fall


@dataclass
class TabularRun:
    """A baseline's run as it starts: ``num_envs`` solitaire games side by side in their tabular
    form (``racko/RackoSolitaire-v0``, ``tabular=True``: a ``Discrete`` state number), the first
    observations, a table of ``init_value`` for every legal (state, action) and ``-inf`` for the
    illegal ones (so neither a greedy choice nor a target ever picks them), its visit counts, and
    the exploration's generator, seeded by ``--seed``."""

    args: TabularArgs
    envs: Any
    obs: np.ndarray
    info: dict[str, Any]
    legal: np.ndarray  # legal[state, action]
    q: np.ndarray
    visits: np.ndarray
    rng: np.random.Generator
    tracker: Tracker
    iterations: int  # vector steps of the whole run
    evaluation_points: set[int] = field(default_factory=set)
    _start: float = 0.0

    def start_clock(self) -> None:
        """Learning time counts from here (the ``--time-limit``), evaluations excluded."""
        self._start = time.perf_counter()

    def after(self, iteration: int) -> bool:
        """Evaluate the table at the evaluation points and when out of time; True: stop."""
        args = self.args
        out_of_time = bool(args.time_limit) and (
            time.perf_counter() - self._start > args.time_limit
        )
        if iteration in self.evaluation_points or out_of_time:
            self.tracker.record(self.q, self.visits, iteration * args.num_envs)
            self._start += self.tracker.curve[-1]["eval_seconds"]  # evaluating is not learning
        return out_of_time

    def finish(self) -> dict[str, Any]:
        """Close the games, plot the curve and write the result file; the result."""
        self.envs.close()
        return self.tracker.finish(self.q)


def start_run(name: str, args: TabularArgs) -> TabularRun:
    """The games, the table and the evaluation points of baseline ``name`` (see ``TabularRun``)."""
    envs = gymnasium.make_vec(
        "racko/RackoSolitaire-v0",
        num_envs=args.num_envs,
        vectorization_mode="vector_entry_point",
        rack_size=args.rack_size,
        deck_size=args.deck_size,
        tabular=True,
        turn_limit=args.turn_limit,
    )
    num_states = envs.single_observation_space.n
    num_actions = envs.single_action_space.n
    rng = np.random.default_rng(args.seed)
    tracker = Tracker(name, args)
    obs, info = envs.reset(seed=args.seed)
    space = envs.unwrapped.space
    legal = space.legal[np.arange(num_states) // space.num_states]
    iterations = args.total_steps // args.num_envs
    points = np.linspace(iterations / args.eval_points, iterations, args.eval_points)
    return TabularRun(
        args=args,
        envs=envs,
        obs=obs,
        info=info,
        legal=legal,
        q=np.where(legal, args.init_value, -np.inf).astype(np.float32),
        visits=np.zeros((num_states, num_actions), dtype=np.float32),
        rng=rng,
        tracker=tracker,
        iterations=iterations,
        evaluation_points=set(points.astype(int)),
    )


class Tracker:
    """The exact learning curve: the greedy policy's expected turns at evaluation points."""

    def __init__(self, name: str, args: TabularArgs) -> None:
        self.name, self.args = name, args
        solution = solve(args.rack_size, args.deck_size)
        self.optimum = solution.expected_turns
        self.num_states = solution.space.num_observations
        self.start = time.perf_counter()
        self.learning_seconds = 0.0
        self.curve: list[dict[str, float]] = []

    def record(self, q: np.ndarray, visits: np.ndarray, steps: int) -> float:
        """Evaluate the greedy policy of ``q`` exactly (random play where no action was ever
        updated), in rounds cut at the turn limit as the env plays them; the gap in percent."""
        self.learning_seconds = time.perf_counter() - self.start - self._eval_seconds()
        args = self.args
        begin = time.perf_counter()
        policy = greedy_policy(q, args.rack_size, args.deck_size, visits.sum(axis=1) > 0)
        turns = evaluate(policy, args.rack_size, args.deck_size, turn_limit=args.turn_limit)
        gap = 100.0 * (turns / self.optimum - 1.0)
        self.curve.append(
            {
                "steps": steps,
                "seconds": self.learning_seconds,
                "expected_turns": turns,
                "gap_percent": gap,
                "eval_seconds": time.perf_counter() - begin,
            }
        )
        if not args.quiet:
            print(
                f"{steps:>11,} steps {self.learning_seconds:7.1f} s  exact expected turns "
                f"{turns:.4f}  (optimum {self.optimum:.4f}, gap {gap:+.2f}%)",
                flush=True,
            )
        return gap

    def _eval_seconds(self) -> float:
        return sum(p["eval_seconds"] for p in self.curve)

    def finish(self, q: np.ndarray) -> dict[str, Any]:
        """Plot the curve, write the result file and return the result."""
        args, last = self.args, self.curve[-1]
        result = {
            "baseline": self.name,
            "rack_size": args.rack_size,
            "deck_size": args.deck_size,
            "optimum": self.optimum,
            "expected_turns": last["expected_turns"],
            "gap_percent": last["gap_percent"],
            "steps": last["steps"],
            "seconds": last["seconds"],
            "q_table_mb": q.nbytes / 2**20,
            "tabular_states": self.num_states,
            "settings": asdict(args),
            "curve": self.curve,
        }
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / "result.json", json.dumps(result, indent=1) + "\n")
        plot_curve(result, out / "curve.png")
        if not args.quiet:
            print(
                f"{self.name}: gap to the optimum {last['gap_percent']:+.2f}% by exact policy "
                f"evaluation ({last['expected_turns']:.4f} turns, optimum {self.optimum:.4f}) "
                f"after {last['steps']:,} steps and {last['seconds']:.0f} s; Q-table "
                f"{result['q_table_mb']:.1f} MB; wrote {out / 'curve.png'}"
            )
        return result


def plot_curve(result: dict[str, Any], path: Path) -> None:
    """The greedy policy's exact expected turns by steps, against the optimum's line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = result["curve"]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([p["steps"] for p in curve], [p["expected_turns"] for p in curve], "o-", label="greedy")
    ax.axhline(result["optimum"], color="black", linestyle="--", label="optimum")
    ax.set_xlabel("steps (decisions, all games)")
    ax.set_ylabel("exact expected turns")
    ax.set_yscale("log")
    ax.set_title(
        f"{result['baseline']}, k={result['rack_size']}, N={result['deck_size']}", fontsize=10
    )
    ax.legend()
    fig.tight_layout()
    tmp = path.with_name(path.name + ".tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    tmp.replace(path)
