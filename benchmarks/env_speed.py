"""Env steps per second of the wrapped ``racko_v1`` AEC env against PettingZoo's classic games,
and of the batched engine, in one run; writes ``docs/results/env_speed.json``.

Every AEC env is played alike: random legal play from one seeded chooser, counting every
``env.step`` (a finished agent's ``None`` steps too). The envs' measurements are interleaved, so
load from other processes hits them all alike; the table shows the median of the repeats and the
ratio to ``connect_four_v3``. The batched engine plays ``BATCH_GAMES`` games at random, one
decision of one game counting as one step.

    python -m benchmarks.env_speed                      # 2 s per measurement, 3 repeats
    python -m benchmarks.env_speed --clock cpu          # CPU time: a cross-check under load

Needs ``pygame`` for connect_four (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

REFERENCE = "connect_four_v3"
BATCHED = "batched engine 2p"
BATCH_GAMES = 1024
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep stdout clean for --json -


def env_factories(players: list[int], episode: str) -> dict[str, Callable[[], Any]]:
    """Name -> zero-argument constructor of each wrapped AEC env to measure."""
    from pettingzoo.classic import connect_four_v3, tictactoe_v3

    from racko_env import racko_v1

    factories: dict[str, Callable[[], Any]] = {
        "connect_four_v3": connect_four_v3.env,
        "tictactoe_v3": tictactoe_v3.env,
    }
    for n in players:
        factories[f"racko_v1 {n}p"] = functools.partial(
            racko_v1.env, num_players=n, episode=episode
        )
    return factories


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}


def steps_per_second(
    make: Callable[[], Any],
    seconds: float,
    seed: int,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Play random legal moves for ``seconds`` of ``clock``: env steps per second.

    ``clock="cpu"`` (this process's CPU time) leaves out the time other processes hold the cores,
    for a cross-check on a loaded machine; wall time is the measure that counts.
    """
    env = make()
    rng = random.Random(seed)
    # The chooser is the same for every env and kept cheap (legal ids cached per mask), so that the
    # harness's own cost dilutes the ratios as little as possible.
    legal_for: dict[bytes, list[int]] = {}
    env.reset(seed=seed)
    steps = 0
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
                return steps / elapsed
        env.reset(seed=rng.getrandbits(31))


def batched_steps_per_second(
    seconds: float, seed: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Random legal play of ``BATCH_GAMES`` 2-player games on the batched engine, the acting
    seat's observation encoded each step: game decisions per second."""
    from racko_env.observation import OBS_SIZE
    from racko_env.vector import VectorRacko

    v = VectorRacko(BATCH_GAMES, 2, seed=seed)
    game = v.game
    rng = np.random.default_rng(seed)
    games = np.arange(BATCH_GAMES)
    obs = np.empty((BATCH_GAMES, OBS_SIZE), np.float32)
    steps = 0
    start = clock()
    deadline = start + seconds
    while True:
        masks = game.legal_mask()
        v.observe(games, game.current, out=obs)
        keys = rng.random(masks.shape)
        keys[~masks] = -1.0
        result = v.step(keys.argmax(axis=1))
        done = np.flatnonzero(result.terminated | result.truncated)
        if len(done):
            v.reset(done)
        steps += BATCH_GAMES
        if clock() >= deadline:
            return steps / (clock() - start)


def run(
    players: list[int], episode: str, seconds: float, repeats: int, seed: int, clock: str = "wall"
) -> dict:
    factories = env_factories(players, episode)
    samples: dict[str, list[float]] = {name: [] for name in [*factories, BATCHED]}
    for r in range(repeats):  # interleaved: every env once per repeat
        for name, make in factories.items():
            samples[name].append(steps_per_second(make, seconds, seed + r, CLOCKS[clock]))
        samples[BATCHED].append(batched_steps_per_second(seconds, seed + r, CLOCKS[clock]))
    reference = statistics.median(samples[REFERENCE])
    results = {
        name: {
            "steps_per_s": statistics.median(rates),
            "min": min(rates),
            "max": max(rates),
            "ratio_to_connect_four": statistics.median(rates) / reference,
        }
        for name, rates in samples.items()
    }
    return {
        "seconds_per_measurement": seconds,
        "clock": clock,
        "repeats": repeats,
        "episode": episode,
        "results": results,
    }


def results_tables(report: dict) -> list[dict[str, Any]]:
    """The results file's table: each env's median steps/s, its range and the ratio."""
    rows = [
        [
            name,
            round(r["steps_per_s"]),
            round(r["min"]),
            round(r["max"]),
            round(r["ratio_to_connect_four"], 2),
        ]
        for name, r in report["results"].items()
    ]
    note = (
        f"Median of {report['repeats']} interleaved runs of {report['seconds_per_measurement']} s "
        f"each, {report['clock']} clock, random legal play; racko episodes are {report['episode']}s; "
        f"the batched engine plays {BATCH_GAMES:,} games, one decision of one game being one step."
    )
    columns = ["env", "steps/s", "min", "max", f"x {REFERENCE}"]
    return [{"title": "Env steps per second", "columns": columns, "rows": rows, "note": note}]


def headline_figures(report: dict) -> dict[str, float]:
    """The figures pages quote: the 2-player AEC env's speed and its ratio to connect_four."""
    results = report["results"]
    first = next(name for name in results if name.startswith("racko_v1"))
    return {
        "racko_v1_steps_per_s": round(results[first]["steps_per_s"], 1),
        "ratio_to_connect_four": round(results[first]["ratio_to_connect_four"], 2),
        "batched_steps_per_s": round(results[BATCHED]["steps_per_s"], 1),
        "connect_four_steps_per_s": round(results[REFERENCE]["steps_per_s"], 1),
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from racko_env.cli import positive_float, positive_int

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=positive_float, default=2.0, help="per measurement")
    parser.add_argument("--repeats", type=positive_int, default=3, help="interleaved, per env")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4], choices=[2, 3, 4])
    parser.add_argument("--episode", choices=["round", "game"], default="round")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall time (default), or this process's CPU time as a cross-check under load",
    )
    parser.add_argument("--results-dir", metavar="DIR", help="default docs/results")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from benchmarks import publish

    args = parse_args(argv)
    report = run(args.players, args.episode, args.seconds, args.repeats, args.seed, args.clock)
    publish("env_speed", argv, results_tables(report), headline_figures(report), args.results_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
