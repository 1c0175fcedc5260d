"""Command lines whose bad input is one line: the parser and the number types of the scripts of
``train/`` that are not front doors (``exploit.py``, ``torchrl_ppo.py``, ``tianshou_dqn.py``).

Standard library only, so that a script can build its parser before torch loads.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line (the project's rule for bad input)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    """An ``int`` of at least 1, for argparse's ``type=``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite ``float`` above 0, for argparse's ``type=``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


def probability(text: str) -> float:
    """A ``float`` from 0 to 1, for argparse's ``type=``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text}")
    return value


def settings_flags(
    parser: argparse.ArgumentParser,
    defaults: object,
    types: dict[str, Callable[[str], object]] | None = None,
) -> None:
    """A flag per field of the dataclass instance ``defaults`` (``--frames-per-batch`` for
    ``frames_per_batch``), with its default: an ``int`` field takes a positive integer, a
    ``float`` a positive number, unless ``types`` names another type for the field (``int`` for
    a seed, ``probability``)."""
    for name, value in vars(defaults).items():
        kind = (types or {}).get(name)
        if kind is None:
            kind = {int: positive_int, float: positive_float}.get(type(value), type(value))
        parser.add_argument(f"--{name.replace('_', '-')}", type=kind, default=value)
