"""``racko grade BOT``: a local autograder for any bot spec, with a teacher's rubric (YAML).

    racko grade my_bot:Bot                         # practice: the rubric's public seed
    racko grade my_bot:Bot --rubric course.yaml --json grade.json
    racko grade my_bot:Bot --rubric course.yaml --secret kit/secret_seed.json   # the graded deals
    racko grade runs/2p/bot.onnx
    racko grade my_bot:act --gradescope results.json    # Gradescope's format (racko_apps.gradescope)

It checks that the bot loads, plays legal moves within the time limit on sampled positions, and
wins duplicate rounds against each opponent the rubric names (docs/coursework/grade.md). Code
and bot files run sandboxed (``racko_apps.sandbox``). Without ``--seed`` or ``--secret`` a run
is practice, on the rubric's public seed. This module is the command; the grading path is
``racko_apps.grade.run``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from racko_apps.grade.report import format_report
from racko_apps.grade.rubric import RubricError, load_rubric, parse_rubric
from racko_apps.grade.run import grade
from racko_apps.grade.secret import SecretError, read_secret
from racko_apps.sandbox.isolation import ISOLATIONS, add_isolation_arguments
from racko_apps.sandbox.wire import IsolationUnavailableError
from racko_env.cli import OneLineParser
from racko_env.files import write_text_atomic

ISOLATION_CHOICES = (*ISOLATIONS, "auto")
__all__ = ["build_parser", "format_report", "grade", "load_rubric", "main", "parse_rubric"]


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="racko grade",
        description="Grade a bot: it loads, plays legal moves fast enough on sampled positions, "
        "and wins duplicate rounds against the baselines; points from a rubric (YAML).",
    )
    parser.add_argument(
        "bot",
        metavar="BOT",
        help="module:Class or module:act (a .py file in the current folder), or a .onnx bot",
    )
    parser.add_argument(
        "--rubric", type=Path, metavar="FILE", help="rubric YAML (default: shipped)"
    )
    seeds = parser.add_mutually_exclusive_group()
    seeds.add_argument(
        "--seed", type=int, help="deals and positions seed (default: the rubric's, for practice)"
    )
    seeds.add_argument(
        "--secret",
        type=Path,
        metavar="FILE",
        help="deal from a kit's secret seed (racko gradescope-kit's secret_seed.json)",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the report as JSON")
    parser.add_argument(
        "--record", type=Path, metavar="DIR", help="write a record of every game to DIR (replays)"
    )
    parser.add_argument(
        "--gradescope",
        type=Path,
        metavar="PATH",
        help="also write Gradescope's results.json, which holds no seed (racko_apps.gradescope)",
    )
    add_isolation_arguments(
        parser,
        ISOLATION_CHOICES,
        "bwrap",
        "how a sandboxed bot runs: bwrap (default), user (a user of its own with resource "
        "limits, as root; weaker, and the report says so), none, or auto (the strongest here)",
        "--isolation none: only for bots you trust (the report says so)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        rubric = load_rubric(args.rubric)
        gradescope = _gradescope_writer() if args.gradescope else None
        seed, source = (read_secret(args.secret), "secret") if args.secret else (args.seed, None)
    except (RubricError, SecretError, ImportError) as err:
        print(f"racko grade: error: {err}", file=sys.stderr)
        return 2
    try:
        report = grade(
            args.bot,
            rubric,
            seed=seed,
            folder=Path.cwd(),
            isolation=args.isolation,
            record_dir=args.record,
            seed_source=source,
        )
    except IsolationUnavailableError as err:
        print(f"racko grade: error: {err}", file=sys.stderr)
        return 2
    print(format_report(report))
    if args.json:
        write_text_atomic(args.json, json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")
    if gradescope is not None:
        gradescope(args.gradescope, report, rubric)
        print(f"wrote {args.gradescope}")
    return 0


def _gradescope_writer() -> Any:
    """``gradescope.autograder.write_report``, imported before any game, so that a missing extra
    is said at once."""
    from agents.extras import needs_extra

    with needs_extra("pydantic", "eval", "racko grade --gradescope"):
        from racko_apps.gradescope.autograder import write_report
    return write_report
