"""A league's schedules: which pairings it asks the work queue (racko_apps.league.workqueue) for.

``round_robin`` queues every pair not on record; ``adaptive`` plans rounds between bots of
similar rating (racko_apps.league.schedule), each as soon as the queue is empty and a worker is
free, from the ratings so far and among the bots not playing then, until every 95% interval is
narrow enough, no pairing is left to ask for, or the time budget is spent, and says which stopped
it. With one worker, a round is planned when the last one has finished, and the same seed gives
the same league.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from racko_apps.league.record import Keys, rate
from racko_apps.league.schedule import all_pairs, how_sure, plan_round, unsettled
from racko_apps.league.submissions import Entry
from racko_apps.league.workqueue import Pairer, Plan, clock


def round_robin(
    pairs: Pairer, playing: list[Entry], log: Callable[[str], Any], players: int = 2
) -> None:
    """Play every table of ``players`` bots not on record, as one pairing round."""
    todo = all_pairs([e.key for e in playing], pairs.played, players)
    kept = len(pairs.played)
    log(f"league: {len(playing)} bots, {kept} pairing(s) on record, {len(todo)} to play")
    if todo:
        pairs.enqueue(todo, pairs.record.plan(todo))
    pairs.run(lambda: False, lambda: math.inf, lambda keys, ranks: None)


class _Reserve:
    """What the report will take after the run, from this run's time per rated round."""

    def __init__(self, pairs: Pairer, plan: Plan, deadline: float, seconds: float) -> None:
        self.pairs, self.deadline = pairs, deadline
        self.rounds = plan.rounds * math.factorial(plan.players)  # a pairing's: every seating
        self.seconds, self.rated = seconds, self.rounds * len(pairs.played)

    def results_until(self, more: int = 0) -> float:
        """The budget's end, less what the report will take after the pairings on record, in
        flight or queued, and ``more`` (four times this run's time per rated round, for every
        round on record: it rates them all again)."""
        if self.deadline == float("inf") or not self.rated:
            return self.deadline
        rounds_after = self.rounds * (len(self.pairs.taken()) + more)
        return self.deadline - 4 * self.seconds / self.rated * rounds_after


def adaptive(
    pairs: Pairer,
    playing: list[Entry],
    plan: Plan,
    deadline: float,
    log: Callable[[str], Any],
) -> dict[str, Any]:
    """Pairing rounds between bots of similar rating, each planned when the queue runs dry;
    how sure the ratings are, and why it stopped."""
    log(
        f"league: {len(playing)} bots, {len(pairs.played)} pairing(s) on record; adaptive "
        f"schedule: pairing rounds until every 95% interval is within ±{plan.target:g} "
        f"(each bot asking for at most {plan.max_pairings} pairings)"
    )
    began = clock()
    ratings, _ = rate(pairs.record, playing)
    reserve = _Reserve(pairs, plan, deadline, clock() - began)
    for number, todo in pairs.planned_not_played():
        log(f"round {number}: {len(todo)} pairing(s) planned and not played yet")
        pairs.enqueue(todo, number)

    def more() -> bool:
        """Plan the next round among the bots not playing now; False when none is planned."""
        counts, busy, bots = pairs.counts(), pairs.busy(), ratings.rated()
        wide = unsettled(bots, plan.target)
        seekers = [b for b in wide if counts[b.key] < plan.max_pairings and b.key not in busy]
        fit = pairs.fit(reserve.results_until(len(seekers)))
        cut = fit is not None and fit < len(seekers)
        pairs.cut = cut and not fit
        if cut:  # as many as fit in what is left of the budget, the widest first
            seekers = seekers[:fit]
        todo = plan_round(bots, seekers, pairs.taken(), plan.seed, plan.players, busy)
        if not todo:
            return False
        number = pairs.record.plan(todo)
        log(
            f"round {number}: {len(todo)} pairing(s)"
            + (" (as many as fit the time budget)" if cut else "")
            + f"; {len(wide)} bot(s) wider than ±{plan.target:g}"
        )
        pairs.enqueue(todo, number)
        return True

    def on_result(keys: Keys, ranks: list[Any]) -> None:
        began = clock()
        ratings.add(keys, ranks)
        reserve.seconds += clock() - began
        reserve.rated += len(ranks)

    pairs.run(more, reserve.results_until, on_result)
    return sure_and_why(ratings.rated(), pairs.out_of_time, plan)


def sure_and_why(
    bots: list[Any], out_of_time: bool, plan: Plan, stopped: str | None = None
) -> dict[str, Any]:
    """How sure the ratings are (schedule.how_sure) and why the schedule stopped (``stopped``:
    what stopped the league before it was done, such as Ctrl-C)."""
    sure: dict[str, Any] = dict(how_sure(bots, plan.target))
    wide = unsettled(bots, plan.target)
    if not wide:
        sure["stopped"] = f"every 95% interval is within ±{plan.target:g}"
    elif stopped is not None:
        sure["stopped"] = (
            f"{stopped} with {len(wide)} interval(s) wider than ±{plan.target:g}; run the "
            "league again to go on (from its record)"
        )
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
