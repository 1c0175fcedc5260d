"""A league's execution: pairing rounds played on the pool, each pairing recorded as it finishes.

``round_robin`` plays every pair not on record; ``adaptive`` plays pairing rounds between bots of
similar rating (racko_apps.league.schedule) until every 95% interval is narrow enough, no pairing
is left to ask for, or the time budget is spent, and says which stopped it.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from racko_apps.league.pool import Contestant, LocalPool, PairingJob, Play, RayPool, play_pairing
from racko_apps.league.record import Keys, Record, rate, round_ranks
from racko_apps.league.schedule import all_pairs, how_sure, plan_round, unsettled
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
    """Plays pairing rounds on the pool and records each pairing as it finishes."""

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
        self.busy_seconds = 0.0  # wall time of this run's pairing rounds, and their pairings
        self.finished = 0
        self.out_of_time = False  # the budget ran out while a round was played
        self.played = {frozenset(p) for p in record.done() if all(k in self.by_key for k in p)}

    def _dir(self, keys: Keys) -> Path | None:
        """Where a pairing's game records go (``--record``): one folder per pairing."""
        if self.record_dir is None:
            return None
        return self.record_dir / safe_name("-vs-".join(self.by_key[k].label for k in keys))

    def counts(self) -> dict[str, int]:
        """Pairings on record per current bot."""
        counts = dict.fromkeys(self.by_key, 0)
        for pair in self.played:
            for key in pair:
                counts[key] += 1
        return counts

    def planned_not_played(self) -> tuple[int, list[Keys]] | None:
        """The last pairing round's pairings not on record (a league killed mid-round), or None."""
        planned = self.record.schedule()
        if not planned:
            return None
        last = max(planned.values())
        todo = [
            p
            for p, number in planned.items()
            if number == last
            and all(k in self.by_key for k in p)
            and frozenset(p) not in self.played
        ]
        return (last, sorted(todo)) if todo else None

    def fit(self, deadline: float) -> int | None:
        """How many pairings fit before ``deadline`` at this run's pace so far; None before the
        first has finished."""
        if deadline == float("inf") or not self.finished or self.busy_seconds <= 0:
            return None
        return max(0, int((deadline - clock()) * self.finished / self.busy_seconds))

    def play_round(
        self, todo: list[Keys], number: int, deadline: float = float("inf")
    ) -> list[tuple[Keys, list[tuple[float, ...]]]]:
        """Play ``todo`` in parallel, recording each as it finishes; each pairing's rounds' ranks,
        in key order. Past ``deadline`` no result is waited for (``out_of_time``): the rest of
        the round stays planned for the next run."""
        plan = self.plan
        jobs = [
            PairingJob(
                i,
                tuple(self.contestants[k] for k in keys),
                plan.rounds,
                plan.seed,
                self.play,
                self._dir(keys),
            )
            for i, keys in enumerate(todo)
        ]
        bar = _bar(len(jobs), f"round {number}", self.progress)
        say = bar.write if bar is not None else self.log
        done: dict[int, list[tuple[float, ...]]] = {}
        began = clock()
        results = self.pool.run(play_pairing, jobs, deadline, _clock)
        try:
            for i, result, seconds in results:
                bots = [self.by_key[k] for k in todo[i]]
                self.record.add(bots, result)
                labels = tuple(e.label for e in bots)
                self.seconds[labels] = seconds
                self.played.add(frozenset(todo[i]))
                if self.record_dir is not None:
                    self.records.append(_links(labels, result))
                done[i] = round_ranks(result)
                if bar is not None:
                    bar.update()
                if sum(result.forfeits) or bar is None:
                    say(f"[{len(done)}/{len(jobs)}] {_score(labels, result)}")
        finally:
            results.close()
            if len(done) < len(jobs):  # out of time: the pairings in flight end with their workers
                self.out_of_time = True
                self.pool.close()
            self.busy_seconds += clock() - began
            self.finished += len(done)
            if bar is not None:
                bar.close()
        if len(done) < len(jobs):
            say(
                f"round {number}: the time budget is spent; {len(jobs) - len(done)} "
                "pairing(s) left for the next run"
            )
        return [(todo[i], done[i]) for i in sorted(done, key=lambda i: todo[i])]


def round_robin(
    pairs: Pairer, playing: list[Entry], log: Callable[[str], Any], players: int = 2
) -> None:
    """Play every table of ``players`` bots not on record, as one pairing round."""
    todo = all_pairs([e.key for e in playing], pairs.played, players)
    kept = len(pairs.played)
    log(f"league: {len(playing)} bots, {kept} pairing(s) on record, {len(todo)} to play")
    pairs.play_round(todo, pairs.record.plan(todo) if todo else -1)


class _Reserve:
    """What the report will take after the run, from this run's time per rated round."""

    def __init__(self, pairs: Pairer, plan: Plan, deadline: float, seconds: float) -> None:
        self.pairs, self.deadline = pairs, deadline
        self.rounds = plan.rounds * math.factorial(plan.players)  # a pairing's: every seating
        self.seconds, self.rated = seconds, self.rounds * len(pairs.played)

    def results_until(self, more: int) -> float:
        """The budget's end, less what the report will take after ``more`` pairings (four times
        this run's time per rated round, for every round on record: it rates them all again)."""
        if self.deadline == float("inf") or not self.rated:
            return self.deadline
        rounds_after = self.rounds * (len(self.pairs.played) + more)
        return self.deadline - 4 * self.seconds / self.rated * rounds_after


def adaptive(
    pairs: Pairer,
    playing: list[Entry],
    plan: Plan,
    deadline: float,
    log: Callable[[str], Any],
) -> dict[str, Any]:
    """Pairing rounds between bots of similar rating; how sure the ratings are, and why it
    stopped."""
    log(
        f"league: {len(playing)} bots, {len(pairs.played)} pairing(s) on record; adaptive "
        f"schedule: pairing rounds until every 95% interval is within ±{plan.target:g} "
        f"(each bot asking for at most {plan.max_pairings} pairings)"
    )
    left = pairs.planned_not_played()
    if left:
        number, todo = left
        log(f"round {number}: {len(todo)} pairing(s) planned and not played yet")
        pairs.play_round(todo, number, deadline)
    began = clock()
    ratings, _ = rate(pairs.record, playing)
    reserve = _Reserve(pairs, plan, deadline, clock() - began)
    while not pairs.out_of_time:
        counts = pairs.counts()
        bots = ratings.rated()
        wide = unsettled(bots, plan.target)
        seekers = [b for b in wide if counts[b.key] < plan.max_pairings]
        fit = pairs.fit(reserve.results_until(len(seekers)))
        cut = fit is not None and fit < len(seekers)
        if cut:  # as many as fit in what is left of the budget, the widest first
            seekers = seekers[:fit]
            if not seekers:
                pairs.out_of_time = True
                break
        todo = plan_round(bots, seekers, pairs.played, plan.seed, plan.players)
        if not todo:
            break
        number = pairs.record.plan(todo)
        log(
            f"round {number}: {len(todo)} pairing(s)"
            + (" (as many as fit the time budget)" if cut else "")
            + f"; {len(wide)} bot(s) wider than ±{plan.target:g}"
        )
        for keys, ranks in pairs.play_round(todo, number, reserve.results_until(len(todo))):
            began = clock()
            ratings.add(keys, ranks)
            reserve.seconds += clock() - began
            reserve.rated += len(ranks)
    return _sure(ratings.rated(), pairs.out_of_time, plan)


def _sure(bots: list[Any], out_of_time: bool, plan: Plan) -> dict[str, Any]:
    """How sure the ratings are (schedule.how_sure) and why the schedule stopped."""
    sure: dict[str, Any] = dict(how_sure(bots, plan.target))
    wide = unsettled(bots, plan.target)
    if not wide:
        sure["stopped"] = f"every 95% interval is within ±{plan.target:g}"
    elif out_of_time:
        sure["stopped"] = (
            f"the time budget of {plan.budget_minutes:g} min was spent with {len(wide)} "
            f"interval(s) wider than ±{plan.target:g}; run the league again to narrow them "
            "(it goes on from its record)"
        )
    else:
        sure["stopped"] = (
            f"{len(wide)} interval(s) wider than ±{plan.target:g}, but no pairing left to ask "
            f"for (each bot asks for at most {plan.max_pairings}, and meets each other bot once)"
        )
    return sure
