"""Known-answer tests of the rules engine from fixed deck orders, one rule of docs/rules.md at a time.

``deck_for`` builds the deck order (index 0 = top card) that deals the racks a test wants; the deal
itself is checked against hand-written racks first, so the helper is not trusted blindly.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from racko_env import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase, RackoGame, TurnRecord
from racko_env.rules import deck_size, hand_score

SLOTS = tuple(range(10))


def deck_for(
    n: int,
    dealer: int,
    racks: dict[int, Sequence[int | None]],
    discard: int | None = None,
    draws: Sequence[int] = (),
) -> list[int]:
    """The deck order that deals ``racks`` (slot 0 first), then the discard, then ``draws`` (top first).

    ``None`` slots and players left out of ``racks`` get the lowest cards not named anywhere.
    """
    n_cards = deck_size(n)
    named = [c for r in racks.values() for c in r if c is not None] + list(draws)
    if discard is not None:
        named.append(discard)
    assert len(named) == len(set(named)), "a card is named twice"
    spare = iter(sorted(set(range(1, n_cards + 1)) - set(named)))
    full = {p: list(racks.get(p, [None] * 10)) for p in range(n)}
    for rack in full.values():
        rack[:] = [next(spare) if c is None else c for c in rack]
    deck = []
    for k in range(10 * n):  # the deal: one card at a time from the dealer's left, back slot first
        deck.append(full[(dealer + 1 + k) % n][9 - k // n])
    deck.append(discard if discard is not None else next(spare))
    deck += list(draws) + list(spare)
    return deck


def scripted(n: int, dealer: int, racks: dict, discard=None, draws=(), **options) -> RackoGame:
    game = RackoGame(num_players=n, **options)
    game.new_game(
        seed=0, first_dealer=dealer, deck_order=deck_for(n, dealer, racks, discard, draws)
    )
    for p, rack in racks.items():
        assert all(want in (None, got) for want, got in zip(rack, game.racks[p], strict=True))
    return game


def play(game: RackoGame, *actions: int) -> None:
    for a in actions:
        game.apply(a)


def draw_and_discard(game: RackoGame, turns: int = 1) -> None:
    for _ in range(turns):
        play(game, DRAW_PILE, DISCARD)


def prefix_rack(k: int, block: int) -> list[int | None]:
    """A rack ascending for exactly k cards, then broken; block b uses cards 21+10b .. 30+10b."""
    base = 21 + 10 * block
    return list(range(base + 1, base + k + 1)) + [base] + [None] * (9 - k)


# ----------------------------------------------------------------- the deal


@pytest.mark.parametrize(
    ("n", "dealer", "deck", "racks", "discard", "draw_top", "first"),
    [
        pytest.param(
            2,
            0,
            list(range(1, 41)),
            [list(range(20, 0, -2)), list(range(19, 0, -2))],
            21,
            22,
            1,
            id="2p-dealer0",
        ),
        pytest.param(
            2,
            1,
            list(range(1, 41)),
            [list(range(19, 0, -2)), list(range(20, 0, -2))],
            21,
            22,
            0,
            id="2p-dealer1",
        ),
        pytest.param(
            2,
            0,
            list(range(40, 0, -1)),
            [list(range(21, 41, 2)), list(range(22, 41, 2))],
            20,
            19,
            1,
            id="2p-reversed-deck",
        ),
        pytest.param(
            3,
            2,
            list(range(1, 51)),
            [list(range(28, 0, -3)), list(range(29, 1, -3)), list(range(30, 2, -3))],
            31,
            32,
            0,
            id="3p-dealer2",
        ),
        pytest.param(
            4,
            1,
            list(range(1, 61)),
            [
                list(range(39, 2, -4)),
                list(range(40, 3, -4)),
                list(range(37, 0, -4)),
                list(range(38, 1, -4)),
            ],
            41,
            42,
            2,
            id="4p-dealer1",
        ),
    ],
)
def test_deal_back_to_front_from_dealers_left(n, dealer, deck, racks, discard, draw_top, first):
    """One card at a time from the dealer's left, ending with the dealer; first card to slot 10."""
    game = RackoGame(num_players=n)
    game.new_game(first_dealer=dealer, deck_order=deck)
    assert game.racks == racks
    assert game.discard == [discard]  # the next card starts the discard pile
    assert game.draw[-1] == draw_top  # top of the draw pile = list end
    assert len(game.draw) == deck_size(n) - 10 * n - 1
    assert game.current == first == (dealer + 1) % n  # left of the dealer moves first
    assert game.phase == Phase.DRAW
    assert game.dealer == dealer and game.round_number == 1
    assert game.held is None and game.log == []
    assert all(s == [0] * 10 for s in game.public_slots)


@pytest.mark.parametrize("n", [2, 3, 4], ids=["2p", "3p", "4p"])
def test_deck_for_helper_round_trips(n: int) -> None:
    racks = {p: prefix_rack(3, p) for p in range(n - 1)}
    game = scripted(n, n - 1, racks, discard=deck_size(n), draws=[19, 18])
    assert game.discard == [deck_size(n)] and game.draw[-2:] == [18, 19]
    assert [c for r in game.racks for c in r].count(None) == 0


@pytest.mark.parametrize("n", [2, 3, 4], ids=["2p", "3p", "4p"])
def test_highest_card_deals_first(n: int) -> None:
    dealers = set()
    for seed in range(40):
        game = RackoGame(num_players=n)
        game.new_game(seed=seed)
        draw = game.dealer_draw
        assert len(draw) == n and len(set(draw)) == n
        assert all(1 <= c <= deck_size(n) for c in draw)
        assert draw[game.dealer] == max(draw)
        assert game.current == (game.dealer + 1) % n
        dealers.add(game.dealer)
        again = RackoGame(num_players=n)
        again.new_game(seed=seed)  # the seeded draw and deal are reproducible
        assert (again.dealer_draw, again.racks, again.discard, again.draw) == (
            draw,
            game.racks,
            game.discard,
            game.draw,
        )
    assert dealers == set(range(n))  # every seat can win the draw


def test_given_first_dealer_skips_the_draw() -> None:
    game = RackoGame(num_players=3)
    game.new_game(seed=1, first_dealer=1)
    assert game.dealer == 1 and game.dealer_draw == [] and game.current == 2


@pytest.mark.parametrize("n", [2, 3, 4], ids=["2p", "3p", "4p"])
def test_deal_passes_left_each_round(n: int) -> None:
    game = RackoGame(num_players=n, turn_limit=1)
    game.new_game(seed=3, first_dealer=n - 1)
    dealers, movers = [], []
    for _ in range(2 * n):
        dealers.append(game.dealer)
        movers.append(game.current)
        draw_and_discard(game)  # turn limit 1: the round ends
        assert game.round_over and not game.game_over
        game.start_round()
    assert dealers == [(n - 1 + r) % n for r in range(2 * n)]
    assert movers == [(d + 1) % n for d in dealers]
    assert game.round_number == 2 * n + 1


def test_start_round_refuses_while_playing_or_after_the_game() -> None:
    game = scripted(
        2, 0, {0: prefix_rack(4, 0), 1: prefix_rack(7, 1)}, turn_limit=1, target_score=5
    )
    with pytest.raises(RuntimeError, match="still being played"):
        game.start_round()
    draw_and_discard(game)
    assert game.game_over and game.game_winner == 1  # 35 against 20, both over 5
    with pytest.raises(RuntimeError, match="game is over"):
        game.start_round()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"first_dealer": 2}, "first_dealer", id="dealer-not-a-seat"),
        pytest.param({"first_dealer": -1}, "first_dealer", id="dealer-negative"),
        pytest.param(
            {"first_dealer": 0, "deck_order": list(range(1, 40))}, "deck_order", id="short"
        ),
        pytest.param({"first_dealer": 0, "deck_order": [1] * 40}, "deck_order", id="repeats"),
        pytest.param(
            {"first_dealer": 0, "deck_order": list(range(2, 42))}, "deck_order", id="card-41"
        ),
    ],
)
def test_new_game_rejects_bad_setup(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RackoGame(num_players=2).new_game(**kwargs)


def test_config_and_options_together_are_refused() -> None:
    from racko_env import RulesConfig

    with pytest.raises(ValueError, match="not both"):
        RackoGame(RulesConfig(), num_players=2)


# ----------------------------------------------------------------- a turn


def sorted_game(n: int = 2) -> RackoGame:
    """Deck 1..N in order, dealer 0: p1 moves first, discard 10n+1, draw pile 10n+2, 10n+3, ..."""
    game = RackoGame(num_players=n)
    game.new_game(first_dealer=0, deck_order=list(range(1, deck_size(n) + 1)))
    return game


def test_draw_pile_then_discard_ends_the_turn() -> None:
    game = sorted_game()
    racks = [list(r) for r in game.racks]
    game.apply(DRAW_PILE)
    assert game.held == 22 and not game.held_from_discard
    assert game.phase == Phase.KEEP_OR_DISCARD and game.legal_actions() == (KEEP, DISCARD)
    assert len(game.draw) == 18 and game.discard == [21] and game.current == 1
    game.apply(DISCARD)
    assert game.discard == [21, 22] and game.held is None
    assert game.racks == racks  # the rack is untouched
    assert game.log == [TurnRecord(player=1, source=DRAW_PILE, taken=0, slot=None, discarded=22)]
    assert (game.current, game.phase, game.turn) == (0, Phase.DRAW, 1)


def test_draw_pile_keep_replaces_a_slot() -> None:
    game = sorted_game()
    play(game, DRAW_PILE, KEEP)
    assert game.phase == Phase.PLACE and game.legal_actions() == SLOTS and game.held == 22
    game.apply(3)
    assert game.racks[1] == [19, 17, 15, 22, 11, 9, 7, 5, 3, 1]
    assert game.discard == [21, 13]  # the replaced card goes face up on the discard pile
    assert game.public_slots[1] == [0] * 10  # a draw-pile card stays private
    assert game.log[-1] == TurnRecord(1, DRAW_PILE, 0, 3, 13)
    assert (game.current, game.phase) == (0, Phase.DRAW)


def test_taken_discard_must_go_into_the_rack() -> None:
    game = sorted_game()
    game.apply(TAKE_DISCARD)
    assert game.held == 21 and game.held_from_discard
    assert game.discard == [] and game.discard_top == 0
    assert game.phase == Phase.PLACE and game.legal_actions() == SLOTS
    for not_allowed in (KEEP, DISCARD, DRAW_PILE, TAKE_DISCARD):
        with pytest.raises(ValueError, match="legal actions are"):
            game.apply(not_allowed)
    game.apply(0)
    assert game.racks[1][0] == 21 and game.discard == [19]
    assert game.public_slots[1] == [21] + [0] * 9  # everyone saw where it went
    assert game.log[-1] == TurnRecord(1, TAKE_DISCARD, 21, 0, 19)


def test_a_known_slot_is_forgotten_when_replaced_by_a_private_card() -> None:
    game = sorted_game()
    play(game, TAKE_DISCARD, 0)  # p1: 21 into slot 0 (public)
    draw_and_discard(game)  # p0
    play(game, DRAW_PILE, KEEP, 0)  # p1 replaces 21 with a private card
    assert game.public_slots[1] == [0] * 10 and game.discard[-1] == 21


@pytest.mark.parametrize(
    ("actions", "bad", "match"),
    [
        pytest.param(
            (), KEEP, r"illegal action 12 \(keep\).*legal actions are \[10, 11\]", id="keep-first"
        ),
        pytest.param((), 4, r"illegal action 4 \(slot_4\).*\[10, 11\]", id="slot-first"),
        pytest.param(
            (DRAW_PILE,),
            0,
            r"illegal action 0.*legal actions are \[12, 13\]",
            id="slot-before-keep",
        ),
        pytest.param((DRAW_PILE,), DRAW_PILE, r"illegal action 10.*\[12, 13\]", id="draw-twice"),
        pytest.param(
            (DRAW_PILE, KEEP), DISCARD, r"illegal action 13.*\[0, 1, 2", id="discard-after-keep"
        ),
        pytest.param((), 14, r"illegal action 14 \(not an action id\)", id="out-of-range"),
        pytest.param((), -1, r"illegal action -1", id="negative"),
        pytest.param((), 10.5, r"integer action id", id="float"),
        pytest.param((), "10", r"integer action id", id="string"),
    ],
)
def test_illegal_actions_raise_naming_action_and_legal_ones(actions, bad, match) -> None:
    game = sorted_game()
    play(game, *actions)
    before = (game.phase, game.held, list(game.discard), list(game.draw))
    with pytest.raises(ValueError, match=match):
        game.apply(bad)
    assert (game.phase, game.held, list(game.discard), list(game.draw)) == before


def test_numpy_integer_actions_are_accepted() -> None:
    np = pytest.importorskip("numpy")
    game = sorted_game()
    game.apply(np.int64(DRAW_PILE))
    game.apply(np.int8(KEEP))
    game.apply(np.int32(9))
    assert game.racks[1][9] == 22


# ----------------------------------------------------------------- going Rack-O

EVENS = [2, 4, 6, 8, 10, 12, 14, 16, 18]


def test_racko_via_the_discard_ends_the_round_at_the_end_of_the_turn() -> None:
    game = scripted(2, 0, {1: EVENS + [1], 0: prefix_rack(3, 0)}, discard=40)
    game.apply(TAKE_DISCARD)
    assert not game.round_over  # not yet: the turn is not over
    game.apply(9)
    assert game.racks[1] == EVENS + [40]
    assert game.round_over and game.racko_player == 1 and not game.truncated
    assert game.phase == Phase.ROUND_OVER and game.legal_actions() == ()
    assert game.last_round_points == [15, 75]
    assert game.totals == [15, 75] and game.scores == [15, 75]
    with pytest.raises(ValueError, match="round is over"):
        game.apply(DRAW_PILE)


def test_racko_via_a_kept_draw_pile_card() -> None:
    game = scripted(2, 0, {1: EVENS + [1], 0: prefix_rack(9, 0)}, draws=[39])
    play(game, DRAW_PILE, KEEP)
    assert not game.round_over
    game.apply(9)
    assert game.racko_player == 1 and game.last_round_points == [45, 75]


def test_racko_checked_only_for_the_mover_at_the_end_of_its_turn() -> None:
    """A rack dealt in order is Rack-O when its owner's first turn ends, not before."""
    ascending = list(range(21, 31))
    game = scripted(2, 0, {0: ascending, 1: prefix_rack(2, 1)})
    draw_and_discard(game)  # p1 moves first: p0's ascending rack does not end the round
    assert not game.round_over and game.current == 0
    draw_and_discard(game)  # p0's turn ends with an ascending rack: Rack-O
    assert game.round_over and game.racko_player == 0
    assert game.last_round_points == [75, 10]


def test_placing_a_card_that_breaks_the_order_is_no_racko() -> None:
    game = scripted(2, 0, {1: EVENS + [1]}, discard=40)
    play(game, TAKE_DISCARD, 8)  # 40 into slot 9's neighbour: 2..16, 40, 1
    assert not game.round_over and game.current == 0


@pytest.mark.parametrize(
    ("min_run", "rack", "racko"),
    [
        pytest.param(0, EVENS + [1], True, id="off-no-run-needed"),
        pytest.param(3, EVENS + [1], False, id="run3-no-run-no-racko"),
        pytest.param(3, [2, 4, 6, 7, 8, 12, 14, 16, 18, 1], True, id="run3-with-6-7-8"),
        pytest.param(3, [2, 4, 6, 7, 10, 12, 14, 16, 18, 1], False, id="run3-only-run-of-2"),
        pytest.param(4, [2, 4, 6, 7, 8, 12, 14, 16, 18, 1], False, id="run4-run-of-3"),
        pytest.param(
            3, [2, 4, 6, 8, 10, 12, 14, 38, 39, 1], True, id="run3-completed-by-placed-card"
        ),
    ],
)
def test_two_player_run_variant(min_run: int, rack: list[int], racko: bool) -> None:
    game = scripted(2, 0, {1: rack}, discard=40, min_run=min_run)
    play(game, TAKE_DISCARD, 9)  # the top discard, 40, goes into the back slot
    assert game.racks[1] == rack[:9] + [40]
    assert game.round_over is racko
    assert (game.racko_player == 1) is racko
    if not racko:  # an ascending rack without the run does not end the round
        assert game.current == 0 and game.phase == Phase.DRAW


# ----------------------------------------------------------------- the draw pile runs out


@pytest.mark.parametrize("n", [2, 3, 4], ids=["2p", "3p", "4p"])
def test_empty_draw_pile_flip_turns_the_discards_over(n: int) -> None:
    game = RackoGame(num_players=n, empty_pile="flip", turn_limit=1000)
    game.new_game(first_dealer=0, deck_order=list(range(1, deck_size(n) + 1)))
    first_discard, top = 10 * n + 1, deck_size(n)  # the pile reads 10n+1 (bottom) .. N (top)
    draw_and_discard(game, 18)
    assert len(game.draw) == 1 and game.reshuffles == 0 and not game.draw_known
    draw_and_discard(game)  # the last draw-pile card: the pile is refilled as the turn ends
    assert game.reshuffles == 1 and game.draw_known
    assert game.discard == [top]  # the top discard stays
    # Turned over: the bottom discard is now the top of the draw pile, the order exactly reversed.
    assert game.draw[::-1] == list(range(first_discard, top))
    drawn = []
    for _ in range(3):
        game.apply(DRAW_PILE)
        drawn.append(game.held)
        game.apply(DISCARD)
    assert drawn == [first_discard, first_discard + 1, first_discard + 2]


@pytest.mark.parametrize("n", [2, 3, 4], ids=["2p", "3p", "4p"])
def test_empty_draw_pile_shuffle(n: int) -> None:
    def run(seed: int) -> RackoGame:
        game = RackoGame(num_players=n, empty_pile="shuffle", turn_limit=1000)
        game.new_game(seed=seed, first_dealer=0, deck_order=list(range(1, deck_size(n) + 1)))
        draw_and_discard(game, 19)
        return game

    game = run(7)
    top = deck_size(n)
    assert game.reshuffles == 1 and not game.draw_known
    assert game.discard == [top]
    assert sorted(game.draw) == list(range(10 * n + 1, top))
    assert game.draw[::-1] != list(range(10 * n + 1, top))  # shuffled, not flipped
    assert run(7).draw == game.draw  # the seed fixes the shuffle
    assert len({tuple(run(s).draw) for s in range(5)}) > 1


def test_refill_across_both_draw_sources_keeps_every_card() -> None:
    game = RackoGame(num_players=2, empty_pile="flip", turn_limit=1000)
    game.new_game(first_dealer=0, deck_order=list(range(1, 41)))
    for _ in range(30):  # 30 draws from a 19-card pile, the discard taken in between
        play(game, TAKE_DISCARD, 5)
        draw_and_discard(game)
    assert game.reshuffles == 1 and not game.round_over
    assert sorted([c for r in game.racks for c in r] + game.draw + game.discard) == list(
        range(1, 41)
    )


# ----------------------------------------------------------------- turn limit and round scoring


@pytest.mark.parametrize(("limit", "turns"), [(1, 1), (3, 3), (5, 5)], ids=["1", "3", "5"])
def test_turn_limit_truncates_and_scores_ascending_prefixes(limit: int, turns: int) -> None:
    racks = {0: prefix_rack(4, 0), 1: prefix_rack(7, 1)}
    game = scripted(2, 0, racks, turn_limit=limit)
    draw_and_discard(game, turns - 1)
    assert not game.round_over
    draw_and_discard(game)
    assert game.round_over and game.truncated and game.racko_player is None
    assert game.turn == limit and game.phase == Phase.ROUND_OVER
    assert game.last_round_points == [20, 35] == [hand_score(r, False) for r in game.racks]
    assert game.totals == [20, 35]


def test_racko_on_the_last_allowed_turn_is_not_truncated() -> None:
    game = scripted(2, 0, {1: EVENS + [1]}, discard=40, turn_limit=1)
    play(game, TAKE_DISCARD, 9)
    assert game.round_over and not game.truncated and game.racko_player == 1


def test_ascending_rack_without_the_run_scores_its_prefix_when_truncated() -> None:
    game = scripted(2, 0, {1: EVENS + [1]}, discard=40, turn_limit=1, min_run=3)
    play(game, TAKE_DISCARD, 9)
    assert game.truncated and game.racko_player is None
    assert game.last_round_points[1] == 50


# ----------------------------------------------------------------- the game


def racko_round(game: RackoGame, others: int | dict[int, int] = 1, bonus_rack=None) -> int:
    """Deal the next round (round 1 with dealer 0 on a fresh game); the mover takes the top discard
    (the highest card) into slot 10 and goes Rack-O; the others ascend ``others`` cards."""
    n = game.num_players
    first = not game.round_over
    dealer = 0 if first else (game.dealer + 1) % n
    mover = (dealer + 1) % n
    prefixes = others if isinstance(others, dict) else {p: others for p in range(n) if p != mover}
    racks = {mover: list(bonus_rack or EVENS + [1])}
    for block, (p, k) in enumerate(prefixes.items()):
        racks[p] = prefix_rack(k, block)
    deck = deck_for(n, dealer, racks, discard=game.num_cards)
    if first:
        game.new_game(first_dealer=dealer, deck_order=deck)
    else:
        game.start_round(deck_order=deck)
    assert game.current == mover
    play(game, TAKE_DISCARD, 9)
    assert game.round_over and game.racko_player == mover
    return mover


def fresh(n: int, **options) -> RackoGame:
    return RackoGame(num_players=n, **options)


def test_round_scoring_and_totals_three_players() -> None:
    game = fresh(3)
    racko_round(game, others={0: 4, 2: 7})  # dealer 0: p1 moves first and goes Rack-O
    assert game.last_round_points == [20, 75, 35] and game.totals == [20, 75, 35]
    assert game.last_round_points == [hand_score(r, p == 1) for p, r in enumerate(game.racks)]
    racko_round(game, others={0: 9, 1: 1})  # the deal passed left: p2 goes Rack-O
    assert game.last_round_points == [45, 5, 75]
    assert game.totals == [65, 80, 110] and not game.game_over


@pytest.mark.parametrize(
    ("n", "target", "rounds", "winner", "totals"),
    [
        pytest.param(2, 100, 3, 1, [85, 155], id="2p-to-100"),
        pytest.param(2, 500, 13, 1, [485, 555], id="2p-to-500"),
        pytest.param(3, 500, 16, 1, [430, 500, 430], id="3p-to-500-exactly"),
        pytest.param(4, 150, 5, 1, [95, 165, 95, 95], id="4p-to-150"),
    ],
)
def test_game_is_played_to_the_target(n, target, rounds, winner, totals) -> None:
    """The mover goes Rack-O every round (75), the others score 5; the deal passes left."""
    game = fresh(n, target_score=target)
    for r in range(1, rounds + 1):
        assert not game.game_over
        racko_round(game)
        assert game.round_number == r
        if r < rounds:
            assert game.phase == Phase.ROUND_OVER and game.game_winner is None
    assert game.game_over and game.phase == Phase.GAME_OVER
    assert game.game_winner == winner
    assert game.totals == totals
    assert max(game.totals) >= target and game.totals[winner] == max(game.totals)


@pytest.mark.parametrize(
    ("second_round_p1", "over", "winner", "totals"),
    [
        pytest.param(9, False, None, [120, 120], id="equal-highest-plays-on"),
        pytest.param(8, True, 0, [120, 115], id="both-over-highest-wins"),
    ],
)
def test_tie_rule(second_round_p1: int, over: bool, winner, totals) -> None:
    game = fresh(2, target_score=100)
    racko_round(game, others=9)  # p1 Rack-O 75, p0 45
    racko_round(game, others=second_round_p1)  # p0 Rack-O: 120; p1 75 + 5k
    assert game.totals == totals and min(game.totals) >= 100
    assert game.game_over is over and game.game_winner == winner
    if not over:
        assert game.phase == Phase.ROUND_OVER
        racko_round(game, others=1)  # p1 Rack-O: 195 against 125
        assert game.game_over and game.game_winner == 1 and game.totals == [125, 195]


def test_tie_of_three_at_the_top_plays_on_until_one_leads() -> None:
    game = fresh(3, target_score=80)
    racko_round(game, others={0: 1, 2: 1})  # p1 75, p0 5, p2 5
    racko_round(game, others={0: 1, 1: 1})  # p2 75 + 5 = 80; p1 80, p0 10: tie at 80
    assert game.totals == [10, 80, 80] and not game.game_over
    racko_round(game, others={1: 2, 2: 2})  # p0 Rack-O 85; p1 90, p2 90 still tied
    assert game.totals == [85, 90, 90] and not game.game_over
    racko_round(game, others={0: 1, 2: 2})  # p1 Rack-O
    assert game.game_over and game.game_winner == 1


# ----------------------------------------------------------------- Bonus Rack-O and Partners


@pytest.mark.parametrize(
    ("rack", "bonus", "points"),
    [
        pytest.param(EVENS + [1], True, 75, id="no-run"),
        pytest.param([1, 2, 3, 10, 12, 14, 16, 18, 20, 5], True, 125, id="run3"),
        pytest.param([1, 2, 3, 4, 12, 14, 16, 18, 20, 5], True, 175, id="run4"),
        pytest.param([1, 2, 3, 4, 5, 14, 16, 18, 20, 6], True, 275, id="run5"),
        pytest.param([1, 2, 3, 4, 5, 6, 16, 18, 20, 7], True, 475, id="run6"),
        pytest.param([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], True, 475, id="run9-placed-40"),
        pytest.param([1, 2, 3, 10, 11, 12, 13, 18, 19, 5], True, 175, id="longest-only"),
        pytest.param([1, 2, 3, 4, 5, 6, 16, 18, 20, 7], False, 75, id="option-off"),
    ],
)
def test_bonus_racko(rack: list[int], bonus: bool, points: int) -> None:
    game = fresh(2, bonus=bonus)
    mover = racko_round(game, others=2, bonus_rack=rack)
    assert game.last_round_points[mover] == points
    assert game.last_round_points[1 - mover] == 10  # the others score plain prefixes


def test_partners_add_team_scores_and_the_team_wins() -> None:
    game = fresh(4, partners=True, target_score=100)
    mover = racko_round(game, others={0: 2, 2: 1, 3: 6})  # p1 goes Rack-O
    assert mover == 1
    assert game.last_round_points == [10, 75, 5, 30]
    assert game.totals == [15, 105]  # team 0 = seats 0 + 2, team 1 = seats 1 + 3
    assert game.scores == [15, 105, 15, 105]
    assert game.round_team_points == [15, 105, 15, 105]
    assert game.game_over and game.game_winner == 1  # a team index


def test_partners_play_on_below_the_target() -> None:
    game = fresh(4, partners=True)
    racko_round(game, others={0: 2, 2: 1, 3: 6})
    assert game.totals == [15, 105] and not game.game_over
    racko_round(game, others={0: 3, 1: 1, 3: 1})  # p2 goes Rack-O
    assert game.totals == [15 + 15 + 75, 105 + 5 + 5]


def test_partners_bonus_counts_the_racko_players_runs_only() -> None:
    game = fresh(4, partners=True, bonus=True)
    rack = [1, 2, 3, 4, 12, 14, 16, 18, 19, 5]  # p1's run of 4: +100
    racko_round(game, others={0: 1, 2: 1, 3: 6}, bonus_rack=rack)
    # p3's own run of 6 (prefix_rack counts up) does not count: p3 did not go Rack-O.
    assert game.racks[3][:6] == [42, 43, 44, 45, 46, 47]
    assert game.last_round_points == [5, 175, 5, 30]
    assert game.totals == [10, 205]


# ----------------------------------------------------------------- determinism and clones


def random_playout(seed: int, n: int, steps: int = 400, **options) -> RackoGame:
    game = RackoGame(num_players=n, **options)
    game.new_game(seed=seed)
    chooser = random.Random(seed)
    for _ in range(steps):
        if game.round_over:
            break
        game.apply(chooser.choice(game.legal_actions()))
    return game


@pytest.mark.parametrize("n", [2, 3, 4], ids=["2p", "3p", "4p"])
def test_same_seed_same_game(n: int) -> None:
    a, b = random_playout(11, n), random_playout(11, n)
    assert a.log == b.log and a.racks == b.racks and a.draw == b.draw
    c = random_playout(12, n)
    assert (c.log, c.racks) != (a.log, a.racks)


def test_clone_is_independent_and_continues_identically() -> None:
    game = random_playout(5, 3, steps=50, turn_limit=1000)
    twin = game.clone()
    chooser = random.Random(1)
    actions = []
    while not game.round_over and len(actions) < 500:
        actions.append(chooser.choice(game.legal_actions()))
        game.apply(actions[-1])
    assert twin.turn < game.turn
    for a in actions:
        twin.apply(a)
    assert twin.log == game.log and twin.racks == game.racks and twin.draw == game.draw
