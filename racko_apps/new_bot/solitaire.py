"""The solitaire starter: ``racko new-bot my_agent --solitaire`` writes the package
``my_agent/__init__.py``, a legal, suboptimal tabular agent for the ``solitaire`` rubric, and
``test_my_agent.py``.

The agent turns each observation into its tabular state (``racko_env.solitaire_env.
observation_index``) and plays the action a policy table holds there: ``my_agent/policy.npy``
when the student has saved one (one action id per tabular observation, e.g. the greedy policy of
a Q-table), else a simple rule to improve on. A package, because a sandboxed submission sees
only its own folder (docs/coursework/submissions.md); the value table the rubric grades goes
beside it, ``my_agent/values.npy``.
"""

from __future__ import annotations

from pathlib import Path

from racko_env.files import write_text_atomic

AGENT_TEMPLATE = '''"""{name}: a tabular agent for solitaire Rack-O (3 slots, cards 1-8). Started by
`racko new-bot {name} --solitaire`: make it optimal. Hand in this folder, {name}/.

Graded exactly with `racko grade {name}:Bot --rubric solitaire`: the policy by its exact
expected turns against the optimum, and {name}/values.npy (expected turns per tabular
observation, the optimal return's negative) by its largest error. See docs/coursework/ladder.md.

How it plays: the observation becomes the number of its tabular state (the states a player can
tell apart: rack, discard top or held card, the draw pile's cards), and the agent plays what its
policy table holds there. Save a table of one action id per state as {name}/policy.npy, e.g.
after Q-learning on gymnasium.make("racko/RackoSolitaire-v0", rack_size=3, deck_size=8,
tabular=True):

    np.save("{name}/policy.npy", np.where(legal, q, -np.inf).argmax(axis=1))

Without that file it plays a simple rule: each slot wants a card near its share of the deck.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase
from racko_env.solitaire_env import observation_index, solitaire_space

TABLE = Path(__file__).with_name("policy.npy")


class Bot:
    name = "{name}"

    def __init__(self, rack_size: int = 3, deck_size: int = 8, **rules: Any) -> None:
        self.rack_size, self.deck_size = rack_size, deck_size
        self.space = solitaire_space(rack_size, deck_size)
        self.table = np.load(TABLE, allow_pickle=False) if TABLE.is_file() else None

    def reset(self) -> None:
        """A new round: this agent remembers nothing."""

    def act(self, observation: Mapping[str, Any]) -> int:
        state = observation_index(observation, self.rack_size, self.deck_size)
        if self.table is not None:
            return int(self.table[state])
        return self.rule(state)

    def rule(self, state: int) -> int:
        """The starter's rule: take or keep a card that brings some slot closer to its ideal
        card; put a card where it helps most."""
        s = self.space.decode(state)
        slot, gain = self.best_slot(s.rack, s.card)
        if s.phase == Phase.DRAW:
            return TAKE_DISCARD if gain > 0 else DRAW_PILE
        if s.phase == Phase.KEEP_OR_DISCARD:
            return KEEP if gain > 0 else DISCARD
        return slot

    def best_slot(self, rack: tuple[int, ...], card: int) -> tuple[int, float]:
        """The slot where ``card`` gets closest to the ideal card, and how much closer."""

        def ideal(slot: int) -> float:
            return (slot + 0.5) * self.deck_size / self.rack_size

        gains = [abs(rack[i] - ideal(i)) - abs(card - ideal(i)) for i in range(len(rack))]
        slot = max(range(len(rack)), key=gains.__getitem__)
        return slot, gains[slot]
'''

TEST_TEMPLATE = '''"""Tests of {name}.py (run: python -m pytest test_{name}.py)."""

import gymnasium
import numpy as np

import racko_env  # noqa: F401  (registers racko/RackoSolitaire-v0)
from racko_env.solitaire import evaluate, solve
from {name} import Bot


def test_plays_legal_moves_to_rack_o() -> None:
    env = gymnasium.make("racko/RackoSolitaire-v0", rack_size=3, deck_size=8)
    bot = Bot()
    for episode in range(20):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            action = bot.act({{"observation": obs, "action_mask": info["action_mask"]}})
            assert info["action_mask"][action] == 1
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated


def test_exact_expected_turns_against_the_optimum() -> None:
    turns, optimum = evaluate(Bot(), 3, 8, turn_limit=400), solve(3, 8).expected_turns
    print(f"{{turns:.4f}} expected turns, optimum {{optimum:.4f}}")
    assert np.isfinite(turns) and turns >= optimum - 1e-9
'''


def write_solitaire_bot(name: str, folder: Path) -> tuple[Path, Path]:
    """Write ``NAME/__init__.py`` (the solitaire starter) and ``test_NAME.py`` into ``folder``;
    ValueError if any exists (``racko_apps.new_bot.starter`` checks the name first)."""
    bot_path, test_path = folder / name / "__init__.py", folder / f"test_{name}.py"
    for path in (folder / name, folder / f"{name}.py", test_path):
        if path.exists():
            raise ValueError(f"{path} already exists; not overwriting it")
    bot_path.parent.mkdir()
    write_text_atomic(bot_path, AGENT_TEMPLATE.format(name=name))
    write_text_atomic(test_path, TEST_TEMPLATE.format(name=name))
    return bot_path, test_path
