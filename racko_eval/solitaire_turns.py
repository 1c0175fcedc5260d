"""Solitaire evaluation (``racko evaluate --players 1``): every bot plays the same deals alone,
and the report gives each bot's mean turns to Rack-O with a 95% interval.

Solitaire has no win to share, so the duplicate format reduces to this: each deal (one seed,
``env.reset(seed=deal_seed)``) is played once by every bot, and a bot's score on it is the
number of turns the round took, counting the turn that goes Rack-O and cut at the rules' turn
limit (a round cut off counts ``turn_limit``). That is the measure of ``racko_env.solitaire``'s
exact ``evaluate(..., turn_limit=...)`` and of the ``solitaire_full`` rubric, so the mean here
estimates the same expected value, and ``mean_ci95`` (``racko_env.solitaire_env``) gives its
interval, as the solitaire ladder's benchmark does. Since every bot plays the same deals, the
report also gives each pair's mean paired difference with its own 95% interval: tighter than
the two intervals apart. The report: docs/evaluation/evaluate.md.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from racko_env.solitaire_env import mean_ci95


def _interval(values: np.ndarray) -> dict[str, Any]:
    """The mean of ``values`` and its 95% interval, rounded for the report."""
    mean, low, high = mean_ci95(values)
    return {"mean": round(mean, 6), "ci95": [round(low, 6), round(high, 6)]}


def solitaire_report(
    labels: Sequence[str],
    specs: Sequence[str],
    outcomes: list[list[list[Any]]],
    rules: dict[str, Any],
    seed: int,
) -> dict[str, Any]:
    """The report (``config``, ``bots``, ``pairs``) of a solitaire evaluation, from the
    tournament's outcomes of one one-seat table per bot: ``SeatResult`` per deal, per table (in
    the bots' order), per seat."""
    turns, rackos = solitaire_turns(outcomes, rules["turn_limit"])
    bots = []
    for b, label in enumerate(labels):
        stats = _interval(turns[:, b])
        won = turns[rackos[:, b], b]
        bots.append(
            {
                "name": label,
                "spec": specs[b],
                "played": int(len(turns)),
                "mean_turns": stats["mean"],
                "mean_turns_ci95": stats["ci95"],
                "rackos": int(rackos[:, b].sum()),
                "cut_off": int((~rackos[:, b]).sum()),
                "mean_turns_to_racko": round(float(won.mean()), 4) if len(won) else None,
            }
        )
    pairs = []
    for a, b in itertools.combinations(range(len(labels)), 2):
        stats = _interval(turns[:, a] - turns[:, b])
        pairs.append(
            {
                "bots": [labels[a], labels[b]],
                "mean_difference": stats["mean"],
                "difference_ci95": stats["ci95"],
            }
        )
    config = {
        "players": 1,
        "unit": "round",
        "deals": int(len(turns)),
        "seatings_per_deal": len(labels),
        "seed": seed,
        "bots": list(specs),
        "rules": rules,
    }
    return {"config": config, "bots": bots, "pairs": pairs}


def solitaire_turns(outcomes: list[list[list[Any]]], turn_limit: int) -> tuple[np.ndarray, ...]:
    """(turns, rackos), each [deals, bots]: the own turns of a round that went Rack-O (in
    solitaire every turn is the bot's), else ``turn_limit``, the turn that cut the round off."""
    turns = np.array(
        [
            [m[0].racko_turns[0] if m[0].racko_turns else turn_limit for m in deal]
            for deal in outcomes
        ],
        dtype=np.int64,
    )
    rackos = np.array([[bool(m[0].racko_turns) for m in deal] for deal in outcomes], dtype=bool)
    return turns, rackos


def format_solitaire(report: dict[str, Any]) -> str:
    """A solitaire report as Markdown tables: each bot's mean turns (fewest first), then the
    paired differences."""
    lines = [
        "| bot | rounds | mean turns (95% CI) | Rack-Os | cut off |",
        "|---|---:|---|---:|---:|",
    ]
    for b in sorted(report["bots"], key=lambda b: b["mean_turns"]):
        lo, hi = b["mean_turns_ci95"]
        lines.append(
            f"| {b['name']} | {b['played']} | {b['mean_turns']:.3f} ({lo:.3f}-{hi:.3f}) | "
            f"{b['rackos']} | {b['cut_off']} |"
        )
    if report["pairs"]:
        lines += ["", "| bots (a - b) | mean difference in turns (95% CI) |", "|---|---|"]
        for p in report["pairs"]:
            lo, hi = p["difference_ci95"]
            a, b = p["bots"]
            lines.append(f"| {a} - {b} | {p['mean_difference']:+.3f} ({lo:+.3f} to {hi:+.3f}) |")
    return "\n".join(lines)


def plot_solitaire(report: dict[str, Any], path: Path) -> None:
    """A horizontal bar chart of the bots' mean turns with their 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cfg, bots = report["config"], report["bots"]
    means = [b["mean_turns"] for b in bots]
    err = [
        [m - b["mean_turns_ci95"][0] for m, b in zip(means, bots, strict=True)],
        [b["mean_turns_ci95"][1] - m for m, b in zip(means, bots, strict=True)],
    ]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.5 * len(bots)))
    ax.barh([b["name"] for b in bots], means, xerr=err, capsize=4, color="tab:blue")
    ax.invert_yaxis()
    ax.set_xlabel("mean turns to Rack-O (95% interval; fewer is better)")
    ax.set_title(f"solitaire, the same {cfg['deals']} deals for every bot, seed {cfg['seed']}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
