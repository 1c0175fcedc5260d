"""The plain-Python reference of ``expert``'s planner and decisions, for the tests only.

The product plans with the compiled kernel (``agents.features.Planner`` through
``agents.batched``); this is the readable statement of the same programme, one loop per step, that
``tests/agents/test_batched.py`` and ``tests/train/test_afterstate.py`` hold the kernel, the bot
and the torch twin equal to.
"""

from __future__ import annotations

from agents.expert import _cost
from agents.expert_params import INF, QUANTUM, ExpertParams, gap_factor
from agents.obs import View
from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase
from racko_env.rules import RACK_SIZE


def quantize(cost: float) -> float:
    """Round to a multiple of 1/1024, as the product's cost tables are
    (``agents.batched._expert_costs``)."""
    return round(cost * QUANTUM) / QUANTUM


class ReferencePlanner:
    """Plan costs for one decision: the cards that may still come are fixed for the decision."""

    def __init__(self, view: View, params: ExpertParams) -> None:
        n = view.num_cards
        self.n = n
        blocked = set(view.rack)
        for opp in view.opponents:
            blocked.update(c for c in opp if c)
        if view.held:
            blocked.add(view.held)
        avail = [0] * (n + 2)
        for c in range(1, n + 1):
            avail[c] = avail[c - 1] + (c not in blocked)
        avail[n + 1] = avail[n]
        self.prefix = avail
        total = max(avail[n], 1)
        # cost[g][k]: expected draws to fill a gap of g slots from k candidate cards.
        factor = [0.0] + [gap_factor(g, params) for g in range(1, RACK_SIZE + 1)]
        wp = params.width_power
        self.cost = [
            [
                0.0 if g == 0 else (INF if k < g else quantize((total / k) ** wp * factor[g]))
                for k in range(n + 1)
            ]
            for g in range(RACK_SIZE + 1)
        ]

    def gap(self, a: int, b: int, g: int) -> float:
        """Cost of the g slots between kept cards a < b (sentinels 0 and N + 1)."""
        if a >= b:
            return INF
        k = self.prefix[b - 1] - self.prefix[a]
        return self.cost[g][k] if k < len(self.cost[g]) else self.cost[g][-1]

    def tables(self, rack: tuple[int, ...]) -> tuple[list[float], list[float], list[int]]:
        """Forward and backward best costs with slot i kept (index 0 and 11 are the sentinels)."""
        vals = [0, *rack, self.n + 1]
        m = len(vals)
        fwd = [INF] * m
        fwd[0] = 0.0
        for j in range(1, m):
            vj = vals[j]
            best = INF
            for i in range(j):
                fi = fwd[i]
                if fi < best and vals[i] < vj:
                    c = fi + self.gap(vals[i], vj, j - i - 1)
                    if c < best:
                        best = c
            fwd[j] = best
        bwd = [INF] * m
        bwd[m - 1] = 0.0
        for i in range(m - 2, -1, -1):
            vi = vals[i]
            best = INF
            for j in range(i + 1, m):
                bj = bwd[j]
                if bj < best and vi < vals[j]:
                    c = bj + self.gap(vi, vals[j], j - i - 1)
                    if c < best:
                        best = c
            bwd[i] = best
        return fwd, bwd, vals

    def placements(self, rack: tuple[int, ...], cards: list[int]) -> dict[int, tuple[float, int]]:
        """For each card: (lowest plan cost after putting it in some slot, that slot)."""
        fwd, bwd, vals = self.tables(rack)
        m = len(vals)
        # Plans that do not keep slot s are unchanged by what goes into s.
        skip = []
        for s in range(1, m - 1):
            best = INF
            for i in range(s):
                if fwd[i] == INF:
                    continue
                for j in range(s + 1, m):
                    c = fwd[i] + self.gap(vals[i], vals[j], j - i - 1) + bwd[j]
                    if c < best:
                        best = c
            skip.append(best)
        out = {}
        for card in cards:
            best_cost, best_slot = INF, 0
            for s in range(1, m - 1):
                left = INF
                for i in range(s):
                    if vals[i] < card and fwd[i] < left:
                        c = fwd[i] + self.gap(vals[i], card, s - i - 1)
                        if c < left:
                            left = c
                right = INF
                for j in range(s + 1, m):
                    if vals[j] > card and bwd[j] < right:
                        c = bwd[j] + self.gap(card, vals[j], j - s - 1)
                        if c < right:
                            right = c
                c = min(left + right, skip[s - 1])
                if c < best_cost:
                    best_cost, best_slot = c, s - 1
            out[card] = (best_cost, best_slot)
        return out

    def value(self, rack: tuple[int, ...]) -> float:
        return self.tables(rack)[0][-1]


def reference_decision(view: View, params: ExpertParams | None = None) -> tuple[int, str]:
    """``expert``'s move and its explanation, planned by ``ReferencePlanner``."""
    if view.phase is None or not view.legal:
        raise ValueError("no legal action: the seat is not on turn (all-zero action mask)")
    p = params or ExpertParams()
    plan = ReferencePlanner(view, p)
    base = plan.value(view.rack)
    if view.phase == Phase.DRAW:
        top = view.discard_top
        pool = [view.draw_top] if view.draw_top else sorted(view.unseen)
        cards = list(pool)
        if top and TAKE_DISCARD in view.legal:
            cards.append(top)
        best = plan.placements(view.rack, cards)
        draw_gain = sum(max(0.0, base - best[c][0]) for c in pool) / len(pool) if pool else 0.0
        if top and TAKE_DISCARD in view.legal:
            cost, slot = best[top]
            if base - cost > draw_gain + p.take_margin:
                return TAKE_DISCARD, (
                    f"take the {top} from the discard pile for slot {slot + 1}: "
                    f"{_cost(base, cost)} (a blind draw lowers it by {draw_gain:.1f} "
                    "on average)"
                )
        return DRAW_PILE, (
            f"draw from the draw pile: a blind draw lowers the plan cost by "
            f"{draw_gain:.1f} on average, more than the {top or 'empty'} on the discard pile"
        )
    card = view.held
    if card is None:
        raise ValueError("observation has no held card in a keep/place decision")
    cost, slot = plan.placements(view.rack, [card])[card]
    if view.phase == Phase.KEEP_OR_DISCARD:
        if base - cost > p.keep_margin:
            return KEEP, f"keep the {card} for slot {slot + 1}: {_cost(base, cost)}"
        return DISCARD, f"discard the {card}: no slot gets closer to Rack-O with it"
    return slot, f"put the {card} into slot {slot + 1}: {_cost(base, cost)}"
