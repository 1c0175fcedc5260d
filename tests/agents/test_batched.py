"""The batched bots (agents/batched.py): each decides like its one-game twin, inputs are
checked, specs load."""

from __future__ import annotations

import numpy as np
import pytest
from reference_expert import reference_decision  # the plain-Python planner
from test_vec_env import random_actions  # a uniformly random legal action per row

from agents.batched import (
    BatchExpert,
    BatchHeuristic,
    BatchRandom,
    BotBatch,
    check_batch,
    load_batch,
)
from agents.expert import ExpertBot
from agents.heuristic import HeuristicBot
from agents.obs import decode
from racko_env.vector import VectorRacko


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [2, pytest.param(3, marks=pytest.mark.slow), 4])
def test_batch_heuristic_decides_like_the_heuristic_bot(num_players: int) -> None:
    v = VectorRacko(48, num_players, seed=num_players, turn_limit=120, empty_pile="flip")
    assert_batch_decides_like(BatchHeuristic(), HeuristicBot(num_players), v, 250, 0.5, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize(
    "num_players,options",
    [
        pytest.param(2, {}, marks=pytest.mark.slow),  # the quick subset: 2 players with flip
        (2, {"empty_pile": "flip"}),
        pytest.param(3, {}, marks=pytest.mark.slow),  # and 4 with partners
        (4, {"partners": True}),
    ],
)
def test_batch_expert_decides_like_the_expert_bot(num_players: int, options: dict) -> None:
    v = VectorRacko(40, num_players, seed=num_players, turn_limit=100, **options)
    batch = BatchExpert(num_players)
    assert_batch_decides_like(batch, ReferenceExpert(), v, 60, 0.6, seed=2)


class ReferenceExpert:
    """The tests' plain-Python planner as a bot (what the compiled planner must equal)."""

    def act(self, observation: dict) -> int:
        return reference_decision(decode(observation))[0]


@pytest.mark.parametrize("num_players", [2, 3])
def test_the_expert_bot_plays_and_explains_as_the_reference(num_players: int) -> None:
    """One decision at a time through the compiled planner: the reference's move and words."""
    v = VectorRacko(8, num_players, seed=11, turn_limit=60)
    bot, rng, checked = ExpertBot(num_players), np.random.default_rng(3), 0
    games = np.arange(v.num_games)
    for _ in range(40):
        cur = v.game.current
        obs, masks = v.observe(games, cur), v.action_masks(games, cur)
        for o, m in zip(obs, masks, strict=True):
            seat = {"observation": o, "action_mask": m.astype(np.int8)}
            assert (bot.act(seat), bot.explain(seat)) == reference_decision(decode(seat))
            checked += 1
        r = v.step(random_actions(masks, rng))
        if r.done.any():
            v.reset(np.flatnonzero(r.done))
    assert checked == 320


def test_batch_random_is_legal_uniform_and_seeded() -> None:
    masks = np.zeros((4000, 14), dtype=bool)
    masks[:, [10, 11]] = True
    masks[:2000, :] = False
    masks[:2000, :10] = True
    obs = np.zeros((4000, 177), np.float32)
    a = BatchRandom(seed=4).act_batch(obs, masks)
    assert masks[np.arange(4000), a].all()
    assert np.array_equal(a, BatchRandom(seed=4).act_batch(obs, masks))
    counts = np.bincount(a[:2000], minlength=10)
    assert counts.min() > 140  # about 200 each
    assert 900 < (a[2000:] == 10).sum() < 1100


def test_batch_inputs_are_checked() -> None:
    with pytest.raises(ValueError, match="all-False"):
        check_batch(np.zeros((2, 177), np.float32), np.zeros((2, 14), bool))
    with pytest.raises(ValueError, match="shape"):
        BatchRandom().act_batch(np.zeros((2, 170), np.float32), np.ones((2, 14), bool))
    with pytest.raises(TypeError, match="act"):
        BotBatch(object())


def test_load_batch_specs() -> None:
    assert isinstance(load_batch("random", 3, seed=1), BatchRandom)
    assert isinstance(load_batch("heuristic", 2), BatchHeuristic)
    assert isinstance(load_batch("expert", 4, partners=True), BatchExpert)
    expert = load_batch("agents.expert:ExpertBot", 2)
    assert isinstance(expert, BotBatch)
    custom = BatchHeuristic()
    assert load_batch(custom) is custom
    with pytest.raises(ValueError, match="unknown bot"):
        load_batch("nobody")
    with pytest.raises(ValueError, match="partners"):
        load_batch("random", 2, partners=True)
    v = VectorRacko(8, 2, seed=0)
    g = np.arange(8)
    obs, masks = v.observe(g, v.game.current), v.action_masks(g, v.game.current)
    assert masks[g, expert.act_batch(obs, masks)].all()


def assert_batch_decides_like(batch, single, v: VectorRacko, steps: int, own: float, seed: int):
    """Over ``steps`` decisions of every game, the batched bot picks what the per-game bot picks
    (the games advance with the bot's move with probability ``own``, else a random legal one)."""
    rng = np.random.default_rng(seed)
    games = np.arange(v.num_games)
    seen_phases = set()
    for _ in range(steps):
        cur = v.game.current
        obs, masks = v.observe(games, cur), v.action_masks(games, cur)
        got = batch.act_batch(obs, masks)
        want = [
            single.act({"observation": o, "action_mask": m.astype(np.int8)})
            for o, m in zip(obs, masks, strict=True)
        ]
        assert got.tolist() == want
        seen_phases |= set(v.game.phase.tolist())
        r = v.step(np.where(rng.random(len(games)) < own, got, random_actions(masks, rng)))
        if r.done.any():
            v.reset(np.flatnonzero(r.done))
    assert seen_phases == {0, 1, 2}


def test_expert_plan_costs_are_zero_for_an_ascending_rack_only() -> None:
    from agents.batched import expert_plan_costs
    from racko_env.observation import RACK

    vec = VectorRacko(8, 2, seed=3)
    obs = vec.observe(np.arange(8), vec.game.current).astype(np.float32)
    cost = expert_plan_costs(obs, 40)
    assert cost.shape == (8,) and (cost > 0).all()  # dealt racks are not ascending
    obs[:, RACK] = np.arange(4, 41, 4) / 40.0  # 4, 8, ..., 40: already Rack-O
    assert (expert_plan_costs(obs, 40) == 0).all()


def test_one_reading_of_the_observation_for_a_batch_and_for_one_seat() -> None:
    """agents.obs.cards (what the batched bots and the planner read) gives, row by row, the cards
    decode gives one seat, for 2, 3 and 4 players in one batch."""
    from agents.obs import cards

    rows, masks = [], []
    for n in (2, 3, 4):
        v = VectorRacko(6, n, seed=n, turn_limit=80)
        rng = np.random.default_rng(n)
        for _ in range(7):
            games, cur = np.arange(v.num_games), v.game.current
            rows.append(v.observe(games, cur))
            masks.append(v.action_masks(games, cur))
            r = v.step(random_actions(masks[-1], rng))
            if r.done.any():
                v.reset(np.flatnonzero(r.done))
    obs, mask = np.concatenate(rows), np.concatenate(masks)
    got = cards(obs)
    for i in range(len(obs)):
        view = decode({"observation": obs[i], "action_mask": mask[i].astype(np.int8)})
        assert (got.players[i], got.num_cards[i]) == (view.num_players, view.num_cards)
        assert tuple(got.rack[i]) == view.rack
        assert (got.held[i] or None, got.discard_top[i] or None) == (view.held, view.discard_top)
        assert got.phase[i] == (-1 if view.phase is None else int(view.phase))
        flat = [c for opp in view.opponents for c in opp]
        assert list(got.opp_slots[i][: len(flat)]) == flat
