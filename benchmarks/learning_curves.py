"""Learning curves of training runs: every periodic evaluation of each run folder's
``eval_history.json`` (the evaluation record every trainer writes, ``train.common.eval_record``)
as a table; writes ``docs/results/learning_curves.json``.

    python -m benchmarks.learning_curves runs/2p runs/3p runs/4p

``python -m benchmarks.time_to_expert`` writes the curve of the run it makes the same way.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import rate_text, shown


def _cell(row: dict[str, Any], key: str) -> str | None:
    return rate_text(row[key], row[f"{key}_ci95"]) if key in row else None


def curve_table(run: Path, history: list[dict[str, Any]]) -> dict[str, Any]:
    """One run's curve: env steps (or iteration), minutes, each opponent's column."""
    skip = {"timesteps", "iteration", "minutes", "rounds", "final"}
    opponents = [k for k in history[0] if k not in skip and not k.endswith("_ci95")]
    x = "timesteps" if "timesteps" in history[0] else "iteration"
    columns = ["env steps" if x == "timesteps" else "iteration", "minutes", "rounds"]
    columns += [f"vs `{o}`" if o != "learner" else "learner" for o in opponents]
    rows = [
        [row.get(x), row.get("minutes"), row.get("rounds"), *(_cell(row, o) for o in opponents)]
        for row in history
    ]
    return {
        "title": f"Learning curve of {shown(run)}",
        "columns": columns,
        "rows": rows,
        "note": "the learner's win rate (95% CI) in duplicate rounds at each evaluation; the last "
        "row is the final evaluation",
    }


def write_curves(runs: Sequence[Path], command: str, folder: str | None = None) -> Path:
    from racko_eval.results import write_results

    tables = []
    for run in runs:
        path = Path(run) / "eval_history.json"
        if not path.is_file():
            raise SystemExit(f"learning_curves: {path} not found (is {run} a run folder?)")
        history = json.loads(path.read_text(encoding="utf-8"))
        if history:
            tables.append(curve_table(Path(run), history))
    return write_results("learning_curves", command=command, tables=tables, folder=folder)


def main(argv: list[str] | None = None) -> int:
    from benchmarks import command_line

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders")
    parser.add_argument("--results-dir", metavar="DIR", help="default docs/results")
    args = parser.parse_args(argv)
    path = write_curves(args.runs, command_line("learning_curves", argv), args.results_dir)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
