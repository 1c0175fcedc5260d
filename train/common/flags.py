"""The flags of the one-file references, written once: a flag per field of a settings dataclass
(``--total-steps`` for ``total_steps``), so each reference declares its defaults in one place."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

Settings = TypeVar("Settings")


def parse_dataclass(
    cls: type[Settings],
    prog: str,
    description: str,
    argv: list[str] | None = None,
    check: Callable[[Settings], str | None] | None = None,
    **defaults: Any,
) -> Settings:
    """``cls`` from the command line (a ``bool`` field is ``--flag/--no-flag``; ``defaults``
    override the dataclass's own); ``check`` returns the first bad setting in one line, or None:
    argparse's usage error, exit status 2."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        flag, default = "--" + f.name.replace("_", "-"), defaults.get(f.name, f.default)
        if f.type == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default)
        else:
            parser.add_argument(
                flag, type={"int": int, "float": float}.get(f.type, str), default=default
            )
    args = cls(**vars(parser.parse_args(argv)))
    if check is not None and (problem := check(args)):
        parser.error(problem)
    return args
