"""A class-sized league: N generated submissions of graded strength, rated by ``racko league``.

    python -m benchmarks.league_scale /tmp/class --bots 200        # writes the bots, runs it
    python -m benchmarks.league_scale /tmp/class --bots 40 --rounds 20   # options of the league
    python -m benchmarks.league_scale /tmp/class --bots 200 --write-only
    racko league /tmp/class --allow '*'                            # the same league by hand

Submission ``s_NNN.py`` is the expert bot that plays a random legal move with probability
``NNN / (N - 1)`` (``s_000`` is the expert itself, the last one plays at random), each a file
``racko new-bot`` could have written: it plays sandboxed like any student's bot. The true order
is known, so the league's ranking can be checked: the script prints the wall time, the pairings
played, the rounds per second, the CPU seconds of the league and of the processes it reaped
(not those inside isolated sandboxes: a cgroup's ``cpuacct.usage`` counts them), how sure the
ratings are (from league.json) and the Spearman rank correlation between the league's order and
the true one, and adds the league's row to ``docs/results/league_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

BOT = '''"""The expert, but a random legal move with probability {p} (benchmarks/league_scale.py)."""

import random

import agents
from agents.obs import legal_actions

P = {p}


class Bot:
    def __init__(self, num_players=2, seed=None):
        self.expert = agents.load("expert", num_players)
        self.rng = random.Random(seed)

    def seed(self, seed):
        self.rng.seed(seed)

    def reset(self):
        self.expert.reset()

    def act(self, obs):
        if self.rng.random() < P:
            return self.rng.choice(legal_actions(obs))
        return self.expert.act(obs)
'''


def write_bots(folder: Path, n: int) -> list[str]:
    """``n`` submissions in ``folder``, strongest first; their labels in true order."""
    folder.mkdir(parents=True, exist_ok=True)
    labels = []
    for i in range(n):
        label = f"s_{i:03d}"
        (folder / f"{label}.py").write_text(BOT.format(p=round(i / max(1, n - 1), 4)))
        labels.append(label)
    return labels


def spearman(order: list[str], truth: list[str]) -> float:
    """Spearman's rank correlation of two orders of the same labels (no ties)."""
    rank = {label: i for i, label in enumerate(order)}
    n = len(truth)
    d2 = sum((rank[label] - i) ** 2 for i, label in enumerate(truth))
    return 1 - 6 * d2 / (n * (n * n - 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--write-only", action="store_true", help="write the bots, do not run")
    args, league_args = parser.parse_known_args(argv)  # the rest goes to racko league
    args.league_args = [a for a in league_args if a != "--"]
    truth = write_bots(args.folder, args.bots)
    if args.write_only:
        print(f"wrote {args.bots} bots to {args.folder}")
        return 0
    from racko_apps.league import main as league_main

    start, cpu0 = time.perf_counter(), os.times()
    allow = [] if "--allow" in args.league_args else ["--allow", "*"]  # the bots wrap expert
    code = league_main([str(args.folder), *allow, *args.league_args])
    seconds, cpu1 = time.perf_counter() - start, os.times()
    # CPU of the league and of the processes it reaped (its workers, bwrap's outer processes).
    # Not of what ran inside an isolated sandbox: those processes end with their PID namespace
    # and are reaped by no one who counts them; a cgroup's cpuacct.usage counts everything
    cpu = sum(cpu1[:4]) - sum(cpu0[:4])
    report = json.loads((args.folder / "league.json").read_text())
    order = [b["name"] for b in report["bots"]]
    rounds = sum(p["rounds"] for p in report["pairings"])
    summary = {
        "bots": args.bots,
        "wall_seconds": round(seconds, 1),
        "pairings": len(report["pairings"]),
        "rounds": rounds,
        "rounds_per_second": round(rounds / seconds, 2) if seconds else None,
        "cpu_seconds_reaped": round(cpu, 1),
        "cpu_seconds_reaped_per_pairing": round(cpu / len(report["pairings"]), 3)
        if report["pairings"]
        else None,
        "load_average_1min_at_end": round(os.getloadavg()[0], 1),
        "spearman": round(spearman(order, truth), 4),
        "sure": report.get("sure"),
        "config": report["config"],
    }
    print(json.dumps(summary, indent=2))
    print(f"wrote {record(summary, argv)}")
    return code


COLUMNS = [
    "bots",
    "pairings",
    "rounds",
    "wall seconds",
    "rounds/s",
    "CPU seconds reaped",
    "Spearman vs true order",
    "command",
]


def record(summary: dict, argv: list[str] | None) -> Path:
    """This league's row in ``docs/results/league_scale.json``, which gathers leagues of
    several sizes (each row names its command)."""
    from benchmarks import command_line
    from racko_eval.results import record_row

    command = command_line("league_scale", argv)
    row = [
        summary["bots"],
        summary["pairings"],
        summary["rounds"],
        summary["wall_seconds"],
        summary["rounds_per_second"],
        summary["cpu_seconds_reaped"],
        summary["spearman"],
        command,
    ]
    return record_row(
        "league_scale", command=command, title="A class-sized league", columns=COLUMNS, row=row
    )


if __name__ == "__main__":
    sys.exit(main())
