"""What the feature observation's one-file learners share and is not their algorithm: the games
they train on, the shaping potential of a feature row, the check of their bot flags, the
progress line and the end of a run (the duplicate evaluation, ``metrics.json``). The learning
itself is in each learner's file, top to bottom: ``train/reference/linear_q_features.py``,
``train/reference/dqn_features.py``.

Each learner's ``Args`` has the fields read here: ``seed``, ``num_players``, ``num_envs``,
``opponent``, ``eval_opponents``, ``eval_rounds``, ``out`` and ``quiet``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

import agents
import racko_env  # noqa: F401 - registers racko/Racko-v1
from agents.feature_obs import LOG_COST, FeatureObservationVector, columns
from racko_env.files import write_text_atomic

COST = next(c.index for c in columns() if c.name == "cost")  # log(1 + the rack's plan cost)


def potential(feats: np.ndarray) -> np.ndarray:
    """Phi(s) = -log(1 + plan cost) / its largest value: 0 for a rack in order, -1 for no plan."""
    return -feats[:, COST] / LOG_COST


def opponents(args: Any) -> list[str]:
    """The ``--eval-opponents`` bots, in order."""
    return [o for o in args.eval_opponents.split(",") if o]


def bot_problem(args: Any) -> str | None:
    """A one-line description of the first ``--opponent`` or ``--eval-opponents`` bot that does
    not load, or None."""
    for spec in [args.opponent, *opponents(args)]:
        try:
            agents.load(spec, args.num_players)
        except (ValueError, FileNotFoundError) as err:
            return f"bot {spec!r}: {err}"
    return None


def make_envs(args: Any) -> FeatureObservationVector:
    """``num_envs`` games on the batched engine, the learner in one seat of each, observing the
    features (the games' own autoreset: the step after an episode's last one starts it again)."""
    return FeatureObservationVector(
        gymnasium.make_vec(
            "racko/Racko-v1",
            num_envs=args.num_envs,
            vectorization_mode="vector_entry_point",
            num_players=args.num_players,
            opponents=[args.opponent],
            reward="win",
            seed=args.seed,
        )
    )


def progress(
    history: list[dict[str, float]],
    returns: list[float],
    step: int,
    eps: float,
    start: float,
    quiet: bool,
    **extra: float,
) -> None:
    """Add a row to ``history`` (the mean return of the last 1000 rounds, epsilon, ``extra`` such
    as the loss, the speed) and print it unless ``quiet``."""
    recent = returns[-1000:]
    row = {
        "step": step,
        "episodes": len(returns),
        "mean_return": float(np.mean(recent)) if recent else 0.0,
        "epsilon": eps,
        **extra,
        "steps_per_second": step / max(time.time() - start, 1e-9),
    }
    history.append(row)
    if not quiet:
        shown = "".join(f"{name} {value:.4f}  " for name, value in extra.items())
        print(
            f"step {step:>8}  return {row['mean_return']:+.3f} over the last "
            f"{len(recent)} rounds  eps {eps:.3f}  {shown}{row['steps_per_second']:.0f} steps/s",
            flush=True,
        )


def finish(
    args: Any, bot: agents.Bot, training: dict[str, Any], save: Callable[[Path], Path]
) -> int:
    """The end of a run: duplicate rounds against each evaluation opponent (win rate with its 95%
    interval), then into ``--out`` the weights (``save(out)`` writes them and returns their
    path) and ``metrics.json``."""
    metrics: dict[str, Any] = {"args": dataclasses.asdict(args), **training}
    if args.eval_rounds:
        from racko_eval import quick_win_rates

        metrics["evaluation"] = results = quick_win_rates(
            bot, opponents(args), args.eval_rounds, args.seed, args.num_players, {}
        )
        for opp, r in results.items():
            low, high = r["ci95"]
            print(
                f"against {opp}: won {100 * r['win_rate']:.1f}% of {r['rounds']} duplicate deals "
                f"(95% CI {100 * low:.1f}-{100 * high:.1f}%)"
            )
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        weights = save(out)
        write_text_atomic(out / "metrics.json", json.dumps(metrics, indent=2) + "\n")
        print(f"wrote {weights} and {out / 'metrics.json'}")
    return 0
