"""The tutorial's own bot: runs ``docs/tutorial.py`` with its full settings, as a student would,
and records how the bot it trained did in its tournament; writes ``docs/results/tutorial.json``.

    python -m benchmarks.tutorial_bot

Keeps the head-to-head win rates the tutorial writes to ``tournament.json``, and its wall and CPU
time from start to end.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import publish, rate_text

REPO = Path(__file__).resolve().parent.parent
TUTORIAL = REPO / "docs" / "tutorial.py"


def run_tutorial(out: Path) -> tuple[float, float]:
    """Run the tutorial into ``out`` (its output shown as it goes); its wall time and CPU time in
    seconds (on a busy machine the wall time measures the load too, the CPU time does not)."""
    env = {**os.environ, "RACKO_TUTORIAL_OUT": str(out)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    t0, cpu0 = time.perf_counter(), _children_cpu()
    subprocess.run([sys.executable, str(TUTORIAL)], cwd=REPO, env=env, check=True)
    return time.perf_counter() - t0, _children_cpu() - cpu0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def results_of(
    head_to_head: dict[str, Any], seconds: float, cpu_seconds: float
) -> tuple[list[dict], dict]:
    """The results file's table and figures from the tutorial's head-to-head record."""
    rows = []
    figures = {"minutes": round(seconds / 60, 2), "cpu_minutes": round(cpu_seconds / 60, 2)}
    for opponent, entry in head_to_head.items():
        rows.append([opponent, entry["games"], rate_text(entry["win_rate"], entry["ci95"])])
        figures[f"vs_{opponent}"] = round(entry["win_rate"], 4)
        figures[f"vs_{opponent}_low"], figures[f"vs_{opponent}_high"] = (
            round(x, 4) for x in entry["ci95"]
        )
    games = {entry["games"] for entry in head_to_head.values()}
    note = (
        f"The tutorial's duplicate tournament ({', '.join(map(str, sorted(games)))} games a pair, "
        f"every deal in both seatings). The whole tutorial, training included, ran in "
        f"{seconds / 60:.1f} minutes wall, {cpu_seconds / 60:.1f} minutes of CPU."
    )
    table = {
        "title": "The tutorial's bot against each bot of its tournament",
        "columns": ["opponent", "games", "the tutorial bot's win rate (95% CI)"],
        "rows": rows,
        "note": note,
    }
    return [table], figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, help="the tutorial's output folder (default: a temp one)"
    )
    parser.add_argument("--results-dir", metavar="DIR", help="default docs/results")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="racko-tutorial-") as scratch:
        out = args.out or Path(scratch)
        seconds, cpu_seconds = run_tutorial(out)
        record = json.loads((out / "tournament.json").read_text(encoding="utf-8"))
    tables, figures = results_of(record["head_to_head"], seconds, cpu_seconds)
    publish("tutorial_bot", argv, tables, figures, args.results_dir, name="tutorial")
    return 0


if __name__ == "__main__":
    sys.exit(main())
