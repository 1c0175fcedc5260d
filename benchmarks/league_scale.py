"""A class of N generated submissions of known, graded strength, for the league benchmarks.

Submission ``s_NNN.py`` is the expert bot that plays a random legal move with probability
``NNN / (N - 1)`` (``s_000`` is the expert itself, the last one plays at random), each a file
``racko new-bot`` could have written: it plays sandboxed like any student's bot, and the true
order is known. ``benchmarks.league_pairing_budget`` rates such a class; ``BOT`` on another
built-in bot (``base``) makes ``benchmarks.league_class``'s.
"""

from __future__ import annotations

from pathlib import Path

BOT = '''"""The {base} bot, but a random legal move with probability {p} (benchmarks/league_scale.py)."""

import random

import agents
from agents.obs import legal_actions

P = {p}


class Bot:
    def __init__(self, num_players=2, seed=None):
        self.base = agents.load("{base}", num_players)
        self.rng = random.Random(seed)

    def seed(self, seed):
        self.rng.seed(seed)

    def reset(self):
        self.base.reset()

    def act(self, obs):
        if self.rng.random() < P:
            return self.rng.choice(legal_actions(obs))
        return self.base.act(obs)
'''


def write_bots(folder: Path, n: int) -> list[str]:
    """``n`` submissions in ``folder``, strongest first; their labels in true order."""
    folder.mkdir(parents=True, exist_ok=True)
    labels = []
    for i in range(n):
        label = f"s_{i:03d}"
        (folder / f"{label}.py").write_text(
            BOT.format(p=round(i / max(1, n - 1), 4), base="expert")
        )
        labels.append(label)
    return labels
