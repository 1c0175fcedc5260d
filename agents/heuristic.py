"""``heuristic``: the classic slot-zone strategy.

The deck 1..N is cut into k equal zones (k the rack's slots, 10 by the rule book) and card c
belongs in slot floor((c-1)*k/N). Zones are
ordered, so a rack with every slot holding a card of its own zone is ascending: Rack-O. The bot
takes the discard, or keeps a drawn card, only when it fills its zone slot where the card now there
is outside its zone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.base import Bot, describe_action
from agents.obs import View, decode, rules_config, zone_range
from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase


class HeuristicBot(Bot):
    """Slot-zone strategy: fill each slot with a card of its zone, ignore everything else."""

    name = "heuristic"

    def __init__(self, num_players: int = 2, **rules_options: Any) -> None:
        self.num_players = num_players
        self.config = rules_config(num_players, rules_options)  # None: the rule book's sizes

    def _improves(self, view: View, card: int) -> bool:
        """The card fills its zone slot, which holds a card from another zone now."""
        slot = view.zone(card)
        return view.zone(view.rack[slot]) != slot

    def _choose(self, view: View) -> tuple[int, str]:
        if view.phase is None or not view.legal:
            raise ValueError("no legal action: the seat is not on turn (all-zero action mask)")
        if view.phase == Phase.DRAW:
            top = view.discard_top
            if top and TAKE_DISCARD in view.legal and self._improves(view, top):
                return TAKE_DISCARD, f"take the {top} from the discard pile: {self._why(view, top)}"
            why = f"the {top} on the discard pile" if top else "the empty discard pile"
            return DRAW_PILE, f"draw from the draw pile: {why} does not fill an open zone"
        card = view.held
        if card is None:
            raise ValueError("observation has no held card in a keep/place decision")
        if view.phase == Phase.KEEP_OR_DISCARD:
            if self._improves(view, card):
                return KEEP, f"keep the {card}: {self._why(view, card)}"
            slot = view.zone(card)
            return DISCARD, f"discard the {card}: slot {slot + 1} already holds a card of its zone"
        slot = view.zone(card)
        return slot, f"{describe_action(slot, card)}: {self._why(view, card)}"

    def _why(self, view: View, card: int) -> str:
        slot = view.zone(card)
        lo, hi = zone_range(slot, view.num_cards, len(view.rack))
        return f"it goes into slot {slot + 1} (zone {lo}-{hi}) in place of the {view.rack[slot]}"

    def act(self, observation: Mapping[str, Any]) -> int:
        return self._choose(decode(observation, self.config))[0]

    def explain(self, observation: Mapping[str, Any]) -> str:
        return self._choose(decode(observation, self.config))[1]
