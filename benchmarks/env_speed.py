"""Env steps per second of the wrapped ``racko_v0`` AEC env against PettingZoo's classic games.

Every env is played the same way: random legal play (uniform over the action mask, one seeded
chooser), counting every ``env.step`` call, the ``None`` steps of finished agents included, and
resetting when an episode ends. Measurements of the envs are interleaved, so that load from other
processes hits them all alike; the table shows the median of the repeats and the ratio to
``connect_four_v3``, and whether racko meets its target of ``TARGET_RATIO`` (issue 19: at least 10x).

    python -m benchmarks.env_speed                      # 2 s per measurement, 3 repeats
    python -m benchmarks.env_speed --seconds 5 --repeats 5 --json out_speed.json
    python -m benchmarks.env_speed --clock cpu          # CPU time instead: a cross-check under load

Needs ``pygame`` for connect_four (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

REFERENCE = "connect_four_v3"
TARGET_RATIO = 10.0  # racko_v0 steps/s over connect_four_v3's, random legal play, same run
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep stdout clean for --json -


def env_factories(players: list[int], episode: str) -> dict[str, Callable[[], Any]]:
    """Name -> zero-argument constructor of each wrapped AEC env to measure."""
    from pettingzoo.classic import connect_four_v3, tictactoe_v3

    from racko_env import racko_v0

    factories: dict[str, Callable[[], Any]] = {
        "connect_four_v3": connect_four_v3.env,
        "tictactoe_v3": tictactoe_v3.env,
    }
    for n in players:
        factories[f"racko_v0 {n}p"] = functools.partial(
            racko_v0.env, num_players=n, episode=episode
        )
    return factories


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}


def steps_per_second(
    make: Callable[[], Any],
    seconds: float,
    seed: int,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, int]:
    """Play random legal moves for ``seconds`` of ``clock``; (env steps per second, episodes finished).

    ``clock="cpu"`` (this process's CPU time) leaves out the time other processes hold the cores,
    for a cross-check on a loaded machine; wall time is the measure that counts.
    """
    env = make()
    rng = random.Random(seed)
    # The chooser is the same for every env and kept cheap (legal ids cached per mask), so that the
    # harness's own cost dilutes the ratios as little as possible.
    legal_for: dict[bytes, list[int]] = {}
    env.reset(seed=seed)
    steps = episodes = 0
    start = clock()
    deadline = start + seconds
    while True:
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                action = None
            else:
                mask = obs["action_mask"]
                key = mask.tobytes()
                legal = legal_for.get(key)
                if legal is None:
                    legal = legal_for[key] = np.flatnonzero(mask).tolist()
                action = rng.choice(legal)
            env.step(action)
            steps += 1
            if steps % 64 == 0 and clock() >= deadline:
                elapsed = clock() - start
                env.close()
                return steps / elapsed, episodes
        episodes += 1
        env.reset(seed=rng.getrandbits(31))


def run(
    players: list[int], episode: str, seconds: float, repeats: int, seed: int, clock: str = "wall"
) -> dict:
    factories = env_factories(players, episode)
    samples: dict[str, list[float]] = {name: [] for name in factories}
    episodes: dict[str, int] = dict.fromkeys(factories, 0)
    for r in range(repeats):  # interleaved: every env once per repeat
        for name, make in factories.items():
            rate, done = steps_per_second(make, seconds, seed + r, CLOCKS[clock])
            samples[name].append(rate)
            episodes[name] += done
    reference = statistics.median(samples[REFERENCE])
    results = {
        name: {
            "steps_per_s": statistics.median(rates),
            "min": min(rates),
            "max": max(rates),
            "ratio_to_connect_four": statistics.median(rates) / reference,
            "episodes": episodes[name],
        }
        for name, rates in samples.items()
    }
    return {
        "target_ratio": TARGET_RATIO,
        "seconds_per_measurement": seconds,
        "clock": clock,
        "repeats": repeats,
        "episode": episode,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "results": results,
    }


def format_table(report: dict) -> str:
    lines = [
        f"{'env':<18} {'steps/s':>10} {'min':>10} {'max':>10} {'x connect_four':>15}",
        "-" * 67,
    ]
    for name, r in report["results"].items():
        lines.append(
            f"{name:<18} {r['steps_per_s']:>10,.0f} {r['min']:>10,.0f} {r['max']:>10,.0f} "
            f"{r['ratio_to_connect_four']:>15.2f}"
        )
    lines.append(
        f"median of {report['repeats']} interleaved runs of {report['seconds_per_measurement']} s; "
        f"racko episode={report['episode']!r}; {report['clock']} clock; random legal play"
    )
    target = report["target_ratio"]
    for name, r in report["results"].items():
        if name.startswith("racko_v0"):
            met = "met" if r["ratio_to_connect_four"] >= target else "NOT met"
            lines.append(f"target {name} >= {target:g}x {REFERENCE}: {met}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats per env")
    parser.add_argument(
        "--players", type=int, nargs="+", default=[2, 3, 4], help="racko player counts"
    )
    parser.add_argument("--episode", choices=["round", "game"], default="round")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall time (default), or this process's CPU time as a cross-check under load",
    )
    parser.add_argument(
        "--json", metavar="PATH", help="also write the results as JSON ('-': stdout)"
    )
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error(f"--seconds must be positive, got {args.seconds}")
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if bad := [n for n in args.players if n not in (2, 3, 4)]:
        parser.error(f"--players must be 2, 3 or 4, got {bad}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    report = run(args.players, args.episode, args.seconds, args.repeats, args.seed, args.clock)
    # With --json - the JSON alone goes to stdout (for pipes) and the table to stderr.
    print(format_table(report), file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json == "-":
        json.dump(report, sys.stdout, indent=2)
        print()
    elif args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
