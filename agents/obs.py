"""Decode a seat's observation dict into plain Python values, for bots and tools.

Bots read the observation vector (``racko_env.observation``), never the engine, so they see only
what their seat may know. Any layout version decodes (versions only append); cards are stored as
``card / N``, the deck size N following from the player count. A game of other sizes has a layout
of its own and a deck the vector does not say: its decoders take the game's ``config``, which bots
get from their rules options (``rules_config``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from racko_env.actions import NUM_ACTIONS, Phase
from racko_env.config import RulesConfig
from racko_env.observation import DEFAULT, OBS_SIZES, Layout, layout_for
from racko_env.rules import RACK_SIZE, deck_size


def rules_config(num_players: int, rules_options: dict[str, Any]) -> RulesConfig | None:
    """The game a bot is made for, if its sizes need it (``None`` for the rule book's sizes,
    whose deck every decoder reads from the vector): what ``decode``/``cards``/``split`` take.
    Keys that are not rules options (a bot's own, ``seed``) are left to the bot; bad values
    raise ``ValueError`` naming the option."""
    names = {f.name for f in fields(RulesConfig)}
    options = {k: v for k, v in rules_options.items() if k in names}
    config = RulesConfig.from_dict({**options, "num_players": num_players})
    return None if config.is_default_size and config.num_players > 1 else config


def _layout(config: RulesConfig | None) -> Layout:
    return DEFAULT if config is None else layout_for(config)


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
        """The slot a card belongs to in the slot-zone strategy: floor((c-1) * k / N)."""
        return card_zone(card, self.num_cards, len(self.rack))


def card_zone(card: int, num_cards: int, rack_size: int = RACK_SIZE) -> int:
    """Slot index 0..k-1 a card belongs to if the deck 1..num_cards is split into k (the rack's
    slots) equal zones."""
    return (card - 1) * rack_size // num_cards


def zone_range(slot: int, num_cards: int, rack_size: int = RACK_SIZE) -> tuple[int, int]:
    """The lowest and highest card of a slot's zone (inclusive), e.g. slot 0 of 40 cards -> (1, 4)."""
    return -(-slot * num_cards // rack_size) + 1, -(-(slot + 1) * num_cards // rack_size)


def split(
    observation: Mapping[str, Any], config: RulesConfig | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The (vector, mask) of an observation dict, checked for shape so bad input fails clearly
    (the widths of ``config``'s layout, default the rule book's)."""
    if not isinstance(observation, Mapping) or "observation" not in observation:
        raise TypeError(
            "a bot takes the env's observation dict {'observation': ..., 'action_mask': ...}, "
            f"got {type(observation).__name__}"
        )
    vec = np.asarray(observation["observation"], dtype=np.float64)
    mask = np.asarray(observation.get("action_mask", np.ones(NUM_ACTIONS)), dtype=np.int64)
    sizes = OBS_SIZES if config is None else layout_for(config).sizes
    if vec.ndim != 1 or vec.shape[0] not in sizes.values():
        widths = " or ".join(f"({w},)" for w in sizes.values())
        raise ValueError(f"observation vector must have shape {widths}, got {vec.shape}")
    if mask.shape != (NUM_ACTIONS,):
        raise ValueError(f"action_mask must have shape ({NUM_ACTIONS},), got {mask.shape}")
    return vec, mask


@dataclass(frozen=True)
class Cards:
    """The integer view of a batch of observation vectors [B, width]: the one place that turns
    the layout's ``card / N`` floats back into cards (``decode`` for one seat, the batched bots and
    the planner read it). Card arrays hold 0 for none/unknown; ``phase`` is -1 off turn."""

    players: np.ndarray  # [B] seats at the table
    num_cards: np.ndarray  # [B] the deck size N
    rack: np.ndarray  # [B, k] own rack (k = 10 by the rule book)
    opp_slots: np.ndarray  # [B, opponent blocks * k] the public opponent slots
    held: np.ndarray  # [B]
    discard_top: np.ndarray  # [B]
    draw_top: np.ndarray  # [B] known top of the draw pile (flip), else 0
    draw_size: np.ndarray  # [B]
    phase: np.ndarray  # [B] Phase value, -1 when the seat is not on turn


def cards(obs: np.ndarray, config: RulesConfig | None = None) -> Cards:
    """Decode a batch of observation vectors (any layout version: versions only append) of the
    game ``config`` (``rules_config``; default the rule book's sizes, the deck read from the
    player count)."""
    vec = np.asarray(obs, dtype=np.float64)
    lay = _layout(config)
    if config is None:
        players = 1 + np.rint(vec[:, lay.OPP_PRESENT].sum(axis=1)).astype(np.intp)
        n = np.array([deck_size(int(p)) for p in players], dtype=np.intp).reshape(-1)
    else:
        players = np.full(len(vec), config.num_players, dtype=np.intp)
        n = np.full(len(vec), config.num_cards, dtype=np.intp)
    scale = n[:, None].astype(np.float64)
    phase_hot = vec[:, lay.PHASE]
    return Cards(
        players=players,
        num_cards=n,
        rack=np.rint(vec[:, lay.RACK] * scale).astype(np.intp),
        opp_slots=np.rint(vec[:, lay.OPP_SLOTS] * scale).astype(np.intp),
        held=np.rint(vec[:, lay.HELD] * n).astype(np.intp),
        discard_top=np.rint(vec[:, lay.DISCARD_TOP] * n).astype(np.intp),
        draw_top=np.rint(vec[:, lay.DRAW_TOP_KNOWN] * n).astype(np.intp),
        draw_size=np.rint(vec[:, lay.DRAW_SIZE] * n).astype(np.intp),
        phase=np.where(phase_hot.max(axis=1) > 0.5, phase_hot.argmax(axis=1), -1),
    )


def legal_actions(
    observation: Mapping[str, Any], config: RulesConfig | None = None
) -> tuple[int, ...]:
    """Action ids the mask allows (empty when the seat is not on turn)."""
    _, mask = split(observation, config)
    return tuple(int(a) for a in np.flatnonzero(mask))


def decode(observation: Mapping[str, Any], config: RulesConfig | None = None) -> View:
    """Decode the observation dict of one seat (see ``View``) of the game ``config``
    (``rules_config``; default the rule book's sizes)."""
    vec, mask = split(observation, config)
    lay = _layout(config)
    c = cards(vec[None], config)
    n_players, n = int(c.players[0]), int(c.num_cards[0])
    rack = tuple(int(x) for x in c.rack[0])
    opp_raw = [int(x) for x in c.opp_slots[0]]
    k = lay.rack_size
    opponents = tuple(tuple(opp_raw[q * k : (q + 1) * k]) for q in range(n_players - 1))
    phase = Phase(int(c.phase[0])) if c.phase[0] >= 0 else None
    held = int(c.held[0]) or None
    top = int(c.discard_top[0]) or None
    draw_top = int(c.draw_top[0]) or None
    return View(
        num_players=n_players,
        num_cards=n,
        rack=rack,
        opponents=opponents,
        held=held,
        held_from_discard=bool(vec[lay.HELD_FROM_DISCARD] > 0.5),
        discard_top=top,
        draw_top=draw_top,
        draw_size=int(c.draw_size[0]),
        phase=phase,
        turn_fraction=float(vec[lay.TURN]),
        partners=bool(vec[lay.PARTNERS] > 0.5),
        in_discard=frozenset(int(i) + 1 for i in np.flatnonzero(vec[lay.IN_DISCARD] > 0.5)),
        unseen=frozenset(int(i) + 1 for i in np.flatnonzero(vec[lay.UNSEEN] > 0.5)),
        legal=tuple(int(a) for a in np.flatnonzero(mask)),
    )
