"""Seat the bots of a grade and play its matches.

The submission is seated once, under the rubric's limits, and plays every ``win_rate``
criterion's duplicate match against its opponent: a built-in or shipped bot, or a staff file in
the rubric's folder (sandboxed like a submission, but allowed the whole toolkit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.base import Bot
from racko_apps.grade.report import Failures
from racko_apps.grade.rubric import Criterion, Rubric
from racko_apps.referee.book import Strikes
from racko_apps.referee.match import play_match, seat_bot
from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.toolkit import ALLOW_ALL
from racko_apps.sandbox.wire import BotFailureError, Limits
from racko_eval.records import safe_name


def seat(spec: str, rubric: Rubric, folder: str | Path, isolation: str, allow: Any) -> str | Bot:
    """``spec`` seated under ``rubric``'s move limit, clock and memory (``referee.seat_bot``)."""
    limits = Limits(
        move_seconds=rubric.kill_after,
        round_seconds=rubric.round_seconds,
        memory_mb=rubric.memory_mb,
    )
    return seat_bot(
        spec,
        rubric.players,
        rubric.rules,
        folder=folder,
        limits=limits,
        isolation=isolation,
        allow=allow,
    )


def seat_submission(
    spec: str, rubric: Rubric, folder: str | Path, isolation: str
) -> tuple[str | Bot | None, str]:
    """The submission seated (a started sandbox under ``isolation``, or a built-in's name), or
    None and the one-line reason it does not load."""
    try:
        return seat(spec, rubric, folder, isolation, rubric.allow), ""
    except BotFailureError as err:
        return None, err.reason
    except (ValueError, TypeError, FileNotFoundError, ImportError) as err:
        return None, " ".join(str(err).split())


def bot_object(seated: str | Bot, rubric: Rubric) -> Bot:
    """A seated bot as an object that answers positions (a built-in is loaded in-process)."""
    if isinstance(seated, str):
        import agents

        return agents.load(seated, rubric.players, **rubric.rules)
    return seated


def play_criterion(
    spec: str,
    seated: str | Bot,
    crit: Criterion,
    rubric: Rubric,
    seed: int,
    strikes: Strikes,
    failures: Failures,
    *,
    isolation: str = "bwrap",
    record_dir: Path | None = None,
) -> dict[str, Any]:
    """Play ``crit``'s duplicate match and measure the submission's result in it."""
    assert crit.opponent is not None
    opp_label = crit.opponent if crit.opponent != spec else f"{crit.opponent}#2"
    # a staff file from the rubric's folder, allowed the whole toolkit
    opponent = seat(crit.opponent, rubric, rubric.folder or ".", isolation, ALLOW_ALL)
    try:
        match = play_match(
            [seated, opponent],
            [spec, opp_label],
            num_players=rubric.players,
            deals=rubric.rounds,
            seed=seed,
            rules=rubric.rules,
            strikes=[strikes, Strikes(10**9)],
            record_dir=None if record_dir is None else record_dir / safe_name(crit.name),
        )
    finally:
        if isinstance(opponent, SandboxedBot):
            opponent.close()
    failures.lines.extend(match.forfeit_lines)
    for row in match.rounds:
        if row.get("forfeit", {}).get("bot") == spec:
            failures.count(crit.name, row["forfeit"]["reason"])
    records = {} if record_dir is None else {"records": match.record_links(0)}
    points = match.points[0]
    return {
        **records,
        "opponent": crit.opponent,
        "rounds": match.played[0],
        "wins": round(match.wins[0], 6),
        "win_rate": round(match.win_rate(0), 6),
        "forfeits": match.forfeits[0],
        "mean_round_score": round(sum(points) / len(points), 4) if points else 0.0,
    }
