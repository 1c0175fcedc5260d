"""The quick batched check: duplicate rounds on the batched engine, its format and symmetry."""

from __future__ import annotations

import numpy as np
import pytest

from agents.batched import load_batch
from racko_eval.quick_eval import DealChance, play_duplicate


def test_a_bot_against_its_twin_wins_exactly_half():
    # Duplicate: each deal is played in both seatings, so identical bots split every deal.
    report = play_duplicate(
        [load_batch("expert", 2), load_batch("expert", 2)], ["a", "b"], 2, {}, 40, 3
    )
    assert report["bots"]["a"]["win_rate"] == pytest.approx(0.5)
    assert report["bots"]["a"]["seats"] == report["bots"]["b"]["seats"] == 80  # 40 deals x 2


def test_same_seed_same_report_and_expert_beats_heuristic():
    bots = lambda: [load_batch("expert", 2), load_batch("heuristic", 2)]  # noqa: E731
    a = play_duplicate(bots(), ["expert", "heuristic"], 2, {}, 60, 1, batch_deals=25)
    b = play_duplicate(bots(), ["expert", "heuristic"], 2, {}, 60, 1, batch_deals=60)
    assert a == b  # the chunking does not change the deals
    assert a["bots"]["expert"]["win_rate"] > 0.65
    lo, hi = a["bots"]["expert"]["ci95"]
    assert lo < a["bots"]["expert"]["win_rate"] < hi


@pytest.mark.parametrize(("players", "rules"), [(3, {}), (4, {"partners": True})])
def test_every_seating_and_team_wins_add_up(players, rules):
    bots = [load_batch(name, players) for name in ("expert", "heuristic")]
    report = play_duplicate(bots, ["e", "h"], players, rules, 10, 0)
    seats = sum(r["seats"] for r in report["bots"].values())
    wins = sum(r["wins"] for r in report["bots"].values())
    per_team = 2 if rules.get("partners") else 1
    assert wins == pytest.approx(seats / players * per_team)


def test_deal_chance_gives_every_seating_of_a_deal_the_same_cards():
    chance = DealChance([7, 7, 8])
    decks = chance.deck_orders(np.arange(3), 40)
    assert (decks[0] == decks[1]).all() and not (decks[0] == decks[2]).all()
    assert sorted(decks[2]) == list(range(1, 41))
    orders = chance.refill_orders(np.arange(3), np.array([5, 5, 3]), 6)
    assert (orders[0] == orders[1]).all() and sorted(orders[2][:3]) == [0, 1, 2]
