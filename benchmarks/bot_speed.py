"""Time per decision of the shipped bots against the hand-written ``expert``, one decision at a time.

What a front end pays to ask a bot for a move: ``bot.act(observation)`` on the observations a seat
meets in real play (recorded once, the same for every bot). Bots are measured in turns, interleaved
over the repeats so that load from other processes hits them alike; the table shows the median
milliseconds per decision and the ratio to ``expert`` (the pure-Python planner).

    python -m benchmarks.bot_speed                    # 2, 3 and 4 players, 3 repeats
    python -m benchmarks.bot_speed --players 2 --decisions 500 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

import agents
from train.common.onnx_export import sample_observations

REPO = Path(__file__).resolve().parent.parent


def bots_for(players: int) -> dict[str, Any]:
    bots = {
        "expert": agents.load("expert", num_players=players),
        "heuristic": agents.load("heuristic", num_players=players),
    }
    path = REPO / "agents" / "pretrained" / f"racko_{players}p.onnx"
    if path.is_file():
        bots[f"racko_{players}p.onnx"] = agents.load(str(path), num_players=players)
    return bots


def time_bot(bot: Any, obs: np.ndarray, masks: np.ndarray) -> float:
    """Milliseconds per decision over all recorded observations."""
    t0 = time.perf_counter()
    for o, m in zip(obs, masks, strict=True):
        bot.act({"observation": o, "action_mask": m})
    return (time.perf_counter() - t0) * 1000 / len(obs)


def measure(players: int, decisions: int, repeats: int) -> dict[str, Any]:
    obs, masks = sample_observations(players, {}, decisions, seed=players)
    bots = bots_for(players)
    times: dict[str, list[float]] = {name: [] for name in bots}
    for _ in range(repeats):
        for name, bot in bots.items():
            times[name].append(time_bot(bot, obs, masks))
    median = {name: statistics.median(t) for name, t in times.items()}
    return {
        "players": players,
        "decisions": decisions,
        "ms_per_decision": {k: round(v, 3) for k, v in median.items()},
        "ratio_to_expert": {k: round(v / median["expert"], 2) for k, v in median.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write the results as JSON")
    args = parser.parse_args(argv)
    results = [measure(p, args.decisions, args.repeats) for p in args.players]
    print("| players | bot | ms per decision | ratio to expert |")
    print("|---:|---|---:|---:|")
    for r in results:
        for name, ms in r["ms_per_decision"].items():
            print(f"| {r['players']} | {name} | {ms:.3f} | {r['ratio_to_expert'][name]:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
