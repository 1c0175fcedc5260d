"""Command-line flags for the rules options, shared by every racko command (play, evaluate)."""

from __future__ import annotations

import argparse
from dataclasses import fields
from typing import Any

from racko_env.config import DEFAULT_TURN_LIMIT, EMPTY_PILE_MODES, RulesConfig
from racko_env.rules import TARGET_SCORE

# RulesConfig fields set by these flags (num_players comes from each command's own --players).
RULES_FLAGS = ("empty_pile", "turn_limit", "min_run", "bonus", "partners", "target_score")


def add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    """``--empty-pile``, ``--turn-limit``, ``--min-run``, ``--bonus``, ``--partners``,
    ``--target-score``, with the rule book's defaults; RulesConfig validates the values."""
    rules = parser.add_argument_group("rules options (docs/rules.md)")
    rules.add_argument(
        "--empty-pile",
        choices=EMPTY_PILE_MODES,
        default="shuffle",
        help="when the draw pile runs out, shuffle the discards or turn them over (default shuffle)",
    )
    rules.add_argument(
        "--turn-limit",
        type=int,
        default=DEFAULT_TURN_LIMIT,
        help=f"turns after which a round without Rack-O is cut off (default {DEFAULT_TURN_LIMIT})",
    )
    rules.add_argument(
        "--min-run",
        type=int,
        default=0,
        help="2 players: Rack-O also needs a run of this many consecutive numbers (0 or 3-10)",
    )
    rules.add_argument("--bonus", action="store_true", help="Bonus Rack-O: points for long runs")
    rules.add_argument("--partners", action="store_true", help="4 players in two teams")
    rules.add_argument(
        "--target-score",
        type=int,
        default=TARGET_SCORE,
        help=f"points that win the game (default {TARGET_SCORE})",
    )


def rules_options(args: argparse.Namespace) -> dict[str, Any]:
    """The rules options given on the command line, as keyword arguments."""
    return {name: getattr(args, name) for name in RULES_FLAGS}


def flag_names(message: str) -> str:
    """Name the command-line flag in RulesConfig's messages ('turn_limit' -> --turn-limit)."""
    for field in fields(RulesConfig):
        flag = "--players" if field.name == "num_players" else "--" + field.name.replace("_", "-")
        message = message.replace(f"rules option '{field.name}'", flag)
        message = message.replace(f"{field.name}=", f"{flag} ")
    return message
