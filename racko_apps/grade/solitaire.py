"""Grading of solitaire Rack-O: ``racko grade my_agent:Bot --rubric solitaire`` (exact) and
``--rubric solitaire_full`` (full size, against ``expert`` on the same deals).

A rubric with ``players: 1`` and the size in its rules (``rack_size``, ``deck_size``) grades a
solitaire agent against the exact optimum (``racko_env.solitaire``), with no games and no noise:

- ``check: solitaire_policy`` scores the submitted bot by its exact expected turns from the deal
  in rounds cut at the rules' turn limit, as the env plays them (``evaluate``: the bot, seated in
  the sandbox as for every rubric, is asked once at each state its play can reach). Its ``thresholds`` are ``{gap_percent: G, points: P}``: the points of the
  highest threshold whose G the gap to the optimum does not exceed (``gap_percent: 0`` is the
  optimum itself, up to 1e-9).
- ``check: solitaire_values`` scores a value table: the file ``file`` (default ``values.npy``)
  in the submission's package folder (``my_agent/values.npy``) or beside it, a float array of one value per tabular observation: the expected
  turns still to play under optimal play, the current turn included (the optimal return's
  negative). Read with numpy, never unpickled. Its ``thresholds`` are ``{max_error: E, points:
  P}``: the points of the highest threshold whose E the largest error does not exceed.
- ``check: solitaire_turns`` scores a bot where no exact solve fits (full-size solitaire,
  ``rack_size: 10, deck_size: 40``): its mean turns over the rubric's ``rounds`` deals (env
  seeds from the run's seed: the rubric's for practice, the secret one when graded; rounds cut
  at the turn limit) against ``expert``'s mean on the same deals, played in-process. Its ``thresholds`` are ``{excess_percent: X, points:
  P}``: the points of the highest threshold whose X the bot's excess over ``expert``'s mean
  (in percent, 0 when it is not worse) does not exceed. An illegal action or a crash is 0.
- ``check: loads`` as in every rubric. Other checks play games and are not for solitaire.

The rubric's solitaire criteria are parsed and checked in ``racko_apps.grade.rubric``. The
format of the shipped rubric: ``racko_apps/grade/rubrics/solitaire.yaml``; the starter:
``racko new-bot my_agent --solitaire``; the course: ``docs/coursework/ladder.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from racko_apps.grade.rubric import DEFAULT_VALUES_FILE, Criterion, Rubric, size
from racko_env.config import DEFAULT_TURN_LIMIT

EXACT = 1e-9  # a gap or an error this small is none


def threshold_points(crit: Criterion, measured: float) -> float:
    """The points of the highest threshold whose limit ``measured`` does not exceed."""
    return max((p for limit, p in crit.thresholds if measured <= limit + EXACT), default=0.0)


def policy_row(crit: Criterion, bot: Any, rubric: Rubric) -> dict[str, Any]:
    """A solitaire_policy criterion's row: the bot's exact expected turns against the optimum."""
    from racko_env.solitaire import evaluate, solve

    k, n = size(rubric)
    optimum = solve(k, n).expected_turns
    try:
        turns = evaluate(bot, k, n, turn_limit=rubric.rules.get("turn_limit", DEFAULT_TURN_LIMIT))
    except Exception as err:  # the bot's failure (an illegal action, a crash) is its grade
        return {"points": 0.0, "result": "not graded: " + " ".join(str(err).split())[:300]}
    gap = 100.0 * (turns / optimum - 1.0)
    return {
        "expected_turns": turns,
        "optimum": optimum,
        "gap_percent": gap,
        "points": threshold_points(crit, max(gap, 0.0)),
        "result": f"exact expected turns {turns:.6f}, optimum {optimum:.6f} (gap {gap:+.3f}%)",
    }


def play_deals(bot: Any, rubric: Rubric, seed: int) -> np.ndarray:
    """The turns ``bot`` takes on each of the rubric's ``rounds`` deals (env seeds ``seed``
    onwards),
    each round cut at the rules' turn limit; ValueError naming an illegal action."""
    from racko_env.solitaire_env import RackoSolitaireEnv

    k, n = size(rubric)
    limit = rubric.rules.get("turn_limit", DEFAULT_TURN_LIMIT)
    env = RackoSolitaireEnv(rack_size=k, deck_size=n, turn_limit=limit)
    turns = np.empty(rubric.rounds, dtype=np.int64)
    for i in range(rubric.rounds):
        obs, info = env.reset(seed=seed + i)
        bot.reset()
        done = False
        while not done:
            action = bot.act({"observation": obs, "action_mask": info["action_mask"]})
            obs, _, terminated, truncated, info = env.step(action)
            if "illegal_action" in info:
                raise ValueError(f"illegal action {info['illegal_action']} on deal {i}")
            done = terminated or truncated
        turns[i] = env.game.turn
    return turns


def turns_row(crit: Criterion, bot: Any, rubric: Rubric, seed: int) -> dict[str, Any]:
    """A solitaire_turns criterion's row: the bot's mean turns against ``expert``'s on the same
    deals."""
    import agents

    expert = agents.load("expert", 1, **rubric.rules)
    yardstick = float(play_deals(expert, rubric, seed).mean())
    try:
        turns = play_deals(bot, rubric, seed)
    except Exception as err:  # the bot's failure (an illegal action, a crash) is its grade
        return {"points": 0.0, "result": "not graded: " + " ".join(str(err).split())[:300]}
    mean = float(turns.mean())
    excess = 100.0 * (mean / yardstick - 1.0)
    return {
        "mean_turns": mean,
        "expert_mean_turns": yardstick,
        "excess_percent": excess,
        "points": threshold_points(crit, max(excess, 0.0)),
        "result": f"mean turns {mean:.3f} over {rubric.rounds} deals, expert {yardstick:.3f} "
        f"on the same deals ({excess:+.2f}%)",
    }


def values_row(crit: Criterion, folder: str | Path, rubric: Rubric, spec: str) -> dict[str, Any]:
    """A solitaire_values criterion's row: the table's largest error against the optimum. The
    file is looked for in the submission's package folder, then beside it."""
    from racko_env.solitaire import solve

    k, n = size(rubric)
    name = crit.opponent or DEFAULT_VALUES_FILE
    path = Path(folder) / spec.partition(":")[0] / name
    if not path.is_file():
        path = Path(folder) / name
    if not path.is_file():
        return {"points": 0.0, "result": f"no value table: {path.name} is not in the submission"}
    optimal = solve(k, n).values
    try:
        table = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        return {"points": 0.0, "result": f"{path.name} is not a numpy array: {err}"}
    if table.shape != optimal.shape or not np.issubdtype(table.dtype, np.number):
        return {
            "points": 0.0,
            "result": f"{path.name} must hold {optimal.shape[0]} numbers (one per tabular "
            f"observation), got shape {table.shape} of {table.dtype}",
        }
    error = float(np.nan_to_num(np.abs(table - optimal), nan=np.inf).max())
    hint = ""
    if error > 0.5 and np.abs(-table - optimal).max() < error:
        hint = " (values are expected turns, positive: the returns' negatives)"
    return {
        "max_error": error,
        "points": threshold_points(crit, error),
        "result": f"largest error {error:.3g} turns against the optimal values{hint}",
    }


def grade_solitaire(
    spec: str,
    rubric: Rubric,
    seed: int,
    seed_source: str,
    folder: str | Path,
    isolate: bool,
) -> dict[str, Any]:
    """The teacher's report of a solitaire rubric (``racko_apps.grade.run.grade`` calls it)."""
    from racko_apps.grade.matches import bot_object, seat_submission
    from racko_apps.grade.report import Failures, build_report
    from racko_apps.sandbox.bot import SandboxedBot
    from racko_apps.sandbox.isolation import NOT_ISOLATED

    failures = Failures()
    seated, load_error = seat_submission(spec, rubric, folder, "bwrap" if isolate else "none")
    if load_error:
        failures.add(f"{spec} does not load: {load_error}")
    rows = []
    try:
        for crit in rubric.criteria:
            row: dict[str, Any] = {"name": crit.name, "check": crit.check}
            row["max_points"] = crit.points
            if crit.check == "loads":
                loaded = seated is not None
                row.update(points=crit.points if loaded else 0.0, result=load_error or "loads")
            elif crit.check == "solitaire_values":
                row.update(values_row(crit, folder, rubric, spec))
            elif seated is None:
                row.update(points=0.0, result="not graded: the bot did not load")
            elif crit.check == "solitaire_turns":
                row.update(turns_row(crit, bot_object(seated, rubric), rubric, seed))
            else:
                row.update(policy_row(crit, bot_object(seated, rubric), rubric))
            rows.append(row)
    finally:
        if isinstance(seated, SandboxedBot):
            seated.close()
    warning = None if isolate else NOT_ISOLATED
    return build_report(spec, rubric, seed, seed_source, rows, failures, 0, warning=warning)
