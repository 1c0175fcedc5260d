"""The shipped bots' strength: ``agents/pretrained/racko_{2,3,4}p.onnx`` against ``heuristic`` and
``expert`` in duplicate rounds with 95% Wilson intervals; writes ``docs/results/shipped_bots.json``.

    python -m benchmarks.shipped_bots                        # 2-4 players, DEALS deals each
    python -m benchmarks.shipped_bots --players 2 --rounds 200   # a quicker look

Two players: the bot against each baseline alone; three and four: every table the three bots
make. Played on the batched engine (``racko_eval.play_duplicate``), every seating of every deal.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from benchmarks import publish, rate_text

BASELINES = ("heuristic", "expert")
# Deals a table by player count: each deal is played in every seating (2 with two players, 6 with
# three, 36 with four), so every count gets thousands of seated rounds.
DEALS = {2: 2000, 3: 500, 4: 50}


def bot_path(players: int) -> str:
    return f"agents/pretrained/racko_{players}p.onnx"


def measure(players: int, rounds: int, seed: int) -> list[dict[str, Any]]:
    """One row per (bot, opponents): the bot's and the baselines' win rates with intervals."""
    from agents.batched import load_batch
    from racko_eval import play_duplicate

    specs = [bot_path(players), *BASELINES]
    labels = [f"racko_{players}p", *BASELINES]
    bots = [load_batch(spec, players, seed=seed) for spec in specs]
    if players == 2:  # each baseline alone against the bot
        lineups = [[(0, 1)], [(0, 2)]]
        names = ["`heuristic`", "`expert`"]
    else:  # every table of the three
        lineups = [None]
        names = ["`heuristic` and `expert` at every table"]
    rows = []
    for tables, against in zip(lineups, names, strict=True):
        t0 = time.perf_counter()
        report = play_duplicate(bots, labels, players, {}, rounds, seed, tables)
        rates = report["bots"]
        rows.append(
            {
                "players": players,
                "against": against,
                "rounds": rounds * report["seatings_per_deal"],
                "seconds": round(time.perf_counter() - t0, 1),
                "rates": {k: v for k, v in rates.items() if v["seats"]},
            }
        )
    return rows


def _rate(entry: dict[str, Any]) -> str:
    return rate_text(entry["win_rate"], entry["ci95"])


def results_tables(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    columns = ["bot", "players", "against", "rounds", "bot's win rate (95% CI)", "others"]
    body = []
    for row in rows:
        bot = f"racko_{row['players']}p"
        others = "; ".join(
            f"{name} {_rate(entry)}" for name, entry in row["rates"].items() if name != bot
        )
        body.append(
            [bot, row["players"], row["against"], row["rounds"], _rate(row["rates"][bot]), others]
        )
    note = (
        "Duplicate deals, each in every seating (rounds counts the seated rounds), on the "
        "batched engine; "
        "a win shared by a tie counts as a share; chance is 1 in the number of players."
    )
    return [
        {
            "title": "The shipped bots against the baselines",
            "columns": columns,
            "rows": body,
            "note": note,
        }
    ]


def figures(rows: list[dict[str, Any]]) -> dict[str, float]:
    out = {}
    for row in rows:
        bot = f"racko_{row['players']}p"
        entry = row["rates"][bot]
        key = bot if row["players"] > 2 else f"{bot}_vs_{row['against'].strip('`')}"
        out[key] = round(entry["win_rate"], 4)
        out[f"{key}_low"], out[f"{key}_high"] = (round(x, 4) for x in entry["ci95"])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4], choices=[2, 3, 4])
    parser.add_argument(
        "--rounds", type=int, help=f"deals a table (default by player count: {DEALS})"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--results-dir", metavar="DIR", help="default docs/results")
    args = parser.parse_args(argv)
    if args.rounds is not None and args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    rows = [row for n in args.players for row in measure(n, args.rounds or DEALS[n], args.seed)]
    publish("shipped_bots", argv, results_tables(rows), figures(rows), args.results_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
