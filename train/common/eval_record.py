"""The evaluation record, one schema whatever trainer wrote it (docs/training/main-job.md).

``eval_history.json`` is the learning curve, a row per evaluation: ``timesteps`` and/or
``iteration``, ``minutes`` of wall time, ``rounds`` (duplicate deals per opponent), per opponent
the learner's win rate and its 95% interval (``heuristic``, ``heuristic_ci95``), and ``final`` on
the final evaluation's row. At a table of 3-4 players the opponents' keys hold *their* rates and
``learner``, ``learner_ci95`` the learner's. In solitaire (one player, ``unit: turns``) the keys ``learner`` and
each fixed bot's hold mean turns to Rack-O with their intervals, and ``learner_exact_turns``,
``learner_gap_percent`` (and the bots') the exact figures where the size was solved.
``final_eval.json`` holds the final evaluation's ``opponent_result`` per opponent, or in
solitaire the ``solitaire_result`` per bot (``train.common.solitaire_eval``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from train.common.files import write_json_atomic

EVAL_HISTORY = "eval_history.json"
FINAL_EVAL = "final_eval.json"


def opponent_result(
    opponent: str, rounds: int, win_rate: float, ci95: Any, seed: int, **extra: Any
) -> dict[str, Any]:
    """One opponent's entry of an evaluation (``final_eval.json``'s values)."""
    return {
        "opponent": opponent,
        "rounds": int(rounds),
        "win_rate": float(win_rate),
        "ci95": [float(ci95[0]), float(ci95[1])],
        "seed": int(seed),
        **extra,
    }


def history_row(
    results: dict[str, dict[str, Any]],
    minutes: float,
    rounds: int,
    *,
    timesteps: int | None = None,
    iteration: int | None = None,
    final: bool = False,
) -> dict[str, Any]:
    """The ``eval_history.json`` row of one evaluation (``results``: opponent -> its entry)."""
    row: dict[str, Any] = {}
    if timesteps is not None:
        row["timesteps"] = int(timesteps)
    if iteration is not None:
        row["iteration"] = int(iteration)
    row["minutes"] = round(float(minutes), 2)
    row["rounds"] = int(rounds)
    if final:
        row["final"] = True
    for opp, res in results.items():
        if "mean_turns" in res:  # solitaire: each bot's mean turns, and its exact gap if known
            row["unit"] = "turns"
            row[opp], row[f"{opp}_ci95"] = res["mean_turns"], res["ci95"]
            if res.get("gap_percent") is not None:
                row[f"{opp}_exact_turns"], row[f"{opp}_gap_percent"] = (
                    res["exact_turns"],
                    res["gap_percent"],
                )
        elif len(res.get("table", ())) > 2:  # one table of every bot: each one's own rate
            row["learner"], row["learner_ci95"] = res["win_rate"], res["ci95"]
            row[opp], row[f"{opp}_ci95"] = res["opponent_win_rate"], res["opponent_ci95"]
        else:
            row[opp], row[f"{opp}_ci95"] = res["win_rate"], res["ci95"]
    return row


def read_history(run_dir: Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / EVAL_HISTORY
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def write_history(run_dir: Path, rows: list[dict[str, Any]]) -> Path:
    return write_json_atomic(Path(run_dir) / EVAL_HISTORY, rows)


def write_final(run_dir: Path, results: dict[str, dict[str, Any]]) -> Path:
    return write_json_atomic(Path(run_dir) / FINAL_EVAL, results)


def opponents_of(rows: list[dict[str, Any]]) -> list[str]:
    """The curves an ``eval_history.json`` holds: every key with a ``_ci95`` partner."""
    keys = {k for row in rows for k in row}
    return sorted(k for k in keys if f"{k}_ci95" in keys)
