"""The flags of the one-file references, written once: one flag per field of a settings
dataclass (``--total-steps`` for ``total_steps``), so each reference declares its defaults in one
place, its dataclass, and reads as its algorithm alone."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

Settings = TypeVar("Settings")

KINDS: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "str": str}


def parse_dataclass(
    cls: type[Settings],
    prog: str,
    description: str,
    argv: list[str] | None = None,
    check: Callable[[Settings], str | None] | None = None,
    **defaults: Any,
) -> Settings:
    """``cls`` from the command line: a ``bool`` field is ``--flag/--no-flag``, an ``int``,
    ``float`` or ``str`` field takes its type; ``defaults`` override the dataclass's own. ``check``
    returns a one-line description of the first bad setting (or None): argparse's usage error,
    exit status 2."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        flag = "--" + f.name.replace("_", "-")
        default = defaults.get(f.name, f.default)
        if f.type == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default)
        else:
            parser.add_argument(flag, type=KINDS[f.type], default=default)
    args = cls(**vars(parser.parse_args(argv)))
    problem = check(args) if check is not None else None
    if problem:
        parser.error(problem)
    return args
