"""A league's execution: a work queue of pairings on the pool, each recorded as it finishes.

The schedule (racko_apps.league.rounds) plans pairing rounds; the queue plays their pairings on
every free worker at once, so that no pairing, however slow (a bot that takes its whole clock),
holds up the others, and asks the schedule for the next round whenever it is empty and a worker
is free. Only the league's process writes the record: a pairing is recorded when its result
comes back, and one in flight when the league stops is lost and stays planned.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from racko_apps.league.pool import Contestant, LocalPool, PairingJob, Play, RayPool, play_pairing
from racko_apps.league.record import Keys, Record, round_ranks
from racko_apps.league.submissions import Entry
from racko_eval.records import safe_name

_clock = time.monotonic  # the budget's clock (tests replace it)


def clock() -> float:
    """The budget's clock, now (``_clock``, which a test may replace)."""
    return _clock()


@dataclass(frozen=True)
class Plan:
    """Which pairings a run asks for (``run_league``'s keywords of the same names)."""

    schedule: str
    rounds: int
    seed: int
    target: float
    max_pairings: int
    budget_minutes: float | None
    players: int = 2


def _bar(total: int, desc: str, show: bool) -> Any:
    """A progress bar on stderr (tqdm; off without ``show`` or a terminal); None when off."""
    if not show or not total:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="pairing", file=sys.stderr, disable=None)


def _links(labels: tuple[str, ...], result: Any) -> dict[str, Any]:
    """A pairing's bots, and per bot the records of its forfeited and of its lost rounds."""
    links = {label: result.record_links(i) for i, label in enumerate(result.labels)}
    pair = {"a": labels[0], "b": labels[1]} if len(labels) == 2 else {}
    return {**pair, "table": list(labels), "bots": links}


def _score(labels: tuple[str, ...], result: Any) -> str:
    """A finished pairing in one line: each bot's win rate, and its forfeits if any."""
    rates = [f"{label} {result.win_rate(i):.0%}" for i, label in enumerate(labels)]
    text = (
        f"{rates[0]} - {rates[1].split(' ')[1]} {labels[1]}"
        if len(labels) == 2
        else ", ".join(rates)
    )
    forfeits = sum(result.forfeits)
    return text + (f" ({forfeits} forfeited)" if forfeits else "")


class Pairer:
    """The work queue: plays the pairings planned on the pool, as many at once as it has
    workers, and records each as it finishes."""

    def __init__(
        self,
        record: Record,
        playing: list[Entry],
        pool: LocalPool | RayPool,
        contestants: dict[str, Contestant],
        plan: Plan,
        play: Play,
        log: Any,
        progress: bool,
    ) -> None:
        self.record, self.pool, self.contestants = record, pool, contestants
        self.plan, self.play, self.record_dir = plan, play, play.record_dir
        self.records: list[dict[str, Any]] = []  # per pairing, each bot's forfeit and loss records
        self.seconds: dict[tuple[str, str], float] = {}  # wall time of this run's pairings
        self.by_key = {e.key: e for e in playing}
        self.log, self.progress = log, progress
        self.capacity = pool.capacity
        self.queue: deque[tuple[Keys, int]] = deque()  # planned, waiting for a free worker
        self.flying: dict[int, tuple[Keys, int, float]] = {}  # job: keys, round, when submitted
        self.jobs = 0  # jobs submitted so far (each one's index)
        self.in_round: dict[int, list[int]] = {}  # per pairing round: [finished, queued] this run
        self.finished = 0
        self.worker_seconds = 0.0  # on the budget's clock: the pairings' time, workers together
        self.cut = False  # the last plan asked for was cut to nothing by the budget
        self.out_of_time = False  # the budget ran out with pairings in flight, or cut the plan
        self.bar: Any = None
        self.played = {frozenset(p) for p in record.done() if all(k in self.by_key for k in p)}

    def _dir(self, keys: Keys) -> Path | None:
        """Where a pairing's game records go (``--record``): one folder per pairing."""
        if self.record_dir is None:
            return None
        return self.record_dir / safe_name("-vs-".join(self.by_key[k].label for k in keys))

    def waiting(self) -> list[Keys]:
        """The pairings in flight or queued."""
        return [k for k, *_ in self.flying.values()] + [k for k, _ in self.queue]

    def taken(self) -> set[frozenset[str]]:
        """The tables on record, in flight or queued: none is planned again."""
        return self.played | {frozenset(k) for k in self.waiting()}

    def busy(self) -> set[str]:
        """The bots with a pairing in flight or queued."""
        return {key for keys in self.waiting() for key in keys}

    def counts(self) -> dict[str, int]:
        """Pairings on record, in flight or queued, per current bot."""
        counts = dict.fromkeys(self.by_key, 0)
        for pair in self.taken():
            for key in pair:
                counts[key] += 1
        return counts

    def planned_not_played(self) -> list[tuple[int, list[Keys]]]:
        """Each pairing round's pairings not on record (a league stopped mid-round), by round."""
        left: dict[int, list[Keys]] = {}
        for p, number in self.record.schedule().items():
            if all(k in self.by_key for k in p) and frozenset(p) not in self.played:
                left.setdefault(number, []).append(p)
        return [(number, sorted(todo)) for number, todo in sorted(left.items())]

    def fit(self, deadline: float) -> int | None:
        """How many more pairings fit before ``deadline`` at this run's pace so far, besides those
        in flight or queued; None before the first has finished."""
        if deadline == float("inf") or not self.finished or self.worker_seconds <= 0:
            return None
        pace = self.capacity * self.finished / self.worker_seconds
        return max(0, int((deadline - clock()) * pace) - len(self.waiting()))

    def enqueue(self, todo: list[Keys], number: int) -> None:
        """Queue a pairing round's pairings, in key order (one worker records them in the order
        they are rated)."""
        self.in_round.setdefault(number, [0, 0])[1] += len(todo)
        self.queue.extend((keys, number) for keys in sorted(todo))
        if self.bar is None:
            self.bar = _bar(len(todo), f"round {number}", self.progress)
        else:
            self.bar.total += len(todo)
            self.bar.set_description(f"round {number}")

    def _launch(self) -> None:
        """Give each free worker the next queued pairing."""
        while self.queue and len(self.flying) < self.capacity:
            keys, number = self.queue.popleft()
            job = PairingJob(
                self.jobs,
                tuple(self.contestants[k] for k in keys),
                self.plan.rounds,
                self.plan.seed,
                self.play,
                self._dir(keys),
            )
            self.flying[self.jobs] = (keys, number, clock())
            self.jobs += 1
            self.pool.submit(play_pairing, job)

    def _finish(self, index: int, result: Any, seconds: float) -> tuple[Keys, list[Any]]:
        """Record a finished pairing; its keys and its rounds' ranks."""
        keys, number, submitted = self.flying.pop(index)
        self.worker_seconds += clock() - submitted
        bots = [self.by_key[k] for k in keys]
        self.record.add(bots, result)
        self.finished += 1
        labels = tuple(e.label for e in bots)
        self.seconds[labels] = seconds
        self.played.add(frozenset(keys))
        if self.record_dir is not None:
            self.records.append(_links(labels, result))
        counts = self.in_round[number]
        counts[0] += 1
        if self.bar is not None:
            self.bar.update()
        if sum(result.forfeits) or self.bar is None:
            say = self.bar.write if self.bar is not None else self.log
            say(f"[{counts[0]}/{counts[1]}] {_score(labels, result)}")
        return keys, round_ranks(result)

    def run(
        self,
        more: Callable[[], bool],
        deadline: Callable[[], float],
        on_result: Callable[[Keys, list[Any]], Any],
    ) -> None:
        """Play the queue until it is empty and ``more`` (asked whenever the queue is empty and a
        worker is free) plans nothing. Past ``deadline()`` no result is waited for
        (``out_of_time``): the pairings in flight end with their workers, and they and the queued
        ones stay planned for the next run."""
        try:
            while True:
                self._launch()
                if not self.queue and len(self.flying) < self.capacity and more():
                    continue
                if not self.flying:
                    self.out_of_time = self.cut
                    break
                got = self.pool.next(deadline(), _clock)
                if got is None:
                    self.out_of_time = True
                    break
                on_result(*self._finish(*got))
        finally:
            if self.flying:  # out of time (or stopped): the pairings in flight end with them
                self.pool.close()
            if self.bar is not None:
                self.bar.close()
        left: dict[int, int] = {}
        for _, number in [(k, n) for k, n, _ in self.flying.values()] + list(self.queue):
            left[number] = left.get(number, 0) + 1
        for number, n in sorted(left.items()):
            self.log(
                f"round {number}: the time budget is spent; {n} pairing(s) left for the next run"
            )
