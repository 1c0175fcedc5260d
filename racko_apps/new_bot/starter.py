"""``racko new-bot NAME``: write a starter bot ``NAME.py`` and its test ``test_NAME.py``.

    racko new-bot my_bot            # in the current folder
    racko new-bot my_bot --dir bots
    racko new-bot my_bot --function     # the bot as one function act(observation) -> int
    racko new-bot my_bot --weights      # a folder my_bot/: a numpy network and its weights.npz

The bot plays at once, from its folder: ``racko play --bots my_bot:Bot`` (``my_bot:act`` with
``--function``). Existing files are never overwritten.
"""

from __future__ import annotations

import importlib.util
import keyword
import sys
from pathlib import Path

from racko_apps.new_bot.weights import WEIGHTS_FILE, WEIGHTS_TEMPLATE, starter_weights
from racko_env.cli import OneLineParser
from racko_env.files import write_bytes_atomic, write_text_atomic

GUIDE = """What the bot sees. ``act(observation)`` gets exactly what its seat may know, the env's dict
``{"observation": 270 floats, "action_mask": 14 ints}`` (layout version 2 of
``racko_env.observation``; ``racko_env.observation.FIELDS`` names every piece, e.g. each opponent
slot's history). ``agents.obs.decode(observation)`` turns it into a ``View`` with plain numbers:

    view.rack         your 10 cards, slot 0 (front, the "5" slot) to slot 9 (back, "50")
    view.held         the card in your hand (None at the start of a turn)
    view.discard_top  the card on the discard pile (None if it is empty)
    view.phase        the decision asked: Phase.DRAW, Phase.KEEP_OR_DISCARD or Phase.PLACE
    view.legal        the legal action ids now (the same as the mask)
    view.num_cards    the deck size: 40, 50 or 60 cards for 2, 3 or 4 players
    view.opponents    per opponent, cards seen going into their slots (0 = unknown)
    view.unseen       cards you have not seen anywhere (they may still come)
    view.zone(card)   the slot a card belongs to if the deck is cut into 10 equal zones

Actions (racko_env.actions): 0-9 put the held card into that slot (the old card is discarded),
DRAW_PILE (10), TAKE_DISCARD (11; the card must then go into a slot), KEEP (12) and DISCARD (13)
for a drawn card. Rules: docs/rules.md. A bot must return one of ``view.legal``: anything else
forfeits the round under ``racko grade`` and ``racko league``.
"""

BOT_TEMPLATE = '''"""{name}: a Rack-O bot. Started by `racko new-bot {name}`: make it yours.

Try it (from this folder):
    racko play --bots {name}:Bot              # play against it in the terminal
    racko grade {name}:Bot --rubric quick     # a quick grade; drop --rubric quick for the real one
    racko evaluate --bots {name}:Bot heuristic expert --rounds 200
    python -m pytest test_{name}.py

{guide}"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.base import Bot as BaseBot
from agents.obs import View, decode
from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase


class Bot(BaseBot):
    """Starter policy: every slot has an ideal card (slot i of 10 wants a card near the middle
    of the i-th tenth of the deck); take or keep a card when putting it into some slot brings
    that slot closer to its ideal card."""

    name = "{name}"

    def __init__(self, num_players: int = 2, seed: int | None = None) -> None:
        # agents.load passes num_players (and seed, and rules options) if the constructor
        # takes them. Keep everything the bot remembers on self, and clear it in reset().
        self.num_players = num_players

    def reset(self) -> None:
        """A new round starts: forget anything remembered about the last one."""

    def act(self, observation: Mapping[str, Any]) -> int:
        """Return a legal action id for this observation."""
        return self.choose(decode(observation))[0]

    def explain(self, observation: Mapping[str, Any]) -> str:
        """One line for the terminal's --hint: what the bot would do and why."""
        return self.choose(decode(observation))[1]

    # ------------------------------------------------------------------ the policy

    def ideal(self, view: View, slot: int) -> float:
        """The card slot ``slot`` would like best: the middle of its tenth of the deck."""
        return (slot + 0.5) * view.num_cards / 10

    def best_slot(self, view: View, card: int) -> tuple[int, float]:
        """The slot where ``card`` helps most, and how much closer to ideal that slot gets."""
        gains = [
            abs(view.rack[s] - self.ideal(view, s)) - abs(card - self.ideal(view, s))
            for s in range(10)
        ]
        slot = max(range(10), key=lambda s: gains[s])
        return slot, gains[slot]

    def choose(self, view: View) -> tuple[int, str]:
        """The action and a one-line reason; every branch returns a legal action."""
        if view.phase == Phase.DRAW:
            top = view.discard_top
            if top is not None and TAKE_DISCARD in view.legal:
                slot, gain = self.best_slot(view, top)
                if gain > 0:
                    return TAKE_DISCARD, f"take the {{top}}: slot {{slot + 1}} gets closer to ideal"
            return DRAW_PILE, "draw: the discard does not help"
        if view.phase == Phase.KEEP_OR_DISCARD and view.held is not None:
            slot, gain = self.best_slot(view, view.held)
            if gain > 0:
                return KEEP, f"keep the {{view.held}} for slot {{slot + 1}}"
            return DISCARD, f"discard the {{view.held}}: no slot gets closer to ideal"
        if view.phase == Phase.PLACE and view.held is not None:
            slot, _ = self.best_slot(view, view.held)
            return slot, f"put the {{view.held}} into slot {{slot + 1}}"
        if not view.legal:
            raise ValueError("no legal action: the seat is not on turn")
        return view.legal[0], "the first legal action"
'''

FUNCTION_TEMPLATE = '''"""{name}: a Rack-O bot as one function (Kaggle's agent style). Started by
`racko new-bot {name} --function`: make it yours.

Try it (from this folder):
    racko play --bots {name}:act              # play against it in the terminal
    racko grade {name}:act --rubric quick     # a quick grade; drop --rubric quick for the real one
    racko evaluate --bots {name}:act heuristic expert --rounds 200
    python -m pytest test_{name}.py

``act`` is called once per decision. It may also take a second argument, ``configuration``:
a read-only mapping of ``num_players`` and every rules option (``def act(observation,
configuration)``). A function has no reset() and no seed(): what it keeps in this module lives
on from round to round, and random choices are not replayed per deal. A bot that remembers a
round or plays at random is a class: ``racko new-bot NAME`` writes one.

{guide}"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.obs import View, decode
from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase


def act(observation: Mapping[str, Any]) -> int:
    """Starter policy: every slot has an ideal card (slot i of 10 wants a card near the middle
    of the i-th tenth of the deck); take or keep a card when putting it into some slot brings
    that slot closer to its ideal card. Every branch returns a legal action."""
    view = decode(observation)
    if view.phase == Phase.DRAW:
        top = view.discard_top
        if top is not None and TAKE_DISCARD in view.legal and best_slot(view, top)[1] > 0:
            return TAKE_DISCARD
        return DRAW_PILE
    if view.phase == Phase.KEEP_OR_DISCARD and view.held is not None:
        return KEEP if best_slot(view, view.held)[1] > 0 else DISCARD
    if view.phase == Phase.PLACE and view.held is not None:
        return best_slot(view, view.held)[0]
    if not view.legal:
        raise ValueError("no legal action: the seat is not on turn")
    return view.legal[0]


def best_slot(view: View, card: int) -> tuple[int, float]:
    """The slot where ``card`` helps most, and how much closer to ideal that slot gets."""

    def ideal(slot: int) -> float:
        return (slot + 0.5) * view.num_cards / 10

    gains = [abs(view.rack[s] - ideal(s)) - abs(card - ideal(s)) for s in range(10)]
    slot = max(range(10), key=lambda s: gains[s])
    return slot, gains[slot]
'''

TEST_TEMPLATE = '''"""Tests of {name}.py (run: python -m pytest test_{name}.py)."""

from __future__ import annotations

import agents
from racko_env import racko_v1

from {name} import {attr}

SPEC = "{name}:{attr}"  # the bot as racko grade, league and play name it


def play_rounds(rounds: int = 5, num_players: int = 2) -> list[int]:
    """Seat the bot against heuristic for a few seeded rounds; return the actions it chose.

    Fails if the bot ever plays an illegal action or explain() does not give a string.
    """
    chosen = []
    for seed in range(rounds):
        env = racko_v1.env(num_players=num_players)
        env.reset(seed=seed)
        mine = agents.load(SPEC, num_players)
        seats = [mine] + [agents.load("heuristic", num_players) for _ in range(num_players - 1)]
        for bot in seats:
            bot.reset()
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            seat = seats[env.unwrapped.agent_name_mapping[agent]]
            action = seat.act(obs)
            assert obs["action_mask"][action] == 1, f"illegal action {{action}}"
            if seat is mine:
                assert isinstance(seat.explain(obs), str)
                chosen.append(action)
            env.step(action)
    return chosen


def test_plays_only_legal_moves() -> None:
    assert play_rounds()


def test_plays_with_more_players() -> None:
    assert play_rounds(rounds=2, num_players=4)


def test_loads_by_name() -> None:
    {loads_check}
'''

# How each kind of starter bot names itself and how its test checks that it loads as itself.
KINDS = {
    "class": (BOT_TEMPLATE, "Bot", "assert isinstance(agents.load(SPEC, num_players=2), Bot)"),
    "function": (FUNCTION_TEMPLATE, "act", "assert agents.load(SPEC, num_players=2).func is act"),
    "weights": (
        WEIGHTS_TEMPLATE,
        "Bot",
        "assert isinstance(agents.load(SPEC, num_players=2), Bot)",
    ),
}


def check_name(name: str) -> str | None:
    """Why ``name`` cannot be a bot module's name, or None when it can."""
    if not name.isidentifier() or keyword.iskeyword(name):
        return f"{name!r} is not a valid Python module name (letters, digits, _; not a keyword)"
    if name.startswith("test_") or name.startswith("_"):
        return f"{name!r} may not start with 'test_' or '_' (those are tests and private files)"
    if name in sys.stdlib_module_names or importlib.util.find_spec(name) is not None:
        return f"{name!r} is the name of an installed Python module; choose another name"
    return None


def write_bot(name: str, folder: Path, kind: str = "class") -> tuple[Path, Path]:
    """Write the bot of ``kind`` (``KINDS``; ``weights``: a package ``NAME/``) and
    ``test_NAME.py`` into ``folder``; their paths. ValueError if any exists or the name is
    unusable, FileNotFoundError if the folder does not exist."""
    template, attr, loads_check = KINDS[kind]
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(check_name(name))
    if not folder.is_dir():
        raise FileNotFoundError(f"folder {str(folder)!r} does not exist")
    test_path = folder / f"test_{name}.py"
    bot_path = folder / name / "__init__.py" if kind == "weights" else folder / f"{name}.py"
    for path in (folder / f"{name}.py", folder / name, test_path):
        if path.exists():
            raise ValueError(f"{path} already exists; not overwriting it")
    problem = check_name(name)
    if problem:
        raise ValueError(problem)
    fields = {"name": name, "guide": GUIDE, "attr": attr, "loads_check": loads_check}
    if kind == "weights":
        bot_path.parent.mkdir()
        write_bytes_atomic(bot_path.parent / WEIGHTS_FILE, starter_weights())
        fields["weights"] = WEIGHTS_FILE
    for path, text in ((bot_path, template), (test_path, TEST_TEMPLATE)):
        write_text_atomic(path, text.format(**fields))
    return bot_path, test_path


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog="racko new-bot",
        description="Write a starter bot NAME.py (class Bot, or with --function a function act; "
        "a simple legal policy, docstrings on reading the observation) and its test test_NAME.py.",
    )
    parser.add_argument("name", metavar="NAME", help="the bot's module name, e.g. my_bot")
    parser.add_argument("--dir", type=Path, default=Path("."), help="folder (default: here)")
    parser.add_argument(
        "--function",
        action="store_true",
        help="write the bot as one function act(observation) -> int (Kaggle's style), not a class",
    )
    parser.add_argument(
        "--weights",
        action="store_true",
        help="write the bot as a folder NAME/ that plays a small numpy network from its weights "
        "file NAME/weights.npz (save your trained network's weights there)",
    )
    parser.add_argument(
        "--solitaire",
        action="store_true",
        help="write a tabular agent for solitaire (racko_apps.new_bot.solitaire), graded exactly",
    )
    args = parser.parse_args(argv)
    chosen = [flag for flag in ("function", "weights", "solitaire") if getattr(args, flag)]
    if len(chosen) > 1:
        print(
            f"racko new-bot: error: --{chosen[0]} and --{chosen[1]} do not go together",
            file=sys.stderr,
        )
        return 2
    kind = "function" if args.function else "weights" if args.weights else "class"
    try:
        if args.solitaire:
            from racko_apps.new_bot.solitaire import write_solitaire_bot

            if check_name(args.name) or not args.dir.is_dir():
                raise ValueError(
                    check_name(args.name) or f"folder {str(args.dir)!r} does not exist"
                )
            bot_path, test_path = write_solitaire_bot(args.name, args.dir)
        else:
            bot_path, test_path = write_bot(args.name, args.dir, kind)
    except (ValueError, FileNotFoundError) as err:
        print(f"racko new-bot: error: {err}", file=sys.stderr)
        return 2
    wrote = bot_path.parent if kind == "weights" else bot_path
    print(f"wrote {wrote} and {test_path}. From {args.dir.resolve()}, try:")
    spec = f"{args.name}:{KINDS[kind][1]}"
    if not args.solitaire:
        print(f"  racko play --bots {spec}")
    print(f"  racko grade {spec} --rubric {'solitaire' if args.solitaire else 'quick'}")
    print(f"  python -m pytest {test_path.name}")
    return 0
