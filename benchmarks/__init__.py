"""Benchmarks: the commands that measure the figures the documentation shows, run from the
repository root as ``python -m benchmarks.NAME``. Each prints its table and writes
``docs/results/<name>.json`` through ``racko_eval.results.write_results`` (``--results-dir``
writes elsewhere), which the pages render."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def command_line(module: str, argv: list[str] | None) -> str:
    """The command as typed (``python -m benchmarks.NAME ARGS``), recorded in the results file;
    ``--results-dir`` and ``--out`` are left out (where files go is not how it was measured)."""
    args = list(sys.argv[1:] if argv is None else argv)
    for flag in ("--results-dir", "--out"):
        while flag in args:
            i = args.index(flag)
            del args[i : i + 2]
        args = [a for a in args if not a.startswith(flag + "=")]
    return shlex.join(["python", "-m", f"benchmarks.{module}", *args])


def shown(path: str | Path) -> str:
    """A path as a results file shows it: relative to the repository when inside it, so a file
    does not carry the measuring machine's folders."""
    resolved = Path(path).resolve()
    return str(resolved.relative_to(REPO)) if resolved.is_relative_to(REPO) else str(path)


def rate_text(rate: float, ci95: Sequence[float]) -> str:
    """A win rate with its 95% interval as the tables show it: ``51.2% (49.0-53.4)``."""
    low, high = ci95
    return f"{100 * rate:.1f}% ({100 * low:.1f}-{100 * high:.1f})"


def publish(
    module: str,
    argv: list[str] | None,
    tables: Sequence[Mapping[str, Any]],
    figures: Mapping[str, Any] | None = None,
    folder: str | None = None,
    name: str | None = None,
) -> Path:
    """Print ``tables`` and write them to ``docs/results/<name>.json`` (``name``: the module's,
    unless given; ``folder``: ``--results-dir``), recording the command as typed."""
    from racko_eval.results import markdown_table, write_results

    for table in tables:
        print(markdown_table(table))
    command = command_line(module, argv)
    path = write_results(
        name or module, command=command, tables=tables, figures=figures, folder=folder
    )
    print(f"wrote {path}")
    return path
