"""One grade, start to end: rubric, seat the bots, play, score.

``grade(spec, rubric)`` is the grading path in one place: it seats the submission
(``racko_apps.grade_play``), asks it the sampled positions (``racko_apps.grade_positions``),
plays each win-rate criterion's match, scores every criterion (``racko_apps.grade_scoring``) and
returns the teacher's report (``racko_apps.grade_report``), with the agreement with the shipped
bots (``racko_apps.grade_agreement``). Each step reads only what the step before gave it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from racko_apps.grade_agreement import agreement
from racko_apps.grade_play import bot_object, play_criterion, seat_submission
from racko_apps.grade_positions import check_positions, sample_positions
from racko_apps.grade_report import Failures, build_report
from racko_apps.grade_rubric import Rubric
from racko_apps.grade_scoring import score
from racko_apps.referee import Strikes, is_sandboxed_spec
from racko_apps.sandbox import (
    NOT_ISOLATED,
    PLANNER_MODULES,
    SandboxedBot,
    check_isolation,
    warm_planner,
)


def grade(
    spec: str,
    rubric: Rubric,
    seed: int | None = None,
    folder: str | Path = ".",
    isolate: bool = True,
    record_dir: Path | None = None,
    *,
    seed_source: str | None = None,
    compare: bool = True,
) -> dict[str, Any]:
    """Grade the bot ``spec`` (a ``module:Class`` in ``folder``, a built-in name or a bot file)
    and return the teacher's report (a JSON-ready dict; ``report["total"]`` is the points).

    ``seed``: the deals and positions (default: the rubric's public one, a practice run);
    ``seed_source`` says where it came from (``racko_apps.grade_report.SEED_SOURCES``).
    ``isolate``: a Python bot runs under bubblewrap (racko_apps.sandbox); IsolationUnavailableError
    when it cannot. Without it the report says so at its top (``isolated``, ``warning``).
    ``record_dir``: a record of every game, one folder per criterion; each criterion's row links
    its forfeits and lost rounds to theirs (``records``; docs/records.md).
    ``compare``: add the agreement with the shipped bots (``agreement``)."""
    if isolate and is_sandboxed_spec(spec):
        check_isolation()
    if seed is None:
        seed, seed_source = rubric.seed, "rubric"
    if rubric.players == 1:  # solitaire: graded exactly, no games
        from racko_apps.grade_solitaire import grade_solitaire

        return grade_solitaire(spec, rubric, seed, seed_source or "flag", folder, isolate)
    strikes = Strikes(rubric.max_forfeits)
    failures = Failures()
    measured: dict[str, Any] = {}
    shown: dict[str, Any] = {}
    seated, load_error = seat_submission(spec, rubric, folder, isolate)
    if load_error:
        failures.add(f"{spec} does not load: {load_error}")
    try:
        if seated is not None:
            bot = bot_object(seated, rubric)
            if not isinstance(bot, SandboxedBot) and any(m in sys.modules for m in PLANNER_MODULES):
                warm_planner(rubric.players)  # loaded before it is timed, as a sandbox does
            positions = sample_positions(rubric.players, rubric.rules, seed, rubric.positions)
            checked, chosen = check_positions(spec, bot, positions, strikes, failures)
            measured.update(checked)
            if compare:
                shown["agreement"] = agreement(rubric, positions, chosen)
            for crit in rubric.criteria:
                if crit.check == "win_rate" and crit.name not in measured:
                    measured[crit.name] = play_criterion(
                        spec,
                        seated,
                        crit,
                        rubric,
                        seed,
                        strikes,
                        failures,
                        isolate=isolate,
                        record_dir=record_dir,
                    )
                if isinstance(seated, SandboxedBot):  # nothing it started outlives its games
                    seated.end_game()
    finally:
        if isinstance(seated, SandboxedBot):
            seated.close()
    rows = [score(c, seated is not None, load_error, measured, rubric) for c in rubric.criteria]
    report = build_report(
        spec,
        rubric,
        seed,
        seed_source or "flag",
        rows,
        failures,
        strikes.count,
        warning=None if isolate else NOT_ISOLATED,
    )
    return {**report, **shown}
