"""The expert's tuning knobs and its gap cost, shared by the per-game bot (``agents.expert``) and
the batched planner (``agents.batched``), so that neither module imports the other."""

from __future__ import annotations

from dataclasses import dataclass

INF = float("inf")
QUANTUM = 1024.0  # plan costs are multiples of 1 / QUANTUM (agents.batched._expert_costs)


@dataclass(frozen=True)
class ExpertParams:
    """Tuning knobs (found by tournament against ``heuristic``).

    gap_power: how steeply a gap's cost grows with the number of slots g in it (g ** gap_power).
    width_power: how steeply a gap's cost grows as its window of candidate cards narrows.
    take_margin: turns the discard must save beyond a blind draw's expected saving to be taken.
    keep_margin: turns a drawn card must save to be kept.
    """

    gap_power: float = 2.0
    width_power: float = 1.1
    take_margin: float = 0.0
    keep_margin: float = 1e-9


def gap_factor(g: int, params: ExpertParams) -> float:
    """Cost of a gap of g >= 1 slots per unit of (U / k) ** width_power (shared with agents.batched)."""
    return g**params.gap_power
