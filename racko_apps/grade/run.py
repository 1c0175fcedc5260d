"""One grade, start to end: rubric, seat the bots (``matches``), ask the sampled positions
(``positions``), play, score (``scoring``), report (``report``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from racko_apps.grade.agreement import agreement
from racko_apps.grade.matches import bot_object, play_criterion, seat_submission
from racko_apps.grade.positions import check_positions, sample_positions
from racko_apps.grade.report import Failures, build_report
from racko_apps.grade.rubric import Rubric
from racko_apps.grade.scoring import score
from racko_apps.referee.book import Strikes
from racko_apps.referee.match import is_sandboxed_spec
from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.isolation import NO_ISOLATION_WARNING, choose_isolation
from racko_apps.sandbox.jit import warm_planner
from racko_apps.sandbox.toolkit import PLANNER_MODULES


def pick_isolation(spec: str, rubric: Rubric, requested: str) -> tuple[str, str | None]:
    """The isolation the grade's sandboxed bots run under and the warning its report states,
    checked only when a bot of the grade runs sandboxed."""
    if requested == "none":
        return "none", NO_ISOLATION_WARNING
    seats = [spec, *(c.opponent for c in rubric.criteria if c.opponent)]
    if not any(is_sandboxed_spec(s) for s in seats):
        return ("bwrap" if requested == "auto" else requested), None
    return choose_isolation(None if requested == "auto" else requested)


def grade(
    spec: str,
    rubric: Rubric,
    seed: int | None = None,
    folder: str | Path = ".",
    isolate: bool = True,
    record_dir: Path | None = None,
    *,
    isolation: str | None = None,
    seed_source: str | None = None,
) -> dict[str, Any]:
    """Grade the bot ``spec`` (a ``module:Class`` in ``folder``, a built-in name or a bot file)
    and return the teacher's report (a JSON-ready dict; ``report["total"]`` is the points).

    ``seed``: the deals and positions (default: the rubric's public one, a practice run), and
    ``seed_source`` where it came from (rubric, flag, secret or entropy). ``isolation``: one of
    racko_apps.sandbox.isolation.ISOLATIONS or ``auto`` (default: ``bwrap`` with ``isolate``, else
    ``none``); IsolationUnavailableError when it cannot run. ``record_dir``: a record of every
    game, one folder per criterion. The report adds the agreement with the shipped bots."""
    requested = isolation or ("bwrap" if isolate else "none")
    isolation, warning = pick_isolation(spec, rubric, requested)
    if seed is None:
        seed, seed_source = rubric.seed, "rubric"
    if rubric.players == 1:  # solitaire: graded exactly, no games
        from racko_apps.grade.solitaire import grade_solitaire

        return grade_solitaire(
            spec, rubric, seed, seed_source or "flag", folder, isolation != "none"
        )
    strikes = Strikes(rubric.max_forfeits)
    failures = Failures()
    measured: dict[str, Any] = {}
    shown: dict[str, Any] = {}
    seated, load_error = seat_submission(spec, rubric, folder, isolation)
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
                        isolation=isolation,
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
        isolation,
        warning,
    )
    return {**report, **shown}
