"""A class-sized league under attack: 23 sandboxed submissions, one of them a thread burner.

    python -m benchmarks.league_class /tmp/class              # the 23-bot league, 2 workers
    python -m benchmarks.league_class /tmp/class --rounds 5 --max-pairings 4

The class: graded zone-style bots (the ``heuristic`` slot-zone strategy, playing a random legal
move with a probability growing from 0 to ``ZONE_TOP``, strongest first), random-ish ones (a
random move with probability ``RANDOMISH`` and up) and the thread burner of
benchmarks/league_pairing_budget.py, each a one-file submission played sandboxed, as
``racko league`` plays a class. The league runs with the adaptive schedule, the league's default
limits, and a time budget of ``--budget`` minutes. The results file
(``docs/results/league_class.json``) gives the wall time, the pairings, the ranking against the
true order, the burner's rank, how wide the 95% intervals are, and the checks: the wall time is
within the budget, the burner ranks in the bottom three, the strongest honest bot ranks above
every random-ish one, every bot ranks within ``PLACES`` places of its true place (the burner's
is last), and whether every 95% interval (every honest bot's, and the burner's too) is within
the league's target. A bot that loses every round is known only to rank below all its
opponents, so the file also gives the burner's half-width had it lost ``MORE_LOSSES`` more
rounds: how far the target is out of its reach.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from typing import Any

from benchmarks.league_pairing_budget import BURNER
from benchmarks.league_scale import BOT
from racko_apps.league.schedule import Z95

ZONES = 18  # graded zone-style bots
ZONE_TOP = 0.6  # the weakest one's probability of a random move
RANDOMISH = (0.9, 0.93, 0.97, 1.0)  # the random-ish bots' probabilities of a random move
PLACES = 3  # how far from its true place a bot may rank
BUDGET_MINUTES = 15.0
MORE_LOSSES = 2000  # further lost rounds in the burner's outlook


def write_class(folder: Path) -> list[str]:
    """The class's submissions in ``folder``; the honest bots' labels in true order (strongest
    first), the burner not among them."""
    folder.mkdir(parents=True, exist_ok=True)
    labels = []
    for i in range(ZONES):
        labels.append(f"zone_{i:02d}")
        p = round(ZONE_TOP * i / (ZONES - 1), 4)
        (folder / f"{labels[-1]}.py").write_text(BOT.format(p=p, base="heuristic"))
    for i, p in enumerate(RANDOMISH):
        labels.append(f"randomish_{i}")
        (folder / f"{labels[-1]}.py").write_text(BOT.format(p=p, base="heuristic"))
    (folder / "burner.py").write_text(BURNER)
    return labels


def play(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The league, as ``racko league DIR --allow '*'`` with the benchmark's settings; its report
    and wall time."""
    from racko_apps.league.run import run_league
    from racko_apps.sandbox.toolkit import ALLOW_ALL
    from racko_apps.sandbox.wire import Limits

    began = time.perf_counter()
    report = run_league(
        folder,
        rounds=args.rounds,
        seed=args.seed,
        limits=Limits(move_seconds=5.0),  # racko league's own default
        allow=ALLOW_ALL,  # the bots wrap the heuristic bot
        max_pairings=args.max_pairings,
        workers=args.workers,
        budget_minutes=args.budget,
        log=lambda line: print(line, flush=True),
    )
    report["wall_seconds"] = round(time.perf_counter() - began, 1)
    return report


def true_order(truth: list[str]) -> list[str]:
    """Every bot in its true order: the honest ones', then the burner, which forfeits every
    move it is asked for and so can win no round against anyone."""
    return [*truth, "burner"]


def rank_errors(report: dict[str, Any], truth: list[str]) -> list[int]:
    """How many places each bot ranks from its true place."""
    order = [b["name"] for b in report["bots"]]
    return [abs(order.index(name) - i) for i, name in enumerate(true_order(truth))]


def checks(report: dict[str, Any], truth: list[str], budget: float) -> list[list[Any]]:
    """Each check's name and whether it holds."""
    order = [b["name"] for b in report["bots"]]
    errors = rank_errors(report, truth)
    weak = [name for name in truth if name.startswith("randomish")]
    wide = report["sure"]["widest_half_width"]
    target = report["config"]["target"]
    return [
        [f"ranked within the budget ({budget:g} min)", report["wall_seconds"] <= 60 * budget],
        ["the burner ranks in the bottom three", order.index("burner") >= len(order) - 3],
        [
            "the strongest honest bot ranks above every random-ish one",
            all(order.index(truth[0]) < order.index(name) for name in weak),
        ],
        [f"every bot within {PLACES} places of its true place", max(errors) <= PLACES],
        [
            f"every honest bot's 95% interval within ±{target:g}",
            all(b["sigma"] * Z95 <= target for b in report["bots"] if b["name"] != "burner"),
        ],
        [f"every 95% interval within ±{target:g}", wide <= target],
        ["the ranking is final (not provisional)", not report["provisional"]],
    ]


def burner_outlook(report: dict[str, Any], more: int = MORE_LOSSES) -> float:
    """The burner's 95% half-width had it lost ``more`` further rounds to the honest bot ranked
    last, rated as the league rates: how far the target is out of reach of a bot that loses all."""
    from racko_eval.tournament import rating_model

    model = rating_model()
    burner = next(b for b in report["bots"] if b["name"] == "burner")
    low = [b for b in report["bots"] if b["name"] != "burner"][-1]
    rated = [model.rating(mu=b["mu"], sigma=b["sigma"]) for b in (burner, low)]
    for _ in range(more):
        rated = [team[0] for team in model.rate([[r] for r in rated], scores=[0.0, 1.0])]
    return round(Z95 * rated[0].sigma, 2)


def tables(report: dict[str, Any], truth: list[str], args: argparse.Namespace) -> list[dict]:
    """The league's summary, its checks and its ranking."""
    outlook = burner_outlook(report)
    order = [b["name"] for b in report["bots"]]
    errors = rank_errors(report, truth)
    summary = {
        "title": "A league of 23 sandboxed submissions, one a thread burner",
        "columns": [
            "bots",
            "workers",
            "deals per pairing",
            "pairings",
            "wall seconds",
            "burner's rank",
            "largest rank error",
            "widest 95% half-width",
            "stopped",
        ],
        "rows": [
            [
                len(order),
                args.workers or os.cpu_count() or 1,
                args.rounds,
                len(report["pairings"]),
                report["wall_seconds"],
                order.index("burner") + 1,
                max(errors),
                report["sure"]["widest_half_width"],
                report["sure"]["stopped"],
            ]
        ],
        "note": "Rank error: how many places a bot ranks from its true place (the zone-style "
        "bots by their share of random moves, then the random-ish ones, then the burner, which "
        "forfeits every move and can win no round). "
        "A bot that loses every round is known only to rank "
        "below all its opponents: its rating has no lower bound in the evidence, so its interval "
        f"narrows ever more slowly (±{outlook:g} after {MORE_LOSSES} more lost rounds to the "
        "lowest honest bot) and stays wider than the target.",
    }
    check_table = {
        "title": "The checks",
        "columns": ["check", "holds"],
        "rows": checks(report, truth, args.budget),
    }
    ranking = {
        "title": "The ranking",
        "columns": ["rank", "bot", "true place", "rating", "95% half-width", "pairings"]
        + ["forfeits"],
        "rows": [
            [
                i,
                b["name"],
                true_order(truth).index(b["name"]) + 1,
                b["mu"],
                round((b["ci95"][1] - b["ci95"][0]) / 2, 2),
                sum(1 for p in report["pairings"] if b["name"] in p["bots"]),
                b["forfeits"],
            ]
            for i, b in enumerate(report["bots"], 1)
        ],
    }
    return [summary, check_table, ranking]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a scratch folder (emptied first)")
    parser.add_argument("--rounds", type=int, default=30, help="deals per pairing (default 30)")
    parser.add_argument("--max-pairings", type=int, default=12, help="per bot (default 12)")
    parser.add_argument("--budget", type=float, default=BUDGET_MINUTES, help="minutes (default 15)")
    parser.add_argument("--seed", type=int, default=0, help="the deals' seed (default 0)")
    parser.add_argument("--workers", type=int, help="default: one per core")
    parser.add_argument("--results-dir", type=Path, help="default docs/results")
    args = parser.parse_args(argv)
    shutil.rmtree(args.folder, ignore_errors=True)
    truth = write_class(args.folder)
    load_before = [round(x, 2) for x in os.getloadavg()]
    report = play(args.folder, args)
    found = tables(report, truth, args)
    for table in found:
        print(table["title"])
        for row in table["rows"]:
            print(" ", dict(zip(table["columns"], row, strict=True)))
    from benchmarks import command_line
    from racko_eval.results import write_results

    path = write_results(
        "league_class",
        command=command_line("league_class", argv),
        tables=found,
        figures={
            "wall_seconds": report["wall_seconds"],
            "pairings": len(report["pairings"]),
            "burner_rank": [b["name"] for b in report["bots"]].index("burner") + 1,
            "largest_rank_error": max(rank_errors(report, truth)),
            "every_interval_within_target": report["sure"]["within_target"] == len(truth) + 1,
            "honest_intervals_within_target": all(
                b["sigma"] * Z95 <= report["config"]["target"]
                for b in report["bots"]
                if b["name"] != "burner"
            ),
            f"burner_half_width_after_{MORE_LOSSES}_more_losses": burner_outlook(report),
            "provisional": report["provisional"],
            "load_average_before": ", ".join(f"{x:g}" for x in load_before),
        },
        folder=args.results_dir,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
