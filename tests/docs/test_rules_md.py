"""The worked examples of docs/rules.md are what the code computes.

Each example table in the page follows a ``<!-- checked: NAME -->`` marker; this test parses the
tables from the page itself (so editing a number in the doc is checked too) and recomputes every
number with ``racko_env.rules``, the engine (``RackoGame``) and the env's ``win_rewards``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from racko_env.actions import TAKE_DISCARD
from racko_env.config import RulesConfig
from racko_env.engine import RackoGame
from racko_env.racko_v1 import win_rewards
from racko_env.rules import deck_size, hand_score

RULES_MD = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
EXAMPLES = ("scored-racks", "game-tie", "partners", "reward-ties")


def checked_table(name: str) -> list[list[str]]:
    """The body rows (cells stripped) of the Markdown table right after ``<!-- checked: name -->``."""
    lines = RULES_MD.read_text(encoding="utf-8").splitlines()
    marker = f"<!-- checked: {name} -->"
    starts = [i for i, line in enumerate(lines) if line.strip() == marker]
    assert len(starts) == 1, f"docs/rules.md must have exactly one {marker!r}"
    rows = []
    for line in lines[starts[0] + 1 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    assert len(rows) > 2, f"no table after {marker!r}"
    assert set(rows[1][0]) <= set("-:"), f"the line after the header of {name!r} is no separator"
    return rows[2:]


def page_text() -> str:
    """The page with every run of whitespace as one space (so reflowing lines changes nothing)."""
    return " ".join(RULES_MD.read_text(encoding="utf-8").split())


def cards(text: str) -> list[int]:
    return [int(c) for c in text.split()]


def yes(text: str) -> bool:
    assert text in ("yes", "no"), f"expected yes or no, got {text!r}"
    return text == "yes"


def deck_dealing(racks: list[list[int]], discard: int) -> list[int]:
    """The deck order (top first) that deals ``racks`` with the last seat dealing, then ``discard``.

    With the dealer in the last seat, the k-th card dealt goes to seat ``k % n`` into slot index
    ``9 - k // n`` (the first card a player gets goes to the back), as the rules page says.
    """
    n = len(racks)
    dealt = [racks[k % n][9 - k // n] for k in range(10 * n)] + [discard]
    rest = sorted(set(range(1, deck_size(n) + 1)) - set(dealt))
    assert len(dealt) == len(set(dealt)), "a card is named twice"
    return dealt + rest


def test_every_example_is_marked() -> None:
    text = RULES_MD.read_text(encoding="utf-8")
    for name in EXAMPLES:
        assert f"<!-- checked: {name} -->" in text


def test_the_rules_page_is_the_one_cited() -> None:
    """No file of the repository points at the old out-of-repository rules spec (Python,
    Markdown, YAML, TOML and the web game's JavaScript alike)."""
    root = RULES_MD.parent.parent
    old = re.compile(r"(\.\./)?shared/RULES\.md")
    offenders = [
        str(path.relative_to(root))
        for pattern in ("*.md", "*.py", "*.yaml", "*.toml", "*.js")
        for path in root.rglob(pattern)
        if not {".git", ".venv", "runs", "node_modules", "build", "dist"} & set(path.parts)
        and path.name != Path(__file__).name
        and old.search(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert offenders == []


@pytest.mark.parametrize("row", checked_table("scored-racks"), ids=lambda r: r[0])
def test_scored_rack(row: list[str]) -> None:
    rack, went_racko, bonus, points = cards(row[0]), yes(row[1]), yes(row[2]), int(row[3])
    assert len(rack) == 10
    assert hand_score(rack, went_racko, bonus) == points


def test_game_tie_example() -> None:
    rows = checked_table("game-tie")
    assert [int(r[0]) for r in rows] == [0, 1]
    final = [cards(r[1]) for r in rows]
    racko_seat = [yes(r[2]) for r in rows].index(True)
    before = [int(r[3]) for r in rows]
    # The page: the Rack-O player "takes the 39 from the discard pile into slot 10". Deal its rack
    # with the lowest unused card in slot 10 and the 39 on the discard pile.
    slot = 9
    assert "takes the 39 from the discard pile into slot 10" in page_text()
    dealt = [list(r) for r in final]
    discard = dealt[racko_seat][slot]
    assert discard == 39
    dealt[racko_seat][slot] = min(set(range(1, 41)) - set(sum(final, [])))
    game = RackoGame(num_players=2)
    game.new_game(seed=0, first_dealer=1, deck_order=deck_dealing(dealt, discard))
    game.totals = before  # the game so far
    assert game.current == racko_seat
    game.apply(TAKE_DISCARD)
    game.apply(slot)
    assert game.round_over and game.racko_player == racko_seat
    assert [list(r) for r in game.racks] == final
    assert game.last_round_points == [int(r[4]) for r in rows]
    assert game.totals == [int(r[5]) for r in rows]
    assert min(game.totals) >= game.config.target_score
    assert not game.game_over  # equal highest totals: another round
    game.start_round()
    assert game.round_number == 2


def test_partners_example() -> None:
    rows = checked_table("partners")
    racks = [cards(r[2]) for r in rows]
    game = RackoGame(num_players=4, partners=True, bonus=True)
    game.new_game(seed=0, first_dealer=3, deck_order=deck_dealing(racks, discard=31))
    assert [list(r) for r in game.racks] == racks and game.discard_top == 31
    assert game.current == 0
    game.apply(TAKE_DISCARD)
    game.apply(6)  # slot 7, replacing the 55
    assert game.racko_player == 0 and game.discard_top == 55
    assert game.racks[0] == [3, 9, 14, 15, 16, 29, 31, 37, 44, 58]
    assert game.last_round_points == [int(r[3]) for r in rows]
    assert [game.config.team_of(p) for p in range(4)] == [int(r[1]) for r in rows]
    assert game.totals == [140, 50]  # the team totals the page states
    text = page_text()
    assert "125 + 15 = **140**" in text and "20 + 30 = **50**" in text
    plain = RackoGame(num_players=4, partners=True)
    plain.new_game(seed=0, first_dealer=3, deck_order=deck_dealing(racks, discard=31))
    plain.apply(TAKE_DISCARD)
    plain.apply(6)
    assert plain.totals[0] == 90  # "without Bonus Rack-O team 0 would score 90"


@pytest.mark.parametrize("row", checked_table("reward-ties"), ids=lambda r: r[1])
def test_reward_ties(row: list[str]) -> None:
    n, points, rewards = int(row[0]), cards(row[1]), [float(x) for x in row[2].split()]
    assert len(points) == len(rewards) == n
    RulesConfig(num_players=n)
    best = max(points)
    winners = {p for p in range(n) if points[p] == best}
    got = win_rewards(list(range(n)), winners)
    assert got == pytest.approx(rewards, abs=1e-6)
    assert sum(got) == pytest.approx(0.0, abs=1e-9)


def test_score_reward_example_agrees_in_docstring_docs_and_code() -> None:
    """``help(racko_v1)`` states the score reward, the environment's page renders that docstring,
    and it is what play gives."""
    from racko_env import racko_v1

    phrase = "a rack ascending for its first 3 slots (15 points) is +0.2"
    aec_md = (RULES_MD.parent / "environment" / "aec.md").read_text(encoding="utf-8")
    assert phrase in " ".join((racko_v1.__doc__ or "").split())
    assert "```{module-docstring} racko_env.racko_v1" in aec_md
    # The rack of the example: three ascending cards, then a break.
    assert hand_score([4, 9, 15, 2, 30, 31, 32, 33, 34, 35], went_racko=False) / 75 == 0.2
