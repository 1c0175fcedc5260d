"""Duplicate rounds between any batchable bots on the batched engine, from the command line.

    python -m benchmarks.batched_duplicate --players 2 --rounds 2000 \
        --bots runs/2p/bot.onnx agents/pretrained/racko_2p.onnx expert heuristic

The same format as ``python train/evaluate.py`` (every table, every seating of every deal) played
by ``racko_eval.quick_eval.play_duplicate``: bots decide for whole batches (the vectorized baselines,
ONNX bot files), so thousands of rounds between bot files take minutes, not hours. Used for the
shipped-bot comparisons in docs/training.md. Prints each bot's win rate with its 95% interval.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from agents.batched import load_batch  # noqa: E402
from racko_eval import (
    play_duplicate,  # noqa: E402
    unique_labels,  # noqa: E402
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2000, help="deals (each in every seating)")
    parser.add_argument("--bots", nargs="+", required=True, help="bot specs (2 or more)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the report here")
    args = parser.parse_args(argv)
    if len(args.bots) < 2:
        parser.error("--bots needs at least two bots")
    import torch

    torch.set_num_threads(1)
    labels = unique_labels(args.bots)
    bots = [load_batch(spec, args.players, seed=args.seed) for spec in args.bots]
    t0 = time.time()
    report = play_duplicate(bots, labels, args.players, {}, args.rounds, args.seed)
    report["seconds"] = round(time.time() - t0, 1)
    report["command"] = " ".join(["python", "benchmarks/batched_duplicate.py", *sys.argv[1:]])
    for label, r in report["bots"].items():
        lo, hi = r["ci95"]
        print(f"{label:40s} {r['win_rate']:6.1%} ({lo:.1%}-{hi:.1%})  {r['seats']:,} seats")
    print(
        f"{args.rounds:,} deals x {report['seatings_per_deal']} seatings in {report['seconds']} s"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
