"""The bot interface every baseline, trained and user bot follows.

A bot sees exactly what its seat may see: the env's observation dict
``{"observation": float32[W], "action_mask": int8[A]}`` (W and A from the layout in ``racko_env.observation``),
and answers with one legal action id. ``agents.obs.decode`` turns the vector into cards.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, action_name


class Bot(ABC):
    """Base class for bots: override ``act``; override ``reset`` if the bot remembers a round.

    ``name`` labels the bot in tables and messages. ``seed(s)`` is called by the evaluation harness
    before each duplicate deal, so bots that use randomness stay reproducible whatever the number of
    worker processes.
    """

    name: str = "bot"

    def reset(self) -> None:
        """A new round starts: forget anything remembered about the last one."""
        return None

    def seed(self, seed: int | None) -> None:
        """Re-seed any randomness the bot uses (deterministic bots ignore it)."""
        return None

    @abstractmethod
    def act(self, observation: Mapping[str, Any]) -> int:
        """Return a legal action id for the seat's observation dict."""

    def explain(self, observation: Mapping[str, Any]) -> str:
        """One line: what the bot would do now and why (for a terminal ``--hint``)."""
        return f"{describe_action(self.act(observation))} ({self.name})"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def describe_action(action: int, card: int | None = None) -> str:
    """A short human phrase for an action id, e.g. 'put the 17 into slot 3'."""
    the = f"the {card}" if card else "the card"
    if action == DRAW_PILE:
        return "draw from the draw pile"
    if action == TAKE_DISCARD:
        return f"take {the} from the discard pile" if card else "take the discard"
    if action == KEEP:
        return f"keep {the}"
    if action == DISCARD:
        return f"discard {the}"
    if 0 <= action <= 9:
        return f"put {the} into slot {action + 1}"
    return f"action {action} ({action_name(action)})"
