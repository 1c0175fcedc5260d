"""The structured policy's feature kernel (``agents.features.rack_features``) against the kernel of
commit ``da1cbd2``, the last one laid out for the rule book's sizes only, in one run; writes
``docs/results/feature_kernel.json``.

The earlier kernel is read from git (``git show da1cbd2:agents/features.py``) into a module of its
own, so both are compiled by the same numba on the same machine. Both compute the features of the
same observations of real play (``expert`` against ``heuristic``, every seat), in batches of
``--batch`` rows as the learner's feature cache sees them; the measurements are interleaved, so
load from other processes hits both alike, and the table shows the median of the repeats. The run
also checks that the two kernels' features are equal to the bit at the rule book's sizes, and
times the kernel alone on smaller games (solitaire with racks of 4, 2 players with racks of 5).

    python -m benchmarks.feature_kernel                  # 2 s per measurement, 5 repeats
    python -m benchmarks.feature_kernel --clock cpu      # CPU time: a cross-check under load
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

BASELINE_COMMIT = "da1cbd2"
REPO = Path(__file__).resolve().parent.parent
TOLERANCE = 0.10  # the target: within 10% of the earlier kernel's rows per second
# (players, rack slots, deck): the rule book's 2- and 4-player games, then smaller ones
GAMES = [(2, 10, 40), (4, 10, 60)]
SMALL_GAMES = [(1, 4, 10), (2, 5, 20)]
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}


def baseline_kernel() -> ModuleType:
    """``agents/features.py`` of ``BASELINE_COMMIT`` as a module; a one-line error without git."""
    if shutil.which("git") is None:
        raise SystemExit(f"feature_kernel: needs git to read commit {BASELINE_COMMIT}'s kernel")
    done = subprocess.run(
        ["git", "show", f"{BASELINE_COMMIT}:agents/features.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"feature_kernel: commit {BASELINE_COMMIT} is not in this clone's history")
    path = Path(tempfile.mkdtemp()) / f"features_{BASELINE_COMMIT}.py"
    path.write_text(done.stdout, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba looks the module up while compiling
    spec.loader.exec_module(module)
    return module


def observations(game: tuple[int, int, int], count: int, seed: int) -> np.ndarray:
    """``count`` observations of the game's decisions in real play: ``expert`` in even seats,
    ``heuristic`` in odd ones (in solitaire: in every other game), in many games at once."""
    from agents.batched import BatchExpert, BatchHeuristic
    from racko_env.vector import VectorRacko

    players, k, n = game
    rules = {"rack_size": k, "deck_size": n, "turn_limit": 200}
    vec = VectorRacko(256, players, seed=seed, **rules)
    bots = [BatchExpert(players, **rules), BatchHeuristic(players, **rules)]
    out, total = [], 0
    games = np.arange(256)
    while total < count:
        seat = vec.game.current[games]
        obs, masks = vec.observe(games, seat), vec.action_masks(games, seat)
        out.append(obs)
        total += len(obs)
        owner = (seat + games) % 2 if players == 1 else seat % 2
        actions = np.zeros(len(games), dtype=np.intp)
        for i, bot in enumerate(bots):
            rows = np.flatnonzero(owner == i)
            if rows.size:
                actions[rows] = bot.act_batch(obs[rows], masks[rows])
        done = vec.step(actions, games).done
        if done.any():
            vec.reset(games[done])
    return np.concatenate(out)[:count]


def rows_per_second(
    kernel: Callable[[np.ndarray], Any],
    obs: np.ndarray,
    batch: int,
    seconds: float,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Rows per second of ``kernel`` over ``obs`` in batches of ``batch``, for ``seconds`` of
    ``clock``."""
    done, start = 0, clock()
    while True:
        for i in range(0, len(obs), batch):
            kernel(obs[i : i + batch])
            done += len(obs[i : i + batch])
        elapsed = clock() - start
        if elapsed >= seconds:
            return done / elapsed


def run(
    seconds: float, repeats: int, batch: int, rows: int, seed: int, clock: str = "wall"
) -> dict[str, Any]:
    """Both kernels on the rule book's games and the new one on smaller games, interleaved."""
    from agents.features import rack_features
    from racko_env.config import RulesConfig
    from racko_env.observation import layout_for

    old = baseline_kernel()
    cases: dict[str, Callable[[np.ndarray], Any]] = {}
    data: dict[str, np.ndarray] = {}
    identical = True
    for game in GAMES + SMALL_GAMES:
        players, k, n = game
        name = f"{players}p k={k} N={n}"
        data[name] = obs = observations(game, rows, seed)
        lay = layout_for(RulesConfig(num_players=players, rack_size=k, deck_size=n))
        cases[f"today | {name}"] = lambda x, n=n, lay=lay: rack_features(x, n, lay)
        if game in GAMES:
            cases[f"{BASELINE_COMMIT} | {name}"] = lambda x, n=n: old.rack_features(x, n)
            new, was = rack_features(obs, n, lay), old.rack_features(obs, n)
            identical &= all(a.tobytes() == b.tobytes() for a, b in zip(new, was, strict=True))
    for case, kernel in cases.items():  # compiled (and cached) before any clock runs
        kernel(data[case.split(" | ")[1]][:batch])
    samples: dict[str, list[float]] = {case: [] for case in cases}
    for _ in range(repeats):
        for case, kernel in cases.items():
            samples[case].append(
                rows_per_second(kernel, data[case.split(" | ")[1]], batch, seconds, CLOCKS[clock])
            )
    return {"samples": samples, "identical": identical, "seconds": seconds, "repeats": repeats,
            "clock": clock, "batch": batch, "rows": rows}  # fmt: skip


def results(report: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The results file's table (every case's median rows/s, its range, the ratio to the earlier
    kernel on the same game) and figures (the 2-player rule-book game's ratio, the target)."""
    samples = report["samples"]
    median = {case: statistics.median(rates) for case, rates in samples.items()}
    table_rows, ratios = [], {}
    for case, rates in samples.items():
        kernel, game = case.split(" | ")
        before = median.get(f"{BASELINE_COMMIT} | {game}")
        ratio = round(median[case] / before, 3) if before else None
        if kernel == "today" and ratio is not None:
            ratios[game] = ratio
        table_rows.append(
            [kernel, game, round(median[case]), round(min(rates)), round(max(rates)), ratio]
        )
    note = (
        f"Median of {report['repeats']} interleaved runs of {report['seconds']:g} s each, "
        f"{report['clock']} clock, batches of {report['batch']} observations of real play ({report['rows']:,} per "
        f"game). `{BASELINE_COMMIT}`: the kernel before the features took every size, read from "
        f"git. At the rule book's sizes the two kernels' features are "
        f"{'equal to the bit' if report['identical'] else 'NOT equal'}."
    )
    columns = ["kernel", "game", "rows/s", "min", "max", f"x {BASELINE_COMMIT}"]
    table = {
        "title": "Feature kernel rows per second",
        "columns": columns,
        "rows": table_rows,
        "note": note,
    }
    first = f"{GAMES[0][0]}p k={GAMES[0][1]} N={GAMES[0][2]}"
    figures = {
        "ratio_2p_k10": ratios[first],
        "ratio_4p_k10": ratios[f"{GAMES[1][0]}p k={GAMES[1][1]} N={GAMES[1][2]}"],
        "rows_per_s_2p_k10": round(median[f"today | {first}"], 1),
        "rows_per_s_2p_k10_before": round(median[f"{BASELINE_COMMIT} | {first}"], 1),
        "within_target": all(r >= 1.0 - TOLERANCE for r in ratios.values()),
        "identical_features": report["identical"],
    }
    return [table], figures


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from racko_env.cli import positive_int
    from train.common.front_door import positive_float

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=positive_float, default=2.0, help="per measurement")
    parser.add_argument("--repeats", type=positive_int, default=5, help="interleaved, per case")
    parser.add_argument("--batch", type=positive_int, default=256, help="rows per kernel call")
    parser.add_argument("--rows", type=positive_int, default=20_000, help="observations per game")
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
    report = run(args.seconds, args.repeats, args.batch, args.rows, args.seed, args.clock)
    tables, figures = results(report)
    publish("feature_kernel", argv, tables, figures, args.results_dir)
    return 0 if report["identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
