"""Points for each criterion of a rubric, from what was measured.

A ``win_rate`` criterion scores by its ``score``: ``steps`` (the highest threshold reached),
``interpolate`` (linearly between thresholds) or ``lower_bound`` (the steps, reached by the lower
bound of the win rate's 95% Wilson interval).
"""

from __future__ import annotations

from typing import Any

from racko_apps.grade.rubric import Criterion, Rubric
from racko_eval import wilson_interval


def steps_points(thresholds: tuple[tuple[float, float], ...], rate: float) -> float:
    """The points of the highest threshold ``rate`` reaches (0 below them all)."""
    return max((pts for at, pts in thresholds if rate >= at), default=0.0)


def interpolated_points(thresholds: tuple[tuple[float, float], ...], rate: float) -> float:
    """Points rising linearly from one threshold to the next; a threshold's own points at it."""
    if not thresholds or rate < thresholds[0][0]:
        return 0.0
    for (lo, lo_pts), (hi, hi_pts) in zip(thresholds, thresholds[1:], strict=False):
        if lo <= rate < hi:
            return lo_pts + (rate - lo) / (hi - lo) * (hi_pts - lo_pts)
    return thresholds[-1][1]


def win_rate_points(crit: Criterion, measured: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """A win_rate criterion's points, and what the row shows of how they were reached."""
    rate = measured["win_rate"]
    if crit.scoring == "interpolate":
        return interpolated_points(crit.thresholds, rate), {}
    if crit.scoring == "lower_bound":
        low, high = wilson_interval(measured["wins"], measured["rounds"])
        shown = {"interval_95": [round(low, 6), round(high, 6)]}
        return steps_points(crit.thresholds, low), shown
    return steps_points(crit.thresholds, rate), {}


def score(
    crit: Criterion, loaded: bool, load_error: str, measured: dict[str, Any], rubric: Rubric
) -> dict[str, Any]:
    """The report's row for ``crit``: its points and a one-line result."""
    row: dict[str, Any] = {"name": crit.name, "check": crit.check, "max_points": crit.points}
    if crit.check == "loads":
        row.update(points=crit.points if loaded else 0.0, result="loads" if loaded else load_error)
        return row
    if not loaded:
        row.update(points=0.0, result="not graded: the bot did not load")
        return row
    if crit.check == "legal":
        m = measured["legal"]
        ok = m["legal"] == m["asked"]
        row.update(m, points=crit.points if ok else 0.0, result=f"{m['legal']}/{m['asked']} legal")
        return row
    if crit.check == "speed":
        m = measured["speed"]
        all_answered = m["answered"] == m["asked"]
        ok = all_answered and m["max_seconds"] <= rubric.time_limit
        row.update(
            m,
            time_limit=rubric.time_limit,
            points=crit.points if ok else 0.0,
            result=f"slowest decision {m['max_seconds'] * 1000:.1f} ms "
            f"(limit {rubric.time_limit * 1000:.0f} ms)"
            + ("" if all_answered else f"; {m['asked'] - m['answered']} not answered"),
        )
        return row
    m = measured[crit.name]
    earned, shown = win_rate_points(crit, m)
    interval = shown.get("interval_95")
    row.update(
        m,
        **shown,
        thresholds=[{"win_rate": r, "points": p} for r, p in crit.thresholds],
        score=crit.scoring,
        points=round(earned, 6),
        result=f"win rate {m['win_rate']:.1%} in {m['rounds']} rounds"
        + (f" (95% interval from {interval[0]:.1%})" if interval else "")
        + (f", {m['forfeits']} forfeited" if m["forfeits"] else ""),
    )
    return row
