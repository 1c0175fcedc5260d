"""What a player of the OpenSpiel game ``racko`` sees (``racko_env.openspiel``): the observer, the
tensors and the strings, for every layout ``racko_env.observation.layout_for`` gives.

The tensors are the env's observation (``racko_env.observation.encode``), all zeros while cards
are dealt; the strings write that vector out field by field (see ``racko_env.openspiel``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from racko_env.observation import DEFAULT, Layout, encode, layout_for


class RackoObserver:
    """OpenSpiel's Python observer: the env's observation as the tensor, its layout's fields as
    the named pieces; the strings as ``racko_env.openspiel``'s docstring says."""

    def __init__(self, perfect_recall: bool, layout: Layout = DEFAULT) -> None:
        self.perfect_recall = perfect_recall
        self.layout = layout
        self.tensor = np.zeros(layout.size, np.float32)
        self.dict = {f.name: self.tensor[f.slice] for f in layout.fields}

    def set_from(self, state: Any, player: int) -> None:
        self.tensor[:] = state_tensor(state._t, player)

    def string_from(self, state: Any, player: int) -> str:
        return state_text(state._t, player, self.perfect_recall)


def state_tensor(table: Any, player: int) -> np.ndarray:
    """The observation of ``player`` at a state's table (``racko_env.openspiel._Table``)."""
    game = table.engine
    if table.dealing:
        return np.zeros(layout_for(game.config).size, np.float32)
    return encode(game, player, table.include_scores)


def state_text(table: Any, player: int, perfect_recall: bool) -> str:
    """The observation string of ``player``, with perfect recall the information-state string."""
    game = table.engine
    if table.dealing:
        return table.dealing_text()
    obs = encode(game, player, table.include_scores)
    text = observation_text(obs, game.num_cards, layout_for(game.config))
    if perfect_recall:
        text += f" | discard order: {' '.join(map(str, game.discard))}"
        if game.draw_known:
            text += f" | draw order: {' '.join(map(str, game.draw))}"
    return text


@functools.cache
def _field_kinds(layout: Layout) -> list[tuple[str, int, int, str]]:
    kinds = []
    for f in layout.fields:
        if layout.CARD_SCALED.start <= f.start and f.stop <= layout.CARD_SCALED.stop:
            kind = "cards"
        elif f.slice in (layout.IN_DISCARD, layout.UNSEEN):
            kind = "set"
        else:
            kind = "number"
        kinds.append((f.name, f.start, f.stop, kind))
    return kinds


def observation_text(obs: np.ndarray, num_cards: int, layout: Layout = DEFAULT) -> str:
    """An observation vector written out field by field (``layout``'s): cards as numbers, the card
    sets (``in_discard``, ``unseen``) as lists of cards, the rest as numbers. Equal strings mean
    equal vectors, whatever fields a later layout version appends."""
    cards = np.rint(obs * num_cards).astype(np.int64).tolist()
    values = obs.tolist()
    parts = []
    for name, start, stop, kind in _field_kinds(layout):
        if kind == "cards":
            shown = " ".join(map(str, cards[start:stop]))
        elif kind == "set":
            shown = " ".join(str(i + 1) for i, v in enumerate(values[start:stop]) if v > 0.5)
        else:
            shown = " ".join(map(repr, values[start:stop]))
        parts.append(f"{name}: {shown}")
    return " | ".join(parts)
