"""Generic learners on the feature observation: linear Q-learning and DQN, each trained for a few
minutes against ``heuristic``, then measured against ``heuristic`` and ``expert`` in duplicate
rounds with 95% Wilson intervals; writes ``docs/results/features_learners.json``.

    python -m benchmarks.features_learners                    # the documented run
    python -m benchmarks.features_learners --rounds 100 --linear-steps 20000 --dqn-steps 20000

Each learner is its one-file trainer (``train/reference/linear_q_features.py``, ``train/reference/dqn_features.py``)
called with the settings the table shows, on one thread; the evaluation plays every deal in both
seatings on the batched engine (``racko_eval.quick_win_rates``), with deals the training never
saw (the evaluation's seed differs from the training's).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

BASELINES = ("heuristic", "expert")
EVAL_SEED_OFFSET = 10_000  # evaluation deals apart from the training's


NETWORKS = {"slots": "DQN, slot network", "flat": "DQN, flat MLP"}


def learners(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every learner to measure: its figure key, label, trainer module and settings."""
    from train.reference import dqn_features, linear_q_features

    common = {"seed": args.seed, "shaping": args.shaping, "quiet": True}
    out = []
    if args.linear_steps:
        settings = linear_q_features.Args(total_steps=args.linear_steps, **common)
        out.append(
            {"key": "linear_q", "label": "linear Q-learning", "trainer": linear_q_features}
            | {"settings": settings}
        )
    for network in args.dqn_networks:
        settings = dqn_features.Args(network=network, total_steps=args.dqn_steps, **common)
        out.append(
            {"key": f"dqn_{network}", "label": NETWORKS[network], "trainer": dqn_features}
            | {"settings": settings}
        )
    return out


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Train each learner, then its greedy policy's win rates against the baselines."""
    from racko_eval import quick_win_rates

    rows = []
    for learner in learners(args):
        t0 = time.perf_counter()
        bot, training = learner["trainer"].train(learner["settings"])
        minutes = (time.perf_counter() - t0) / 60
        learner["return"] = training["history"][-1]["mean_return"]
        rates = quick_win_rates(
            bot, list(BASELINES), args.rounds, args.seed + EVAL_SEED_OFFSET, 2, {}
        )
        rows.append({**learner, "minutes": minutes, "rates": rates})
        print(f"{learner['label']}: {minutes:.1f} min, {_rates_text(rates)}", flush=True)
    return rows


def _rate(entry: dict[str, Any]) -> str:
    low, high = entry["ci95"]
    return f"{100 * entry['win_rate']:.1f}% ({100 * low:.1f}-{100 * high:.1f})"


def _rates_text(rates: dict[str, dict[str, Any]]) -> str:
    return "; ".join(f"against {opp} {_rate(r)}" for opp, r in rates.items())


def results_tables(rows: list[dict[str, Any]], rounds: int) -> list[dict[str, Any]]:
    columns = ["learner", "decisions", "shaping", "training minutes", "last training return"]
    columns += [f"win rate against {b} (95% CI)" for b in BASELINES]
    body = [
        [r["label"], r["settings"].total_steps, r["settings"].shaping, round(r["minutes"], 1)]
        + [round(r["return"], 3)]
        + [_rate(r["rates"][b]) for b in BASELINES]
        for r in rows
    ]
    note = (
        "Trained against heuristic (the trainers' other settings at their defaults), one thread, "
        f"2 players, reward +1/-1 per round; then {rounds:,} duplicate deals against each "
        f"baseline, each in both seatings ({2 * rounds:,} rounds), on deals the training never "
        "saw. Chance is 50%. The last training return is the mean reward (+1/-1, 0 for a round "
        "cut off by the turn limit) of the last 1,000 training rounds, exploration included."
    )
    title = "Learners on the feature observation"
    return [{"title": title, "columns": columns, "rows": body, "note": note}]


def figures(rows: list[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in rows:
        key = r["key"]
        out[f"{key}_minutes"] = round(r["minutes"], 2)
        for b in BASELINES:
            entry = r["rates"][b]
            out[f"{key}_vs_{b}"] = round(entry["win_rate"], 4)
            out[f"{key}_vs_{b}_low"], out[f"{key}_vs_{b}_high"] = (
                round(x, 4) for x in entry["ci95"]
            )
    return out


def main(argv: list[str] | None = None) -> int:
    from benchmarks import command_line
    from racko_eval.results import markdown_table, write_results

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--linear-steps", type=int, default=150_000, help="0: skip linear Q")
    parser.add_argument("--dqn-steps", type=int, default=150_000)
    parser.add_argument(
        "--dqn-networks", nargs="*", default=["slots", "flat"], choices=["slots", "flat"]
    )
    parser.add_argument("--shaping", type=float, default=1.0, help="both learners' --shaping")
    parser.add_argument("--rounds", type=int, default=1000, help="deals against each baseline")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--results-dir", metavar="DIR", help="default docs/results")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    if args.linear_steps < 0 or (args.dqn_networks and args.dqn_steps < 1):
        parser.error("--linear-steps must be 0 or more and --dqn-steps at least 1")
    rows = measure(args)
    tables = results_tables(rows, args.rounds)
    print(markdown_table(tables[0]))
    path = write_results(
        "features_learners",
        command=command_line("features_learners", argv),
        tables=tables,
        figures=figures(rows),
        folder=args.results_dir,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
