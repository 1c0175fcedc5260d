"""A league stopped before its schedule is done, and the ranking it writes then.

Ctrl-C, and SIGTERM (``timeout``, a batch system's time limit) while ``sigterm_stops`` holds,
stop a league midway (``KeyboardInterrupt``, ``Stopped``); so does its time budget. Either way it
writes the ranking so far from the record, marked provisional (``report``): the record keeps
every finished pairing, and the same command again goes on from it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racko_apps.league.record import Record, rate, standings
from racko_apps.league.rounds import Plan, sure_and_why
from racko_apps.league.submissions import Entry
from racko_apps.league.workqueue import Pairer


class Stopped(KeyboardInterrupt):
    """A league stopped by SIGTERM: handled as Ctrl-C is. ``provisional``: where the ranking
    so far was written (also set on a KeyboardInterrupt by ``run_league``)."""


def _terminated(signum: int, frame: Any) -> None:
    raise Stopped("SIGTERM")


@contextlib.contextmanager
def sigterm_stops() -> Iterator[None]:
    """SIGTERM raises ``Stopped`` here (in the main thread) while this holds."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def stopped_text(err: KeyboardInterrupt) -> str:
    """What stopped a league midway, in words."""
    return f"the league was stopped ({err if isinstance(err, Stopped) else 'Ctrl-C'})"


def stopped_line(db: Path, err: KeyboardInterrupt) -> str:
    """The one line of a league stopped midway: where its record and its ranking so far are."""
    line = (
        f"racko league: stopped; the pairings finished so far are kept in {db}: "
        "run the same command again to go on"
    )
    ranking = getattr(err, "provisional", None)
    return line + (f" (the ranking so far, provisional: {ranking})" if ranking else "")


@dataclass
class Progress:
    """How far a run has got: the bots that play, the lines of those that do not load, and the
    work queue (None until the bots are loaded)."""

    playing: list[Entry] | None = None
    failed: list[str] = field(default_factory=list)
    pairs: Pairer | None = None

    def bots(self, entries: list[Entry], record: Record) -> list[Entry]:
        """The bots that play; for a league stopped while loading them, those known to load."""
        if self.playing is not None:
            return self.playing
        return [e for e in entries if e.key in record.loaded()]


def stopped_sure(record: Record, playing: list[Entry], plan: Plan, stopped: str) -> dict[str, Any]:
    """How sure the ratings on record are, for an adaptive league ``stopped`` midway."""
    ratings, _ = rate(record, playing)
    return sure_and_why(ratings.rated(), False, plan, stopped)


def report(
    record: Record,
    entries: list[Entry],
    got: Progress,
    sure: dict[str, Any] | None,
    provisional: str | None,
    head: dict[str, Any],
) -> dict[str, Any]:
    """The report: ``head`` (warning, schema, config, skipped), whether it is provisional and
    why (``provisional``: what stopped the schedule before it was done), the standings from the
    record and, for the adaptive schedule, how sure they are (``sure``)."""
    pairs = got.pairs
    return {
        **{k: v for k, v in head.items() if k != "skipped"},
        "provisional": provisional is not None,
        **({} if provisional is None else {"provisional_reason": provisional}),
        "skipped": head["skipped"] + got.failed,
        **standings(record, got.bots(entries, record), {} if pairs is None else pairs.seconds),
        **({"sure": sure} if sure else {}),
        **({} if pairs is None or pairs.record_dir is None else {"records": pairs.records}),
    }
