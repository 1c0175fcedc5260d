"""``racko league DIR``: duplicate matches between the bots of a folder, rated with OpenSkill.

    racko league bots/                              # the adaptive schedule, on every core
    racko league bots/ --rounds 100 --baselines random heuristic expert
    racko league bots/ --schedule round-robin       # every pair
    racko league bots/ --address auto               # the pairings as tasks on a Ray cluster

What counts as a bot in DIR: racko_apps.league.submissions. Each bot plays sandboxed and isolated
(racko_apps.sandbox); a pairing is ``--rounds`` duplicate deals in every seating, and a bot that
breaks forfeits the round (racko_apps.referee). This module is the command line; the steps from
folder to report are racko_apps.league.run's.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Any

from racko_apps.league.clock import DEFAULT_SECONDS_PER_ROUND
from racko_apps.league.report import format_markdown
from racko_apps.league.run import (
    DEFAULT_BUDGET_MINUTES,
    DEFAULT_MAX_PAIRINGS,
    DEFAULT_TABLES,
    DEFAULT_TARGET,
    PLAYER_COUNTS,
    SCHEDULES,
    run_league,
)
from racko_apps.league.stopped import Stopped, sigterm_stops, stopped_line
from racko_apps.league.submissions import read_aliases, read_gradescope_export
from racko_apps.sandbox.isolation import ISOLATIONS, NOT_ISOLATED
from racko_apps.sandbox.toolkit import DEFAULT_ALLOW
from racko_apps.sandbox.wire import DEFAULT_ROUND_SECONDS, IsolationUnavailableError, Limits
from racko_env.cli import OneLineParser, add_rules_arguments, flag_names, rules_options


def _parser() -> argparse.ArgumentParser:
    """The command line of ``racko league``."""
    parser = OneLineParser(
        prog="racko league",
        description="Rate every bot in a folder (NAME.py, NAME.onnx with NAME.json, a package "
        "NAME/) by duplicate matches, with OpenSkill ratings and their 95% intervals; a rerun "
        "plays only what its record lacks (docs/coursework/league.md).",
    )
    parser.add_argument("folder", metavar="DIR", type=Path, nargs="?", help="the folder of bots")
    parser.add_argument(
        "--gradescope-export",
        type=Path,
        metavar="EXPORT",
        help="play the submissions of Gradescope's export (the unzipped folder of 'Export "
        "submissions'; instead of DIR), each under an alias, and write grades.csv beside the "
        "report",
    )
    parser.add_argument(
        "--aliases",
        type=Path,
        metavar="FILE",
        help="with --gradescope-export: a CSV of 'key,alias' rows (key: a student's email or "
        "SID, or the submission's folder) naming the bots in the league's pages",
    )
    parser.add_argument("--rounds", type=int, default=50, help="deals per pairing (default 50)")
    parser.add_argument(
        "--players",
        type=int,
        choices=PLAYER_COUNTS,
        default=2,
        help="players per game: 2 (pairings of two bots, default), 3 or 4 (a pairing is a table "
        "of one bot per seat, every seating of each deal; OpenSkill's multiplayer ratings)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        help="the deals' seed, for practice (default: a secret one, drawn from fresh entropy, "
        "kept in the record and league.json, never in league.md or league.html)",
    )
    parser.add_argument("--db", type=Path, help="SQLite file (default DIR/league.sqlite)")
    parser.add_argument("--out", type=Path, help="folder for league.md/.json/.html (default DIR)")
    parser.add_argument(
        "--baselines", nargs="*", default=[], metavar="NAME", help="built-in bots to add"
    )
    parser.add_argument(
        "--record", type=Path, metavar="DIR", help="write a record of every game to DIR (replays)"
    )
    _schedule_arguments(parser)
    _limit_arguments(parser)
    add_rules_arguments(parser)
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="run sandboxed bots without bubblewrap (only bots you trust; every report says so)",
    )
    parser.add_argument(
        "--isolation",
        choices=("auto", *ISOLATIONS),
        help="how sandboxed bots run: bwrap (bubblewrap, the default), user (a user of their own "
        "with resource limits; root needed), none, or auto (the strongest that works here); "
        "anything weaker than bwrap is stated at the top of every report",
    )
    parser.add_argument(
        "--allow",
        nargs="+",
        metavar="MODULE",
        help="the toolkit modules a submission may import (patterns such as 'agents.obs' or "
        "'racko_env'; '*': all, the shipped bots and expert included); default: "
        + ", ".join(DEFAULT_ALLOW),
    )
    return parser


def _schedule_arguments(parser: argparse.ArgumentParser) -> None:
    """Which pairings, and where they are played."""
    parser.add_argument(
        "--schedule",
        choices=SCHEDULES,
        default="adaptive",
        help="adaptive: rounds of pairings between bots of similar rating until every interval "
        "is narrow enough (default); round-robin: every pair",
    )
    parser.add_argument(
        "--target",
        type=float,
        default=DEFAULT_TARGET,
        help=f"adaptive: the 95%% interval's half-width to reach (default {DEFAULT_TARGET:g})",
    )
    parser.add_argument(
        "--max-pairings",
        type=int,
        default=DEFAULT_MAX_PAIRINGS,
        help=f"adaptive: pairings a bot may ask for (default {DEFAULT_MAX_PAIRINGS})",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=DEFAULT_BUDGET_MINUTES,
        metavar="MINUTES",
        help="adaptive: plan no pairing past this many minutes of this run, the widest intervals "
        f"first; a rerun goes on from the record (default {DEFAULT_BUDGET_MINUTES:g}; 0: none)",
    )
    parser.add_argument(
        "--workers", type=int, help="processes playing pairings (default: one per core)"
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="play the pairings on the Ray cluster at ADDR ('auto' or HOST:PORT; needs the "
        "'cluster' extra, and racko and bubblewrap on every node)",
    )
    parser.add_argument(
        "--tables",
        type=int,
        default=DEFAULT_TABLES,
        help="rounds of a pairing played side by side, each sandboxed bot answering all of their "
        f"moves in one exchange with a bot object per table (default {DEFAULT_TABLES}; 1: one "
        "round at a time)",
    )


def _limit_arguments(parser: argparse.ArgumentParser) -> None:
    """What a sandboxed bot may use: a move, a round, a pairing, memory, forfeits."""
    parser.add_argument(
        "--move-seconds", type=float, default=5.0, help="a move's hard time limit (default 5)"
    )
    parser.add_argument(
        "--round-seconds",
        type=float,
        default=DEFAULT_ROUND_SECONDS,
        help="a bot's clock: the wall time it may use over one round, all its moves together "
        f"(default {DEFAULT_ROUND_SECONDS:g})",
    )
    parser.add_argument(
        "--pairing-seconds",
        type=float,
        help="a sandboxed bot's clock for a whole pairing, all its moves together; one that "
        "uses it up forfeits the pairing's remaining rounds (default "
        f"{DEFAULT_SECONDS_PER_ROUND:g} s per round it plays there)",
    )
    parser.add_argument(
        "--memory-mb", type=int, default=1024, help="a sandboxed bot's memory limit (default 1024)"
    )
    parser.add_argument(
        "--max-forfeits",
        type=int,
        default=3,
        help="forfeits after which a bot's other rounds of a pairing are forfeited (default 3)",
    )


def _check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """One-line usage errors for values no league runs with."""
    if args.gradescope_export is not None:
        if args.folder is not None:
            parser.error("give the folder of bots DIR or --gradescope-export, not both")
        args.folder = args.gradescope_export
    elif args.folder is None:
        parser.error("the folder of bots DIR is required (or --gradescope-export)")
    elif args.aliases is not None:
        parser.error("--aliases names the submissions of a --gradescope-export")
    if args.rounds < 1 or args.max_forfeits < 1 or args.max_pairings < 1:
        parser.error("--rounds, --max-forfeits and --max-pairings must be positive")
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be positive")
    if args.tables < 1:
        parser.error("--tables must be positive")
    if not args.target > 0:
        parser.error("--target must be positive")
    if not 0 <= args.budget < float("inf"):
        parser.error("--budget must be a number of minutes >= 0 (0: no budget)")
    if args.no_isolation and args.isolation is not None:
        parser.error("give --no-isolation or --isolation, not both")
    if args.pairing_seconds is not None and not 0 < args.pairing_seconds < float("inf"):
        parser.error("--pairing-seconds must be a positive number of seconds")


def _run(args: argparse.Namespace) -> dict[str, Any]:
    """The league the arguments ask for (``run_league``)."""
    limits = Limits(
        move_seconds=args.move_seconds,
        round_seconds=args.round_seconds,
        memory_mb=args.memory_mb,
    )
    same = ("rounds", "seed", "db", "out", "baselines", "max_forfeits", "schedule", "target")
    same += ("max_pairings", "workers", "address", "tables", "pairing_seconds", "players")
    export = args.gradescope_export
    return run_league(
        args.folder,
        **{name: getattr(args, name) for name in same},
        limits=limits,
        log=lambda line: print(line, flush=True),
        isolate=not args.no_isolation,
        record_dir=args.record,
        progress=True,
        budget_minutes=args.budget,
        isolation=args.isolation,
        allow=None if args.allow is None else tuple(args.allow),
        rules=rules_options(args),
        export=None
        if export is None
        else read_gradescope_export(export, read_aliases(args.aliases)),
    )


def main(argv: list[str] | None = None) -> int:
    """``racko league``: run the league, print its table; 2 on a one-line error, 130 on Ctrl-C,
    143 on SIGTERM (each writing the ranking so far, marked provisional)."""
    parser = _parser()
    args = parser.parse_args(argv)
    _check_arguments(parser, args)
    if args.no_isolation:
        print(f"**{NOT_ISOLATED}**", flush=True)
    try:
        with sigterm_stops():
            report = _run(args)
    except (
        ValueError,
        ImportError,
        sqlite3.DatabaseError,
        IsolationUnavailableError,
        OSError,
    ) as err:
        print(f"racko league: error: {flag_names(str(err))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:  # the record is safe: every finished pairing was committed
        print(stopped_line(args.db or args.folder / "league.sqlite", err), file=sys.stderr)
        return 143 if isinstance(err, Stopped) else 130
    print(format_markdown({**report}), end="")
    out = args.out or args.folder
    grades = f", {out / 'grades.csv'}" if args.gradescope_export is not None else ""
    print(f"wrote {out / 'league.md'}, {out / 'league.json'}, {out / 'league.html'}{grades}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
