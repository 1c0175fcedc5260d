"""The fixed action ids shared by the engine, the environments, the bots and exported bot files."""

from __future__ import annotations

from enum import IntEnum
from operator import index
from typing import Any

NUM_ACTIONS = 14

# 0..9: put the held card into slot i (0 = front, printed "5"; 9 = back, printed "50").
DRAW_PILE = 10  # draw the top card of the face-down draw pile (private to the drawer)
TAKE_DISCARD = 11  # take the top card of the discard pile (public; must go into the rack)
KEEP = 12  # keep the card drawn from the draw pile (a slot decision follows)
DISCARD = 13  # discard the card drawn from the draw pile (the turn ends)


class Phase(IntEnum):
    """The decision the player on turn is asked for."""

    DRAW = 0  # legal: DRAW_PILE, TAKE_DISCARD
    KEEP_OR_DISCARD = 1  # legal: KEEP, DISCARD
    PLACE = 2  # legal: slots 0..9
    ROUND_OVER = 3  # nothing is legal until the next round is dealt
    GAME_OVER = 4


def legal_by_phase(rack_size: int = 10) -> dict[Phase, tuple[int, ...]]:
    """The legal actions of the player on turn, by phase, for racks of ``rack_size`` slots: the
    action ids are the same for every rack size (slot i is action i), a smaller rack leaves the
    higher slot actions illegal."""
    return {
        Phase.DRAW: (DRAW_PILE, TAKE_DISCARD),
        Phase.KEEP_OR_DISCARD: (KEEP, DISCARD),
        Phase.PLACE: tuple(range(rack_size)),
        Phase.ROUND_OVER: (),
        Phase.GAME_OVER: (),
    }


LEGAL_BY_PHASE: dict[Phase, tuple[int, ...]] = legal_by_phase()

ACTION_NAMES: tuple[str, ...] = tuple(f"slot_{i}" for i in range(10)) + (
    "draw_pile",
    "take_discard",
    "keep",
    "discard",
)


def action_name(action: int) -> str:
    """A readable name for an action id (for error messages and logs)."""
    if isinstance(action, int) and 0 <= action < NUM_ACTIONS:
        return ACTION_NAMES[action]
    return "not an action id"


def as_action_id(action: Any) -> int:
    """``action`` as a Python int, if it is an integer: an ``int`` (not a ``bool``), a numpy integer
    scalar or a 0-d numpy integer array (as Gymnasium's ``Discrete.contains`` accepts); else
    ``ValueError``. Standard library only: numpy integers speak ``operator.index``.

    Nothing is coerced: ``True`` is not slot 1, ``10.0`` is not a draw, ``"10"`` is not an action.
    A float that happens to be whole usually means a bug upstream (a network output fed back
    unrounded), and playing it silently hides that bug. The value is not range-checked here;
    whether it is legal is the caller's question.
    """
    if type(action) is int:  # the common case, first
        return action
    if not isinstance(action, bool):
        try:
            return index(action)  # the integer protocol: numpy integers and 0-d integer arrays
        except TypeError:
            pass
    raise ValueError(
        f"an action must be an integer action id 0..{NUM_ACTIONS - 1} (int or numpy integer), "
        f"got {action!r} of type {type(action).__name__}"
    )
