"""The search bot's strength: duplicate rounds against ``expert`` and ``racko_2p``, ms per decision.

    python -m benchmarks.search_strength --players 2 --rounds 200 \
        --budgets worlds=16,depth=2 worlds=32,depth=2 --opponents expert racko_2p

Each budget is a string of ``agents.search`` options. Played on the batched engine, every deal in
every seating; prints the search bot's win rate, its own milliseconds per decision and, per
decision phase, how often it changed the blueprint's choice. ``--phases`` repeats a budget with
the search restricted to each phase alone. Numpy's and onnxruntime's thread pools are pinned to 1.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from agents.batched import load_batch  # noqa: E402
from agents.search import SearchBot, parse_options  # noqa: E402
from benchmarks import command_line, rate_text  # noqa: E402
from racko_eval import play_duplicate  # noqa: E402
from racko_eval.results import record_row  # noqa: E402

PHASES = ("draw", "keep", "place")


def measure(budget: str, opponent: str, players: int, rounds: int, seed: int) -> dict[str, Any]:
    """One budget against one opponent: win rate, interval, ms per decision, changes per phase."""
    bot = SearchBot(players, seed=seed, **parse_options(budget))
    opp = load_batch(opponent, players, seed=seed)
    table = (0,) + (1,) * (players - 1)
    t0 = time.perf_counter()
    rep = play_duplicate([bot, opp], ["search", opponent], players, {}, rounds, seed, [table])
    wall = time.perf_counter() - t0
    me, st = rep["bots"]["search"], bot.stats
    decisions = int(st["decisions"].sum())
    return {
        "budget": budget,
        "opponent": opponent,
        "rounds": rounds,
        "win_rate": float(me["win_rate"]),
        "ci95": [float(x) for x in me["ci95"]],
        "seats": me["seats"],
        "ms_per_decision": 1000.0 * st["seconds"] / max(decisions, 1),
        "decisions": decisions,
        "changed": {p: int(c) for p, c in zip(PHASES, st["changed"], strict=True)},
        "by_phase": {p: int(c) for p, c in zip(PHASES, st["decisions"], strict=True)},
        "seconds": round(wall, 1),
    }


def record(players: int, results: list[dict[str, Any]], command: str, folder: str | None) -> Path:
    """This run's rows in ``docs/results/search.json``, which gathers runs, a table per player
    count."""
    columns = ["budget", "opponent", "rounds", "search's win rate (95% CI)", "ms per decision"]
    columns += [f"{p} changed" for p in PHASES] + ["command"]
    rows = [
        [r["budget"], r["opponent"], r["rounds"], rate_text(r["win_rate"], r["ci95"])]
        + [round(r["ms_per_decision"], 1)]
        + [f"{100 * r['changed'][p] / max(r['by_phase'][p], 1):.1f}%" for p in PHASES]
        + [command]
        for r in results
    ]
    note = (
        "duplicate rounds on the batched engine, every deal in every seating; ms per decision is "
        "the search's own time on one core; changed: how often the search overrode the "
        "blueprint's choice in each decision phase"
    )
    return record_row(
        "search",
        command=command,
        title=f"The search bot, {players} players",
        columns=columns,
        rows=rows,
        titles=[f"The search bot, {n} players" for n in (2, 3, 4)],
        folder=folder,
        note=note,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=200, help="deals (each in every seating)")
    parser.add_argument("--budgets", nargs="+", default=["worlds=16,depth=2"])
    parser.add_argument("--opponents", nargs="+", default=["expert"])
    parser.add_argument("--phases", action="store_true", help="also each phase searched alone")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--results-dir", metavar="DIR", help="default docs/results")
    args = parser.parse_args(argv)
    try:
        for b in args.budgets:
            parse_options(b)
    except ValueError as err:
        parser.error(str(err))
    budgets = list(args.budgets)
    if args.phases:
        budgets += [f"{b},phases={p}" for b in args.budgets for p in PHASES]
    rows = []
    for opponent in args.opponents:
        for budget in budgets:
            r = measure(budget, opponent, args.players, args.rounds, args.seed)
            rows.append(r)
            lo, hi = r["ci95"]
            changed = " ".join(
                f"{p} {r['changed'][p] / max(r['by_phase'][p], 1):.1%}" for p in PHASES
            )
            print(
                f"search:{budget:40s} vs {opponent:10s} {r['win_rate']:6.1%} ({lo:.1%}-{hi:.1%})"
                f"  {r['ms_per_decision']:6.1f} ms/decision  changed: {changed}"
                f"  [{r['seconds']} s]",
                flush=True,
            )
    path = record(args.players, rows, command_line("search_strength", argv), args.results_dir)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
