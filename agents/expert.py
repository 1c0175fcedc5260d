"""``expert``: a planning bot that estimates how many turns its rack needs to reach Rack-O.

A *plan* keeps an ascending subsequence of the rack's cards and re-fills the slots between them:
a gap of g slots between kept cards a < b, with k of the U cards in play between them still able
to come, takes about ``(U / k) ** 1.1 * g ** 2`` draws (exponents tuned by tournament). The bot
keeps the cheapest plan (a dynamic programme over the slots) and plays the move that lowers it
most: it takes the discard when that beats a blind draw's expected gain, and keeps a drawn card
only when it lowers the cost. It plans with the one compiled planner (``agents.batched.ExpertPlan``,
as ``BatchExpert`` does at thousands of decisions); ``tests/agents/reference_expert.py`` is the
readable reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.base import Bot
from agents.expert_params import INF, ExpertParams
from agents.obs import cards, rules_config, split
from racko_env.actions import DISCARD, KEEP, TAKE_DISCARD, Phase

if TYPE_CHECKING:
    from agents.batched import ExpertPlan


class ExpertBot(Bot):
    """Plans the cheapest ascending completion of its rack and plays the move that shortens it."""

    name = "expert"

    def __init__(
        self, num_players: int = 2, params: ExpertParams | None = None, **rules_options: Any
    ) -> None:
        self.num_players = num_players
        self.params = params or ExpertParams()
        self.config = rules_config(num_players, rules_options)  # None: the rule book's sizes

    def _plan(self, observation: Mapping[str, Any]) -> ExpertPlan:
        from agents.batched import ExpertPlan

        vec, mask = split(observation, self.config)
        if not mask.any():
            raise ValueError("no legal action: the seat is not on turn (all-zero action mask)")
        seen = cards(vec[None], self.config)
        n = int(seen.num_cards[0])
        masks = mask[None].astype(bool)
        return ExpertPlan(vec[None], masks, n, self.params, seen, self.config)

    def _choose(self, observation: Mapping[str, Any]) -> tuple[int, str]:
        plan = self._plan(observation)
        action = int(plan.act()[0])
        base, row = float(plan.base[0]), np.zeros(1, dtype=np.intp)
        if plan.phase[0] == Phase.DRAW:
            draw_gain, cost, slot, _ = (float(x[0]) for x in plan.draw_values(row))
            top = int(plan.top[0])
            if action == TAKE_DISCARD:
                return action, (
                    f"take the {top} from the discard pile for slot {int(slot) + 1}: "
                    f"{_cost(base, cost)} (a blind draw lowers it by {draw_gain:.1f} on average)"
                )
            return action, (
                f"draw from the draw pile: a blind draw lowers the plan cost by "
                f"{draw_gain:.1f} on average, more than the {top or 'empty'} on the discard pile"
            )
        card = int(plan.held[0])
        cost_of, slot_of = plan.placements(row, plan.held[:, None])
        cost, slot = float(cost_of[0, 0]), int(slot_of[0, 0])
        if action == KEEP:
            return action, f"keep the {card} for slot {slot + 1}: {_cost(base, cost)}"
        if action == DISCARD:
            return action, f"discard the {card}: no slot gets closer to Rack-O with it"
        return action, f"put the {card} into slot {slot + 1}: {_cost(base, cost)}"

    def act(self, observation: Mapping[str, Any]) -> int:
        # the move alone: the explanation's extra planner calls are explain()'s (a league's
        # generated class spends most of its CPU in this method)
        return int(self._plan(observation).act()[0])

    def explain(self, observation: Mapping[str, Any]) -> str:
        return self._choose(observation)[1]


def _cost(before: float, after: float) -> str:
    """The planner's cost before and after the move, named for what it is: a score for ranking
    moves (lower is closer to Rack-O), not a count of turns. It reads several times the turns a
    rack still needs, so calling it "turns" would mislead players."""

    def show(cost: float) -> str:
        return "no plan" if cost == INF else f"{cost:.0f}"

    return f"plan cost {show(before)} -> {show(after)} (lower is closer to Rack-O)"
