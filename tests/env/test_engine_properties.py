"""Property tests (hypothesis): invariants of the engine and the env over random seeds and options.

Random legal play from a seeded chooser drives every test, so a failing example replays exactly.
"""

from __future__ import annotations

import copy
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from racko_env import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase, RackoGame, racko_v1
from racko_env.actions import LEGAL_BY_PHASE, NUM_ACTIONS
from racko_env.config import EMPTY_PILE_MODES
from racko_env.observation import HELD, encode
from racko_env.rules import deck_size, hand_score, is_racko

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Each step of this one tries all 14 actions on copies of the env: fewer, shorter examples.
COPY_SETTINGS = settings(SETTINGS, max_examples=30)
SEEDS = st.integers(0, 2**32 - 1)


@st.composite
def rules_options(draw, max_turns: int = 300) -> dict:
    """Any valid combination of rules options for 2-4 players."""
    n = draw(st.integers(2, 4))
    options = {
        "num_players": n,
        "empty_pile": draw(st.sampled_from(EMPTY_PILE_MODES)),
        "turn_limit": draw(st.integers(1, max_turns)),
        "bonus": draw(st.booleans()),
    }
    if n == 4:
        options["partners"] = draw(st.booleans())
    if n == 2:
        options["min_run"] = draw(st.sampled_from([0, 3]))
    return options


def sorter_action(game: RackoGame) -> int:
    """A simple player that goes Rack-O often: slot s wants a card from the s-th tenth of the deck."""
    rack = game.racks[game.current]

    def slot_for(card: int) -> int:
        return (card - 1) * 10 // game.num_cards

    def wanted(card: int) -> bool:
        return slot_for(rack[slot_for(card)]) != slot_for(card)

    if game.phase == Phase.DRAW:
        top = game.discard_top
        return TAKE_DISCARD if top and wanted(top) else DRAW_PILE
    if game.phase == Phase.KEEP_OR_DISCARD:
        return KEEP if wanted(game.held) else DISCARD
    return slot_for(game.held)


def check_cards(game: RackoGame) -> None:
    """Every card of the deck is in exactly one place; racks hold 10 cards."""
    n_cards = deck_size(game.num_players)
    held = [] if game.held is None else [game.held]
    everywhere = [c for r in game.racks for c in r] + game.draw + game.discard + held
    counts = Counter(everywhere)
    assert sorted(counts) == list(range(1, n_cards + 1))
    assert set(counts.values()) == {1}, (
        f"duplicated cards: {[c for c, k in counts.items() if k > 1]}"
    )
    assert all(len(r) == 10 for r in game.racks)
    holding = game.phase in (Phase.KEEP_OR_DISCARD, Phase.PLACE)
    assert (game.held is not None) is holding


def check_round_scores(game: RackoGame, totals_before: list[int]) -> None:
    """Round points follow from the final racks; totals add them up per team."""
    cfg = game.config
    racko = game.racko_player
    if racko is None:
        assert game.truncated and game.turn == cfg.turn_limit
    else:
        assert not game.truncated and is_racko(game.racks[racko], cfg.min_run)
        assert game.log[-1].player == racko  # it ended at the end of the Rack-O player's turn
    expected = [hand_score(r, p == racko, cfg.bonus) for p, r in enumerate(game.racks)]
    assert game.last_round_points == expected
    totals = list(totals_before)
    for p, pts in enumerate(expected):
        totals[cfg.team_of(p)] += pts
    assert game.totals == totals


@SETTINGS
@given(
    options=rules_options(),
    seed=SEEDS,
    target=st.integers(40, 500),
    sorter=st.floats(0.0, 1.0),
)
def test_cards_conserved_and_rounds_end_and_score_consistently(
    options, seed, target, sorter
) -> None:
    """Play mixes random moves with ``sorter_action`` (probability ``sorter``) to reach Rack-O."""
    game = RackoGame(target_score=target, **options)
    game.new_game(seed=seed)
    chooser = random.Random(seed)
    for _ in range(3):  # up to three rounds of a game
        check_cards(game)
        totals_before = list(game.totals)
        for _ in range(3 * options["turn_limit"] + 1):  # at most three decisions a turn
            if game.round_over:
                break
            if chooser.random() < sorter:
                game.apply(sorter_action(game))
            else:
                game.apply(chooser.choice(game.legal_actions()))
            check_cards(game)
        assert game.round_over, "the round did not end within the turn limit"
        event("rack-o" if game.racko_player is not None else "truncated")
        event(f"draw pile refilled: {game.reshuffles > 0}")
        check_round_scores(game, totals_before)
        if game.game_over:
            event("game over")
            assert max(game.totals) >= target
            assert game.totals.count(max(game.totals)) == 1
            assert game.totals[game.game_winner] == max(game.totals)
            break
        game.start_round()


def swap(values: list[int], i: int, other: list[int], j: int) -> None:
    values[i], other[j] = other[j], values[i]


@pytest.mark.slow
@SETTINGS
@given(options=rules_options(max_turns=120), seed=SEEDS, game_mode=st.booleans())
def test_observations_hold_no_private_information_of_others(options, seed, game_mode) -> None:
    """Changing what an observer may not know (others' hidden cards, a privately held card, the
    order of a face-down draw pile) leaves that observer's observation unchanged."""
    game = RackoGame(**options)
    game.new_game(seed=seed)
    chooser = random.Random(seed)
    n = game.num_players
    while not game.round_over:
        observer = chooser.randrange(n)
        seen = encode(game, observer, game_mode)
        hidden_draw = game.draw[:-1] if game.draw_known else game.draw  # the known top stays
        for q in range(n):
            if q == observer:
                continue
            hidden = [s for s in range(10) if game.public_slots[q][s] == 0]
            if hidden and hidden_draw:
                what_if = game.clone()
                slot, k = chooser.choice(hidden), chooser.randrange(len(hidden_draw))
                swap(what_if.racks[q], slot, what_if.draw, k)
                assert np.array_equal(encode(what_if, observer, game_mode), seen)
                # control: the owner of that rack does see the change
                assert not np.array_equal(encode(what_if, q, game_mode), encode(game, q, game_mode))
        mover = game.current
        if game.held is not None and not game.held_from_discard and mover != observer:
            if hidden_draw:  # the card the mover drew from the draw pile is private to the mover
                what_if = game.clone()
                k = chooser.randrange(len(hidden_draw))
                what_if.held, what_if.draw[k] = what_if.draw[k], what_if.held
                assert np.array_equal(encode(what_if, observer, game_mode), seen)
                assert (
                    encode(what_if, mover, game_mode)[HELD] != encode(game, mover, game_mode)[HELD]
                )
        if len(hidden_draw) > 1:
            what_if = game.clone()
            order = list(hidden_draw)
            chooser.shuffle(order)
            what_if.draw[: len(order)] = order
            assert np.array_equal(encode(what_if, observer, game_mode), seen)
        if game.held is not None:
            assert encode(game, mover, game_mode)[HELD] == pytest.approx(game.held / game.num_cards)
        game.apply(chooser.choice(game.legal_actions()))


# 14 deep copies of the env a step; test_racko_v1's mask and illegal-action tests are quick
@pytest.mark.slow
@COPY_SETTINGS
@given(options=rules_options(max_turns=12), seed=SEEDS, episode=st.sampled_from(["round", "game"]))
def test_raw_env_accepts_exactly_the_masked_actions(options, seed, episode) -> None:
    env = racko_v1.raw_env(episode=episode, target_score=25, **options)
    env.reset(seed=seed)
    chooser = random.Random(seed)
    for agent in env.agent_iter(2000):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        mask = obs["action_mask"]
        legal = [a for a in range(NUM_ACTIONS) if mask[a]]
        assert tuple(legal) == LEGAL_BY_PHASE[env.unwrapped.game.phase] and legal
        for other in env.agents:  # agents not on turn may do nothing
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        for action in range(NUM_ACTIONS):  # each one tried on a copy of the env
            if mask[action]:
                copy.deepcopy(env).step(action)  # accepted: no error
            else:
                with pytest.raises(ValueError, match=f"illegal action {action}"):
                    copy.deepcopy(env).step(action)
        env.step(chooser.choice(legal))
    assert not env.agents or all(env.terminations[a] or env.truncations[a] for a in env.agents)


def play_and_check_spaces(env, seed: int) -> int:
    env.reset(seed=seed)
    chooser = random.Random(seed)
    checked = 0
    for _agent in env.agent_iter(5000):
        obs, _, terminated, truncated, _ = env.last()
        for a in env.agents:
            o = env.observe(a)
            space = env.observation_space(a)
            assert o["observation"].dtype == np.float32 and o["action_mask"].dtype == np.int8
            assert space.contains(o), (
                f"{a}: values outside the Box at "
                f"{np.flatnonzero((o['observation'] < 0) | (o['observation'] > 1)).tolist()}"
            )
            checked += 1
        if terminated or truncated:
            env.step(None)
        else:
            env.step(chooser.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    return checked


@pytest.mark.slow
@SETTINGS
@given(options=rules_options(max_turns=150), seed=SEEDS)
def test_round_observations_inside_the_box(options, seed) -> None:
    env = racko_v1.raw_env(episode="round", **options)
    assert play_and_check_spaces(env, seed) > 0


@pytest.mark.parametrize("n", [2, 3, 4], ids=["2p", "3p", "4p"])
def test_game_observations_inside_the_box(n: int) -> None:
    """A short game ends with a total above the target (32: no total of 5s can equal it)."""
    env = racko_v1.raw_env(num_players=n, episode="game", target_score=32, turn_limit=10)
    assert play_and_check_spaces(env, seed=1) > 0
