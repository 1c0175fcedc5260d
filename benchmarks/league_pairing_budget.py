"""What one slow, hostile submission costs a league, with and without its clock per pairing.

    python -m benchmarks.league_pairing_budget /tmp/budget              # 24 bots + the burner
    python -m benchmarks.league_pairing_budget /tmp/budget --bots 12 --rounds 1

Three leagues of the same ``--bots`` generated submissions (benchmarks/league_scale.py: the
expert with a growing share of random moves), each a one-file bot that plays sandboxed: without
the burner; with the burner (a submission that answers every move legally but leaves one more
thread spinning in its own process each move, and sleeps, within the move limit and the round's
clock) under the league's default clock per pairing; and with the burner and no clock per
pairing to speak of. Each league uses the adaptive schedule with few pairings per bot and small
pairings, so the whole runs in minutes. The table gives each league's wall time, its pairings,
and the longest pairing of the burner and of the others (wall time, sandboxes' start included),
and the file ``docs/results/league_pairing_budget.json``.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path
from typing import Any

from benchmarks.league_scale import write_bots

BURNER = '''"""Answers every move legally, but leaves a thread spinning each move, and takes its time."""

import threading
import time

from agents.obs import legal_actions


def _burn():
    while True:
        pass


class Bot:
    def reset(self):
        pass

    def act(self, obs):
        threading.Thread(target=_burn, daemon=True).start()
        time.sleep(0.4)
        return legal_actions(obs)[0]
'''

COLUMNS = [
    "league",
    "bots",
    "pairing clock (s)",
    "pairings",
    "wall seconds",
    "longest burner pairing (s)",
    "longest other pairing (s)",
    "burner forfeits",
]
NO_CLOCK = 1e6  # seconds: a clock per pairing no pairing reaches


def one_league(folder: Path, args: argparse.Namespace, pairing_seconds: float | None) -> dict:
    """Run a league in ``folder``; its report and wall time."""
    from racko_apps.league.run import run_league
    from racko_apps.sandbox.toolkit import ALLOW_ALL
    from racko_apps.sandbox.wire import Limits

    began = time.perf_counter()
    report = run_league(
        folder,
        rounds=args.rounds,
        seed=0,
        limits=Limits(move_seconds=5.0),  # racko league's own default
        allow=ALLOW_ALL,  # the generated bots wrap expert
        max_pairings=args.max_pairings,
        workers=args.workers,
        pairing_seconds=pairing_seconds,
        budget_minutes=0,
        log=lambda line: print(line, flush=True),
    )
    report["wall_seconds"] = round(time.perf_counter() - began, 1)
    return report


def row(name: str, report: dict[str, Any], bots: int) -> list[Any]:
    """A league's row of the table."""
    burner = [p for p in report["pairings"] if "burner" in (p["a"], p["b"])]
    others = [p for p in report["pairings"] if p not in burner]
    forfeits = sum(b["forfeits"] for b in report["bots"] if b["name"] == "burner")
    return [
        name,
        bots,
        report["config"]["pairing_seconds"],
        len(report["pairings"]),
        report["wall_seconds"],
        max((p.get("seconds", 0.0) for p in burner), default=None),
        max((p.get("seconds", 0.0) for p in others), default=None),
        forfeits if burner else None,
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a scratch folder (emptied first)")
    parser.add_argument("--bots", type=int, default=24, help="generated submissions (default 24)")
    parser.add_argument("--rounds", type=int, default=1, help="deals per pairing (default 1)")
    parser.add_argument("--max-pairings", type=int, default=2, help="per bot (default 2)")
    parser.add_argument("--workers", type=int, help="default: one per core")
    parser.add_argument("--results-dir", type=Path, help="default docs/results")
    args = parser.parse_args(argv)
    shutil.rmtree(args.folder, ignore_errors=True)
    rows = []
    for name, burner, clock in (
        ("without the burner", False, None),
        ("with the burner, default clock", True, None),
        ("with the burner, no pairing clock", True, NO_CLOCK),
    ):
        folder = args.folder / name.replace(" ", "_").replace(",", "")
        write_bots(folder, args.bots)
        if burner:
            (folder / "burner.py").write_text(BURNER)
        rows.append(row(name, one_league(folder, args, clock), args.bots + burner))
        print(dict(zip(COLUMNS, rows[-1], strict=True)), flush=True)
    from benchmarks import command_line
    from racko_eval.results import write_results

    table = {
        "title": "A league with and without a slow, legal, thread-burning submission",
        "columns": COLUMNS,
        "rows": rows,
    }
    path = write_results(
        "league_pairing_budget",
        command=command_line("league_pairing_budget", argv),
        tables=[table],
        folder=args.results_dir,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
