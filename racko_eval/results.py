"""Results as data: every measured figure the documentation shows lives in one JSON file,
``docs/results/<name>.json``, written by the command that measured it.

A page never retypes a measured number: it renders the file (the Sphinx directive
``results-table`` of ``docs/_ext/results_table.py``), and the README's
headline block is generated from the files (``python -m racko_eval.results --update README.md``).
So a figure is written once, next to the command, the commit, the machine and the date that
produced it, and re-running the command is the only way to change it.

A results file holds::

    {"name": "env_speed", "command": "python -m benchmarks.env_speed", "commit": "e52c599...",
     "machine": {"cores": 2, "load_average": [1.2, 0.9, 0.7], "cpu": "..."},
     "date": "2026-12-02T18:30:00+00:00",
     "figures": {"aec_steps_per_s": 12345.6, ...},
     "tables": [{"title": "...", "columns": ["env", "steps/s"], "rows": [["racko_v1", 12345]],
                 "note": "..."}]}
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from racko_env.files import write_text_atomic

REPO = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO / "docs" / "results"
NAME = re.compile(r"[a-z0-9_]+")
Cell = str | int | float | bool | None
HEADLINE_START = "<!-- results: headline -->"
HEADLINE_END = "<!-- /results -->"
# The docs' results page that shows each headline's file (docs/results/<page>.md).
HEADLINE_PAGES = {"time_to_expert": "training", "shipped_bots": "bots", "env_speed": "speed"}

__all__ = [
    "RESULTS_DIR",
    "ResultsError",
    "caption",
    "check_results",
    "format_cell",
    "headline_lines",
    "load_results",
    "markdown_table",
    "record_row",
    "update_readme",
    "write_results",
]


class ResultsError(ValueError):
    """A results file (or what is about to be written as one) that breaks the format."""


# ----------------------------------------------------------------------------- provenance


def current_commit() -> str:
    """The checkout's ``HEAD``, or ``racko <version>`` where this is not a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        from importlib.metadata import PackageNotFoundError, version

        try:
            return f"racko {version('racko')}"
        except PackageNotFoundError:
            return "unknown"


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def this_machine() -> dict[str, Any]:
    """Cores, load average (1, 5, 15 minutes) and CPU: a measure on a loaded machine says so."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # not on every platform
        load = []
    return {"cores": os.cpu_count() or 1, "load_average": load, "cpu": _cpu_name()}


# ----------------------------------------------------------------------------- the format


def _check_cell(value: Any, where: str) -> None:
    if not isinstance(value, Cell):
        raise ResultsError(f"{where}: {type(value).__name__} is not a number, text or null")


def check_results(data: Any, source: str = "results") -> dict[str, Any]:
    """``data`` if it is a well-formed results file; else ``ResultsError`` naming the problem."""
    if not isinstance(data, dict):
        raise ResultsError(f"{source}: expected a JSON object at the top level")
    for key, kind in (("command", str), ("commit", str), ("date", str), ("machine", dict)):
        if not isinstance(data.get(key), kind):
            raise ResultsError(f"{source}: '{key}' is missing or not a {kind.__name__}")
    if "cores" not in data["machine"] or "load_average" not in data["machine"]:
        raise ResultsError(f"{source}: 'machine' needs 'cores' and 'load_average'")
    figures = data.get("figures", {})
    if not isinstance(figures, dict):
        raise ResultsError(f"{source}: 'figures' must be an object of named numbers")
    for key, value in figures.items():
        _check_cell(value, f"{source}: figure {key!r}")
    tables = data.get("tables")
    if not isinstance(tables, list):
        raise ResultsError(f"{source}: 'tables' is missing or not a list")
    for i, table in enumerate(tables):
        where = f"{source}: table {i}"
        if not isinstance(table, dict) or not isinstance(table.get("title"), str):
            raise ResultsError(f"{where} needs a 'title'")
        columns, rows = table.get("columns"), table.get("rows")
        if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
            raise ResultsError(f"{where} ({table['title']}): 'columns' must be a list of names")
        if not isinstance(rows, list):
            raise ResultsError(f"{where} ({table['title']}): 'rows' must be a list")
        for r, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != len(columns):
                raise ResultsError(
                    f"{where} ({table['title']}): row {r} has not {len(columns)} cells"
                )
            for cell in row:
                _check_cell(cell, f"{where} ({table['title']}), row {r}")
        if "note" in table and not isinstance(table["note"], str):
            raise ResultsError(f"{where} ({table['title']}): 'note' must be text")
    return data


def _path(name: str, folder: str | Path | None) -> Path:
    if not NAME.fullmatch(name):
        raise ResultsError(f"results name {name!r}: use lowercase letters, digits and '_'")
    return Path(RESULTS_DIR if folder is None else folder) / f"{name}.json"


def write_results(
    name: str,
    *,
    command: str,
    tables: Sequence[Mapping[str, Any]],
    figures: Mapping[str, Any] | None = None,
    folder: str | Path | None = None,
    commit: str | None = None,
    date: str | None = None,
    machine: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``docs/results/<name>.json`` atomically and return its path.

    ``commit``, ``date`` and ``machine`` default to this checkout, now (UTC) and this machine;
    they are given only when a file records a measurement made earlier. The data is checked
    before anything is written, so a bad table never replaces a good file.
    """
    when = date or datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    data = {
        "name": name,
        "command": command,
        "commit": commit or current_commit(),
        "machine": dict(machine) if machine is not None else this_machine(),
        "date": when,
        "figures": dict(figures or {}),
        "tables": [dict(t) for t in tables],
    }
    path = _path(name, folder)
    check_results(json.loads(json.dumps(data)), str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def load_results(name: str, folder: str | Path | None = None) -> dict[str, Any]:
    """The checked contents of ``docs/results/<name>.json`` (``ResultsError`` if malformed)."""
    path = _path(name, folder)
    if not path.is_file():
        raise ResultsError(f"no results file {path}: run the command that measures {name}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    return check_results(data, str(path))


def record_row(
    name: str,
    *,
    command: str,
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    titles: Sequence[str] | None = None,
    folder: str | Path | None = None,
    note: str | None = None,
) -> Path:
    """Add one run's rows to table ``title`` of a file that gathers several runs (each row ends
    with the command that measured it; the rows of the same command are replaced).

    ``columns`` must end with ``"command"``; ``titles`` orders the file's tables; ``note``
    describes a table this run starts. The file's own ``command``, ``commit``, ``date`` and
    ``machine`` are the latest run's.
    """
    if not columns or columns[-1] != "command" or any(row[-1] != command for row in rows):
        raise ResultsError(f"results {name}: a gathered row ends with its command")
    try:
        tables = {t["title"]: t for t in load_results(name, folder)["tables"]}
    except ResultsError:  # none yet
        tables = {}
    table = tables.setdefault(title, {"title": title, "columns": list(columns), "rows": []})
    if note and "note" not in table:
        table["note"] = note
    table["columns"] = list(columns)
    table["rows"] = [r for r in table["rows"] if r[-1] != command] + [list(r) for r in rows]
    order = list(titles or []) + [t for t in tables if t not in (titles or [])]
    ordered = [tables[t] for t in order if t in tables]
    return write_results(name, command=command, tables=ordered, folder=folder)


# ----------------------------------------------------------------------------- rendering


def format_cell(value: Cell) -> str:
    """A cell as shown: integers with thousands separators, floats to a sensible precision."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        size = abs(value)
        if size >= 100:
            return f"{value:,.0f}"
        if size >= 10:
            return f"{value:.1f}"
        return f"{value:.3g}"
    return str(value)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Mapping[str, Any]) -> str:
    """A table as GitHub/MyST markdown: header, alignment row (numbers right-aligned), rows."""
    columns = table["columns"]
    rows = table["rows"]
    numeric = [
        bool(rows) and all(isinstance(r[i], int | float) or r[i] is None for r in rows)
        for i in range(len(columns))
    ]
    lines = ["| " + " | ".join(_escape(c) for c in columns) + " |"]
    lines.append("|" + "|".join("---:" if n else "---" for n in numeric) + "|")
    for row in rows:
        lines.append("| " + " | ".join(_escape(format_cell(c)) for c in row) + " |")
    return "\n".join(lines)


def caption(data: Mapping[str, Any]) -> str:
    """Where the figures come from: command, commit, date, machine (one line)."""
    machine = data["machine"]
    load = machine.get("load_average") or []
    load_text = f", load average {load[0]:.2f}" if load else ""
    cpu = f" ({machine['cpu']})" if machine.get("cpu") else ""
    commit = data["commit"]
    short = commit[:10] if re.fullmatch(r"[0-9a-f]{40}", commit) else commit
    return (
        f"Measured by `{data['command']}` at commit {short} on {data['date'][:10]}, "
        f"{machine['cores']} cores{cpu}{load_text}."
    )


# ----------------------------------------------------------------------------- the README


def _percent(value: Any) -> str:
    return f"{100 * value:.1f}%" if isinstance(value, float) and value <= 1 else str(value)


def _figures(name: str, keys: Sequence[str], folder: str | Path | None) -> dict[str, Any]:
    data = load_results(name, folder)
    missing = [k for k in keys if not isinstance(data["figures"].get(k), int | float)]
    if missing:
        raise ResultsError(f"results {name}: no number for {', '.join(missing)}")
    return {**data["figures"], "machine": _machine_text(data["machine"])}


def _machine_text(machine: Mapping[str, Any]) -> str:
    """``2 cores`` and, where recorded, the load: a wall-clock figure measures the machine too."""
    load = machine.get("load_average") or []
    return f"{machine['cores']} cores" + (f" at load average {load[0]:.1f}" if load else "")


def headline_lines(
    folder: str | Path | None = None, link_prefix: str = "docs/results/"
) -> list[str]:
    """The README's three headline results, each linking to the results page that shows it."""
    f = _figures("time_to_expert", ("minutes", "env_steps"), folder)
    b = _figures("shipped_bots", ("racko_2p_vs_heuristic", "racko_2p_vs_expert"), folder)
    s = _figures("env_speed", ("racko_v1_steps_per_s", "ratio_to_connect_four"), folder)
    page = {name: f"{link_prefix}{stem}.md" for name, stem in HEADLINE_PAGES.items()}
    return [
        f"- **Time to `expert`'s level:** the main job reaches it in {f['minutes']:.1f} minutes "
        f"({f['env_steps']:,} env steps) on {f['machine']} "
        f"([training results]({page['time_to_expert']})).",
        f"- **The shipped bots:** `racko_2p` wins {_percent(b['racko_2p_vs_heuristic'])} of "
        f"duplicate rounds against `heuristic` and {_percent(b['racko_2p_vs_expert'])} against "
        f"`expert` ([bot strength]({page['shipped_bots']})).",
        f"- **Speed:** the AEC env plays {format_cell(s['racko_v1_steps_per_s'])} steps/s, "
        f"{s['ratio_to_connect_four']:.1f}x PettingZoo's `connect_four_v3`, on {s['machine']} "
        f"([speed]({page['env_speed']})).",
    ]


def headline_block(folder: str | Path | None = None) -> str:
    """The README's block, markers included."""
    return "\n".join([HEADLINE_START, *headline_lines(folder), HEADLINE_END])


def update_readme(path: str | Path, folder: str | Path | None = None, check: bool = False) -> bool:
    """Regenerate the headline block of the README at ``path``; True if it changed.

    ``check=True`` writes nothing (the test that fails when the README is out of sync).
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    start, end = text.find(HEADLINE_START), text.find(HEADLINE_END)
    if start < 0 or end < start:
        raise ResultsError(f"{path}: no block between {HEADLINE_START} and {HEADLINE_END}")
    new = text[:start] + headline_block(folder) + text[end + len(HEADLINE_END) :]
    if new != text and not check:
        write_text_atomic(path, new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the README's headline results.")
    parser.add_argument("--update", metavar="README", required=True, help="the file to update")
    parser.add_argument("--check", action="store_true", help="only say whether it is stale")
    args = parser.parse_args(argv)
    try:
        changed = update_readme(args.update, check=args.check)
    except (ResultsError, OSError, KeyError) as exc:
        print(f"results: {exc}", file=sys.stderr)
        return 2
    if args.check and changed:
        print(f"{args.update}: the headline block is stale; run --update {args.update}")
        return 1
    print(f"{args.update}: {'updated' if changed else 'up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
