"""Evaluate bots against each other in a duplicate tournament (``racko evaluate``).

    racko evaluate --players 2 --rounds 2000 --bots expert heuristic --seed 0 --json out.json
    racko evaluate --players 1 --rack-size 4 --deck-size 10 --bots expert heuristic  # solitaire

Bots are ``agents.load`` specs: ``random``, ``heuristic``, ``expert``, ``module:Class`` or a bot
file (``.onnx``). The format (tables, seatings, duplicate deals) is in ``racko_eval.tournament``;
from Python call ``racko_eval.run_tournament(...)``. Solitaire (``--players 1``) has no win rate:
every bot plays the same deals and the report gives its mean turns to Rack-O with a 95% interval
(``racko_eval.solitaire_turns``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from racko_env.cli import (
    OneLineParser,
    add_rules_arguments,
    flag_names,
    positive_int,
    rules_options,
)
from racko_eval.solitaire_turns import format_solitaire, plot_solitaire
from racko_eval.tournament import BotError, IllegalActionError, run_tournament

__all__ = ["format_table", "main", "plot_report", "run_tournament"]


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="racko evaluate",
        description="Duplicate tournament between Rack-O bots: every bot in every seat equally "
        "often on the same deals; win rates with 95% intervals, scores and ratings. With "
        "--players 1 (solitaire) every bot plays the same deals alone: mean turns to Rack-O "
        "with 95% intervals.",
    )
    parser.add_argument(
        "--players",
        type=int,
        default=2,
        help="players per table, 1-4 (1: solitaire, scored by the turns to Rack-O; default 2)",
    )
    parser.add_argument(
        "--bots",
        nargs="+",
        required=True,
        metavar="SPEC",
        help="bots: random, heuristic, expert, module:Class, or a bot file (.onnx)",
    )
    unit = parser.add_mutually_exclusive_group()
    unit.add_argument(
        "--rounds",
        type=positive_int,
        help="deals of single rounds; each is played at every table in every seating "
        "(default 1000)",
    )
    unit.add_argument(
        "--games",
        type=positive_int,
        help="deals of whole games to the target score, instead of rounds",
    )
    parser.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the report as JSON")
    parser.add_argument("--plot", type=Path, metavar="PATH", help="write a win-rate chart (PNG)")
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=min(2, os.cpu_count() or 1),
        help="processes to play in (default: 2, or 1 on a single core); results do not depend on it",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--record",
        type=Path,
        metavar="DIR",
        help="write a record of every game to DIR (racko replay; docs/evaluation/records.md)",
    )
    add_rules_arguments(parser)
    return parser


def format_table(report: dict[str, Any]) -> str:
    """The report as a Markdown table (readable in a terminal, pastes into docs)."""
    cfg = report["config"]
    if cfg["players"] == 1:
        return format_solitaire(report)
    unit = cfg["unit"]
    lines = [
        f"| bot | {unit}s | wins | win rate (95% CI) | mean round score | Rack-Os | "
        "turns to Rack-O | rating (mu ± sigma) |",
        "|---|---:|---:|---|---:|---:|---:|---|",
    ]
    for b in sorted(report["bots"], key=lambda b: -b["rating"]["ordinal"]):
        lo, hi = b["win_rate_ci95"]
        turns = "-" if b["mean_turns_to_racko"] is None else f"{b['mean_turns_to_racko']:.1f}"
        wins = f"{b['wins']:g}"
        lines.append(
            f"| {b['name']} | {b['played']} | {wins} | {b['win_rate']:.1%} "
            f"({lo:.1%}-{hi:.1%}) | {b['mean_round_score']:.1f} | {b['rackos']} | {turns} | "
            f"{b['rating']['mu']:.1f} ± {b['rating']['sigma']:.1f} |"
        )
    if len(report["tables"]) > 1:
        lines += ["", "| table | " + unit + "s | win rate by bot |", "|---|---:|---|"]
        for t in report["tables"]:
            rates = ", ".join(f"{k} {v:.1%}" for k, v in t["win_rate"].items())
            lines.append(f"| {' / '.join(t['lineup'])} | {t['played']} | {rates} |")
    return "\n".join(lines)


def plot_report(report: dict[str, Any], path: Path) -> None:
    """A horizontal bar chart of win rates with their 95% intervals and the chance level (in
    solitaire: of mean turns with their 95% intervals)."""
    if report["config"]["players"] == 1:
        plot_solitaire(report, path)
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cfg = report["config"]
    bots = report["bots"]
    names = [b["name"] for b in bots]
    rates = [b["win_rate"] for b in bots]
    err = [
        [r - b["win_rate_ci95"][0] for r, b in zip(rates, bots, strict=True)],
        [b["win_rate_ci95"][1] - r for r, b in zip(rates, bots, strict=True)],
    ]
    teams = 2 if cfg["rules"].get("partners") else cfg["players"]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.5 * len(bots)))
    ax.barh(names, rates, xerr=err, capsize=4, color="tab:blue")
    ax.axvline(1 / teams, color="grey", linestyle="--", label=f"chance (1/{teams})")
    ax.set_xlim(0, 1)
    ax.invert_yaxis()
    ax.set_xlabel(f"win rate per {cfg['unit']} (95% Wilson interval)")
    ax.set_title(
        f"{cfg['players']} players, {cfg['deals']} duplicate deals x {cfg['seatings_per_deal']} "
        f"seatings, seed {cfg['seed']}"
    )
    ax.legend(loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    rules = rules_options(args)
    start = time.perf_counter()
    try:
        report = run_tournament(
            args.bots,
            num_players=args.players,
            rounds=args.rounds,
            games=args.games,
            seed=args.seed,
            workers=args.workers,
            progress=not args.no_progress,
            record_dir=args.record,
            **rules,
        )
    except (IllegalActionError, BotError) as err:
        print(f"evaluate: stopped: {err}", file=sys.stderr)
        return 3
    except (ValueError, TypeError, FileNotFoundError, ImportError) as err:
        print(f"evaluate: error: {flag_names(str(err))}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - start
    cfg = report["config"]
    deals = f"{cfg['players']} players, {cfg['deals']} {cfg['unit']} deals x "
    deals += f"{cfg['seatings_per_deal']} seatings"
    if cfg["players"] == 1:
        deals = f"solitaire, {cfg['deals']} deals, each played by every bot"
    print(f"{deals}, seed {cfg['seed']} ({elapsed:.0f} s)")
    print(format_table(report))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.plot:
        plot_report(report, args.plot)
        print(f"wrote {args.plot}")
    if args.record:
        print(f"wrote a record of every game to {args.record}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
