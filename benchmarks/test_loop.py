"""How long the tests take: the inner loop (``pytest -m "not slow"``) and the full suite, each run
once on this machine with ``-n 2`` as docs/contributing.md says, side by side in one command.

    python -m benchmarks.test_loop                  # both, then docs/results/test_loop.json
    python -m benchmarks.test_loop --only quick     # the inner loop alone

Each run's wall time, the CPU time of its processes (pytest and its workers, user + system), its
counts from pytest's closing line and the load average before it go into the results file. The
targets of docs/contributing.md: the inner loop within 90 seconds, the full suite within 12
minutes, on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import REPO, command_line

RUNS = {"quick": ["-m", "not slow"], "full": []}
TARGET_SECONDS = {"quick": 90.0, "full": 12 * 60.0}
COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|deselected)")
FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)  # pytest's short summary (-ra)
TITLE = "The test suite with pytest -n {}"
SHOWN = {"quick": "pytest -m 'not slow'", "full": "pytest (all)"}


def run_suite(name: str, workers: int, paths: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run one set of tests (``paths``: default the suite's testpaths) in a child pytest; its
    wall and CPU seconds and its counts."""
    command = [sys.executable, "-m", "pytest", "-q", "-n", str(workers), "-p", "no:cacheprovider"]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [*command, *RUNS[name], *paths], cwd=REPO, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    closing = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    counts = {kind.rstrip("s"): int(n) for n, kind in COUNT.findall(closing)}
    return {
        "name": name,
        "wall": round(wall, 1),
        "cpu": round(cpu, 1),
        "load": round(load, 2),
        "passed": counts.get("passed", 0),
        "failed": counts.get("failed", 0) + counts.get("error", 0),
        "skipped": counts.get("skipped", 0),
        "exit": done.returncode,
        "failures": FAILED.findall(done.stdout),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", choices=sorted(RUNS), action="append", help="one set (repeatable)"
    )
    parser.add_argument("--workers", type=int, default=2, help="pytest -n (default 2)")
    parser.add_argument("--results-dir", type=Path, help="default docs/results")
    args = parser.parse_args(argv)
    rows, figures = [], {}
    names = args.only or list(RUNS)
    for name in names:
        got = run_suite(name, args.workers)
        print(got, flush=True)
        figures[f"{name}_wall_seconds"] = got["wall"]
        figures[f"{name}_failures"] = " ".join(got["failures"]) or None
        rows.append(
            [
                SHOWN[name],
                got["passed"],
                got["failed"],
                got["skipped"],
                got["wall"],
                got["cpu"],
                TARGET_SECONDS[name],
                got["wall"] <= TARGET_SECONDS[name],
                got["load"],
            ]
        )
    from racko_eval.results import load_results, write_results

    rows, figures = _kept(load_results, args, names, rows, figures)
    path = write_results(
        "test_loop",
        command=command_line("test_loop", argv),
        tables=[
            {
                "title": TITLE.format(args.workers),
                "columns": [
                    "tests",
                    "passed",
                    "failed",
                    "skipped",
                    "wall time (s)",
                    "CPU (s)",
                    "target (s)",
                    "within target",
                    "load average before",
                ],
                "rows": rows,
            }
        ],
        figures=figures,
        folder=args.results_dir,
    )
    print(f"wrote {path}")
    return 0


def _kept(load: Any, args: argparse.Namespace, names: list[str], rows: list, figures: dict):
    """This run's rows and figures, after those of the sets it did not run (``--only``) from the
    results file already there, when it was measured with the same ``-n``."""
    try:
        old = load("test_loop", args.results_dir)
    except ValueError:  # racko_eval.results.ResultsError: none yet, or unreadable
        return rows, figures
    table = old["tables"][0]
    if table["title"] != TITLE.format(args.workers):
        return rows, figures
    keep = [SHOWN[n] for n in RUNS if n not in names]
    kept_rows = [r for r in table["rows"] if r[0] in keep]
    kept = {k: v for k, v in old["figures"].items() if k.split("_")[0] not in names}
    return kept_rows + rows, {**kept, **figures}


if __name__ == "__main__":
    raise SystemExit(main())
