"""Command-line flags for the rules options, shared by every racko command (play, evaluate, ...),
and the argparse types of their numbers (``positive_int``, ``positive_float``,
``probability``).

The flags are derived from ``RulesConfig``'s declaration (``racko_env.config.option``): a new rules
option gets its flag here without an edit. ``num_players`` comes from each command's ``--players``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import fields
from typing import Any, NoReturn

from racko_env.config import RulesConfig

# RulesConfig fields set by these flags (num_players comes from each command's own --players).
RULES_FLAGS = tuple(f.name for f in fields(RulesConfig) if f.name != "num_players")


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line naming the flag (the project's rule for bad
    input: a usage block above the error would bury it), for every racko command."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def flag(name: str) -> str:
    """The command-line flag of a rules option: ``turn_limit`` -> ``--turn-limit``."""
    return "--players" if name == "num_players" else "--" + name.replace("_", "-")


def add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per rules option (``--empty-pile``, ``--turn-limit``, ...) with the rule book's
    defaults and help; RulesConfig validates the values."""
    rules = parser.add_argument_group("rules options (docs/rules.md)")
    for f in fields(RulesConfig):
        if f.name == "num_players":
            continue
        meta, helptext = f.metadata, f.metadata["help"]
        if f.type in ("bool", bool):
            rules.add_argument(flag(f.name), action="store_true", help=helptext)
            continue
        kind = int if f.type in ("int", int) else str
        rules.add_argument(
            flag(f.name),
            type=kind,
            choices=meta["choices"],
            default=f.default,
            help=f"{helptext} (default {f.default})",
        )


def _number(convert: Callable[[str], Any], ok: Callable[[Any], bool], expected: str) -> Any:
    """An argparse ``type``: ``convert`` the text, then ``ok`` the value, else a one-line error
    saying what was ``expected`` (argparse puts the flag's name in front of it)."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not ok(value):
            shown = value if convert is int else text  # a float as typed: '-1', not '-1.0'
            raise argparse.ArgumentTypeError(f"expected {expected}, got {shown}")
        return value

    return parse


# Counts (rounds, steps): a whole number of at least 1; a finite float above 0; 0 to 1.
positive_int: Callable[[str], int] = _number(int, lambda v: v >= 1, "a positive integer")
positive_float: Callable[[str], float] = _number(
    float, lambda v: 0 < v < float("inf"), "a positive number"
)
probability: Callable[[str], float] = _number(float, lambda v: 0 <= v <= 1, "a number from 0 to 1")


def rules_options(args: argparse.Namespace) -> dict[str, Any]:
    """The rules options given on the command line, as keyword arguments."""
    return {name: getattr(args, name) for name in RULES_FLAGS}


def flag_names(message: str) -> str:
    """Name the command-line flag in RulesConfig's messages ('turn_limit' -> --turn-limit)."""
    for field in fields(RulesConfig):
        message = message.replace(f"rules option '{field.name}'", flag(field.name))
        message = message.replace(f"{field.name}=", f"{flag(field.name)} ")
    return message
