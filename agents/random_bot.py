"""``random``: uniform over the legal actions; the floor every other bot must clear."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from agents.base import Bot
from agents.obs import legal_actions, rules_config


class RandomBot(Bot):
    """Picks uniformly among the legal actions; ``seed`` makes it reproducible."""

    name = "random"

    def __init__(self, num_players: int = 2, seed: int | None = None, **rules_options: Any) -> None:
        self.num_players = num_players
        self.config = rules_config(num_players, rules_options)  # None: the rule book's sizes
        self.rng = random.Random(seed)

    def seed(self, seed: int | None) -> None:
        self.rng.seed(seed)

    def act(self, observation: Mapping[str, Any]) -> int:
        legal = legal_actions(observation, self.config)
        if not legal:
            raise ValueError("no legal action: the seat is not on turn (all-zero action mask)")
        return self.rng.choice(legal)

    def explain(self, observation: Mapping[str, Any]) -> str:
        legal = legal_actions(observation, self.config)
        return f"pick one of the legal actions {list(legal)} at random (random bot)"
