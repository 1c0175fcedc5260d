"""agents.search: legal moves, its budget, a seed, and a forced Rack-O found with an oracle world."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.batched import BatchExpert, load_batch
from agents.search import SearchBot, _candidates, _pick, parse_options
from racko_env.actions import DRAW_PILE, TAKE_DISCARD
from racko_env.engine import RackoGame
from racko_env.observation import action_mask, encode
from racko_env.vector import VectorRacko
from racko_env.worlds import from_game

FAST = "search:worlds=2,depth=1,chunk=2"


@pytest.mark.parametrize(("num_players", "rules"), [(2, {}), (3, {}), (4, {"partners": True})])
def test_plays_only_legal_moves(num_players: int, rules: dict) -> None:
    bot = agents.load(FAST, num_players, seed=0, **rules)
    other = BatchExpert(num_players)
    vec = VectorRacko(2, num_players, seed=1, turn_limit=24, **rules)
    live = np.ones(2, dtype=bool)
    while live.any():
        g = np.flatnonzero(live)
        seat = vec.game.current[g]
        obs, masks = vec.observe(g, seat), vec.action_masks(g, seat)
        mine = seat == 0
        actions = other.act_batch(obs, masks)
        if mine.any():
            actions[mine] = bot.act_batch(obs[mine], masks[mine])
            assert masks[np.flatnonzero(mine), actions[mine]].all()
        live[g[vec.step(actions, g).done]] = False  # an illegal move raises here


def test_loads_by_name_with_options_and_names_bad_ones() -> None:
    bot = agents.load("search:blueprint=heuristic,worlds=3,depth=2,ms=20", 2, seed=0)
    assert isinstance(bot, SearchBot) and bot.worlds == 3 and bot.depth == 2 and bot.ms == 20
    assert isinstance(agents.load("search", 3), SearchBot)
    assert load_batch("search:worlds=2", 2) is not None
    for spec, message in [
        ("search:worlds=many", "worlds='many' must be an int"),
        ("search:speed=3", "unknown search option 'speed'"),
        ("search:worlds", "must look like name=value"),
        ("search:worlds=0", "worlds must be an int >= 1"),
        ("search:phases=think", "phases must join"),
        ("search:blueprint=search", "cannot be the search bot"),
    ]:
        with pytest.raises(ValueError, match=message):
            agents.load(spec, 2)
    assert parse_options("worlds=4, ms=2.5") == {"worlds": 4, "ms": 2.5}


def _decisions(n: int = 6) -> list[tuple[np.ndarray, np.ndarray]]:
    game = RackoGame(num_players=2)
    game.new_game(seed=3)
    out = []
    while len(out) < n:
        out.append((encode(game, game.current), action_mask(game, game.current)))
        game.apply(game.legal_actions()[len(out) % 2])
    return out


def test_a_seed_reproduces_the_choices_and_estimates() -> None:
    obs, masks = map(np.stack, zip(*_decisions(), strict=True))
    runs = []
    for _ in range(2):
        bot = SearchBot(2, seed=7, worlds=4, depth=2)
        runs.append(bot.search(obs, masks.astype(bool)))
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)
    other = SearchBot(2, seed=8, worlds=4, depth=2).search(obs, masks.astype(bool))
    assert not np.array_equal(other[2], runs[0][2])  # another seed samples other worlds


def test_stops_on_its_time_budget() -> None:
    """With ms=100 it stops after the chunk of worlds that spends the budget, not after the
    100,000 worlds asked for (how long that took is the machine's business, not asserted)."""
    obs, mask = _decisions(1)[0]
    seat = {"observation": obs, "action_mask": mask}
    bot = SearchBot(2, seed=0, worlds=100_000, chunk=4, depth=1, ms=100)
    action = bot.act(seat)
    assert mask[action]
    assert 4 <= bot.last_worlds < 100_000  # it stopped on time, after at least one chunk


def test_oracle_world_finds_a_forced_racko() -> None:
    """Seat 0 needs one card above 30 in its back slot; the draw pile's top is 35, the discard
    25 does not finish the rack, and seat 1 goes Rack-O with 35 (or the 30 seat 0 gives up) next.
    With the true world as its only world the search sees that only drawing wins."""
    game = RackoGame(num_players=2)
    game.new_game(seed=0, first_dealer=1)
    mine = [2, 4, 6, 8, 10, 12, 14, 16, 30, 1]
    theirs = [3, 5, 7, 9, 11, 13, 15, 17, 19, 18]
    rest = sorted(set(range(1, 41)) - set(mine) - set(theirs) - {25, 35})
    game.racks = [mine, theirs]
    game.discard = [rest.pop(), 25]
    game.draw = rest + [35]  # the top is the list's end
    assert game.current == 0
    bot = SearchBot(2, seed=0, worlds=1)
    cand, _ = _candidates(action_mask(game, 0)[None, :].astype(bool))
    value = np.where(cand >= 0, bot._play(from_game(game), cand, 1).mean(axis=2), -np.inf)
    values = dict(zip(cand[0].tolist(), value[0].tolist(), strict=True))
    assert values == {DRAW_PILE: 1.0, TAKE_DISCARD: 0.0}
    for blueprint_choice in (DRAW_PILE, TAKE_DISCARD):
        gain = value - value[cand == blueprint_choice]
        assert _pick(cand, gain, np.array([blueprint_choice]))[0] == DRAW_PILE
    # From the observation alone (sampled worlds) it cannot know the draw pile's top.
    assert bot.act({"observation": encode(game, 0), "action_mask": action_mask(game, 0)}) in (
        DRAW_PILE,
        TAKE_DISCARD,
    )


def test_leaf_value_fit_says_a_lower_plan_cost_wins_more() -> None:
    from agents.search import fit_leaf_value

    scale, turn = fit_leaf_value(2, games=40, seed=1)
    assert 0.5 <= scale <= 4.0 and 0.0 <= turn <= 1.5


def test_search_with_options_is_a_builtin_everywhere_not_a_students_class() -> None:
    """The league, the grader and the training configs read ``search:...`` as the search bot."""
    from racko_apps.referee.match import is_python_spec
    from train.common.config import check_bot_spec

    assert not is_python_spec("search:worlds=8,depth=1")
    assert is_python_spec("my_bot:Bot")
    assert check_bot_spec("search:worlds=8") == "search:worlds=8"
    with pytest.raises(ValueError, match="unknown search option 'bogus'"):
        check_bot_spec("search:bogus=1")


def test_endgame_searches_only_racks_near_racko() -> None:
    """endgame=c: rows whose own plan cost is above c get the blueprint's move, no world played."""
    from agents.batched import expert_plan_costs
    from racko_env.observation import RACK

    vec = VectorRacko(6, 2, seed=4)
    obs = vec.observe(np.arange(6), vec.game.current).astype(np.float32)
    masks = vec.action_masks(np.arange(6), vec.game.current)
    far = SearchBot(2, seed=0, worlds=2, depth=1, endgame=1e-6)
    assert (far.act_batch(obs, masks) == BatchExpert(2).act_batch(obs, masks)).all()
    assert far.last_worlds == 0 and far.stats["changed"].sum() == 0
    near = obs.copy()
    near[:, RACK] = np.arange(4, 41, 4) / 40.0  # ascending: plan cost 0 <= any endgame
    assert (expert_plan_costs(near, 40) == 0).all()
    bot = SearchBot(2, seed=0, worlds=2, depth=1, endgame=1e-6)
    bot.act_batch(near, masks)
    assert bot.last_worlds == 2
    with pytest.raises(ValueError, match="endgame"):
        SearchBot(2, endgame=-1.0)


# ----------------------------------------------------------------- every size the rules allow

SMALL = [
    (1, {"rack_size": 3, "deck_size": 8}),
    (1, {"rack_size": 5, "deck_size": 14, "empty_pile": "flip"}),
    (1, {}),
    (2, {"rack_size": 4, "deck_size": 12}),
    (2, {"deck_size": 30}),
    (3, {"rack_size": 5, "deck_size": 20, "empty_pile": "flip"}),
    (4, {"rack_size": 4, "deck_size": 18, "partners": True}),
]


@pytest.mark.parametrize(("num_players", "rules"), SMALL)
def test_plays_only_legal_moves_at_every_size(num_players: int, rules: dict) -> None:
    """Racks of 3-10, small decks and solitaire, with a leaf value (depth=1) and without."""
    for spec in (FAST, "search:worlds=2,chunk=2"):
        bot = agents.load(spec, num_players, seed=0, **rules)
        other = BatchExpert(num_players, **rules)
        vec = VectorRacko(2, num_players, seed=1, turn_limit=24, **rules)
        live = np.ones(2, dtype=bool)
        while live.any():
            g = np.flatnonzero(live)
            seat = vec.game.current[g]
            obs, masks = vec.observe(g, seat), vec.action_masks(g, seat)
            mine = seat == 0
            actions = other.act_batch(obs, masks)
            if mine.any():
                actions[mine] = bot.act_batch(obs[mine], masks[mine])
                assert masks[np.flatnonzero(mine), actions[mine]].all()
            live[g[vec.step(actions, g).done]] = False  # an illegal move raises here
        assert bot.stats["decisions"].sum() > 0


def _expert_turns(game: RackoGame, action: int) -> int:
    """The turns a solitaire round still takes after ``action`` with ``expert`` playing on (the
    per-game bot, on the reference engine): what the search's value of ``action`` must be."""
    expert = agents.load("expert", 1, rack_size=game.rack_size, deck_size=game.num_cards)
    game = game.clone()
    start = game.turn
    game.apply(action)
    while not game.round_over:
        seat = {"observation": encode(game, 0), "action_mask": action_mask(game, 0)}
        game.apply(expert.act(seat))
    assert game.reshuffles == 0  # the search refills with its own shuffles: none here
    return game.turn - start


@pytest.mark.parametrize("seed", range(4))
def test_solitaire_values_are_minus_the_turns_still_to_play(seed: int) -> None:
    """In solitaire a candidate's value in a world is minus the turns the round still takes when
    the blueprint plays on: checked against the reference engine in the one true world."""
    game = RackoGame(num_players=1, rack_size=4, deck_size=30)
    game.new_game(seed=seed)
    bot = SearchBot(1, seed=0, worlds=1, rack_size=4, deck_size=30)
    for _ in range(3):  # a draw decision, then keep-or-discard or place
        mask = action_mask(game, 0)
        cand, _ = _candidates(mask[None, :].astype(bool))
        value = bot._play(from_game(game), cand, 1)[0, :, 0]
        for a, v in zip(cand[0].tolist(), value.tolist(), strict=True):
            if a >= 0:
                assert v == -_expert_turns(game, a)
        game.apply(int(np.flatnonzero(mask)[0]))
        if game.round_over:
            break


def test_solitaire_explains_in_turns_and_ranks_by_them() -> None:
    game = RackoGame(num_players=1, rack_size=5, deck_size=14)
    game.new_game(seed=3)
    seat = {"observation": encode(game, 0), "action_mask": action_mask(game, 0)}
    bot = SearchBot(1, seed=0, worlds=8, rack_size=5, deck_size=14)
    text = bot.explain(seat)
    assert "estimated turns to Rack-O: " in text and "%" not in text
    actions, cand, value = bot.search(seat["observation"][None], seat["action_mask"][None] > 0)
    assert (value[cand >= 0] < 0).all()  # minus the turns: every round takes at least one more


def test_plan_costs_are_the_experts_at_the_rule_books_sizes_and_zero_when_ascending() -> None:
    """The search's leaf reads ``expert``'s plan cost: the batched expert's own at the rule
    book's sizes, and 0 for an ascending rack at small ones."""
    from agents.batched import expert_plan_costs

    vec = VectorRacko(6, 3, seed=2)
    obs = vec.observe(np.arange(6), vec.game.current)
    assert (SearchBot(3).plan_costs(obs) == expert_plan_costs(obs, 50)).all()
    small = VectorRacko(4, 2, seed=2, rack_size=4, deck_size=12)
    obs = small.observe(np.arange(4), small.game.current)
    bot = SearchBot(2, rack_size=4, deck_size=12)
    lay = bot.layout
    assert np.isfinite(bot.plan_costs(obs)).all()
    obs[:, lay.RACK] = np.array([2, 5, 8, 11]) / 12.0
    assert (bot.plan_costs(obs) == 0).all()
