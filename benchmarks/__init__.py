"""Benchmarks: the commands that measure the figures the documentation shows, run from the
repository root as ``python -m benchmarks.NAME``. Each prints its table and writes
``docs/results/<name>.json`` through ``racko_eval.results.write_results`` (``--results-dir``
writes elsewhere), which the pages render."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def command_line(module: str, argv: list[str] | None) -> str:
    """The command as typed (``python -m benchmarks.NAME ARGS``), recorded in the results file;
    ``--results-dir`` is left out (where a file goes is not how it was measured)."""
    args = list(sys.argv[1:] if argv is None else argv)
    for flag in ("--results-dir",):
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
