"""Decode a seat's observation dict into plain Python values, for bots and tools.

Bots must see only what their seat may know, so they read the observation vector
(``racko_env.observation``) rather than the engine. ``View`` holds layout version 1's fields; a
vector of any layout version is accepted (``racko_v0`` gives version 1, ``racko_v1`` version 2),
since versions only append fields. Cards are stored as ``card / N``; the deck size N
(40/50/60) follows from the player count, which is 1 + the opponent-present flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from racko_env.actions import NUM_ACTIONS, Phase
from racko_env.observation import (
    DISCARD_TOP,
    DRAW_SIZE,
    DRAW_TOP_KNOWN,
    HELD,
    HELD_FROM_DISCARD,
    IN_DISCARD,
    OBS_SIZES,
    OPP_PRESENT,
    OPP_SLOTS,
    PARTNERS,
    PHASE,
    RACK,
    TURN,
    UNSEEN,
)
from racko_env.rules import RACK_SIZE, deck_size


@dataclass(frozen=True)
class View:
    """Everything one seat knows, decoded.

    ``opponents[k]`` are the public slots of the k-th opponent after the observer (0 = unknown);
    ``held`` is the card in hand (None when none); ``phase`` is None when the seat is not on turn.
    """

    num_players: int
    num_cards: int
    rack: tuple[int, ...]
    opponents: tuple[tuple[int, ...], ...]
    held: int | None
    held_from_discard: bool
    discard_top: int | None
    draw_top: int | None
    draw_size: int
    phase: Phase | None
    turn_fraction: float
    partners: bool
    in_discard: frozenset[int]
    unseen: frozenset[int]
    legal: tuple[int, ...]

    def zone(self, card: int) -> int:
        """The slot a card belongs to in the slot-zone strategy: floor((c-1) * 10 / N)."""
        return card_zone(card, self.num_cards)


def card_zone(card: int, num_cards: int) -> int:
    """Slot index 0-9 a card belongs to if the deck 1..num_cards is split into 10 equal zones."""
    return (card - 1) * RACK_SIZE // num_cards


def zone_range(slot: int, num_cards: int) -> tuple[int, int]:
    """The lowest and highest card of a slot's zone (inclusive), e.g. slot 0 of 40 cards -> (1, 4)."""
    per = num_cards // RACK_SIZE
    return slot * per + 1, (slot + 1) * per


def split(observation: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The (vector, mask) of an observation dict, checked for shape so bad input fails clearly."""
    if not isinstance(observation, Mapping) or "observation" not in observation:
        raise TypeError(
            "a bot takes the env's observation dict {'observation': ..., 'action_mask': ...}, "
            f"got {type(observation).__name__}"
        )
    vec = np.asarray(observation["observation"], dtype=np.float64)
    mask = np.asarray(observation.get("action_mask", np.ones(NUM_ACTIONS)), dtype=np.int64)
    if vec.ndim != 1 or vec.shape[0] not in OBS_SIZES.values():
        widths = " or ".join(f"({w},)" for w in OBS_SIZES.values())
        raise ValueError(f"observation vector must have shape {widths}, got {vec.shape}")
    if mask.shape != (NUM_ACTIONS,):
        raise ValueError(f"action_mask must have shape ({NUM_ACTIONS},), got {mask.shape}")
    return vec, mask


def legal_actions(observation: Mapping[str, Any]) -> tuple[int, ...]:
    """Action ids the mask allows (empty when the seat is not on turn)."""
    _, mask = split(observation)
    return tuple(int(a) for a in np.flatnonzero(mask))


def decode(observation: Mapping[str, Any]) -> View:
    """Decode the observation dict of one seat (see ``View``)."""
    vec, mask = split(observation)
    n_players = 1 + int(round(float(vec[OPP_PRESENT].sum())))
    n = deck_size(n_players)

    def card(x: float) -> int:
        return int(round(x * n))

    rack = tuple(card(x) for x in vec[RACK])
    opp_raw = [card(x) for x in vec[OPP_SLOTS]]
    opponents = tuple(
        tuple(opp_raw[k * RACK_SIZE : (k + 1) * RACK_SIZE]) for k in range(n_players - 1)
    )
    phase_hot = vec[PHASE]
    phase = Phase(int(np.argmax(phase_hot))) if phase_hot.max() > 0.5 else None
    held = card(vec[HELD]) or None
    top = card(vec[DISCARD_TOP]) or None
    draw_top = card(vec[DRAW_TOP_KNOWN]) or None
    return View(
        num_players=n_players,
        num_cards=n,
        rack=rack,
        opponents=opponents,
        held=held,
        held_from_discard=bool(vec[HELD_FROM_DISCARD] > 0.5),
        discard_top=top,
        draw_top=draw_top,
        draw_size=card(vec[DRAW_SIZE]),
        phase=phase,
        turn_fraction=float(vec[TURN]),
        partners=bool(vec[PARTNERS] > 0.5),
        in_discard=frozenset(int(i) + 1 for i in np.flatnonzero(vec[IN_DISCARD] > 0.5)),
        unseen=frozenset(int(i) + 1 for i in np.flatnonzero(vec[UNSEEN] > 0.5)),
        legal=tuple(int(a) for a in np.flatnonzero(mask)),
    )
