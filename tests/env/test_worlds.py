"""racko_env.worlds: sampled worlds agree with the seat's observation, and are uniform."""

from __future__ import annotations

import numpy as np
import pytest

from agents.batched import BatchRandom
from racko_env.config import RulesConfig
from racko_env.engine import RackoGame
from racko_env.observation import UNSEEN, encode
from racko_env.vector import Encoder, VectorGame, VectorRacko
from racko_env.worlds import from_game, load_worlds, sample_worlds

CASES = [
    (2, {}),
    (2, {"empty_pile": "flip"}),
    (3, {}),
    (3, {"empty_pile": "flip"}),
    (4, {}),
    (4, {"partners": True}),
    (4, {"partners": True, "empty_pile": "flip"}),
]


def _decisions(num_players: int, rules: dict, games: int, seed: int, episode: str = "round"):
    """Observations (and the true discard piles) of the seats on turn, from random play."""
    rules = {"turn_limit": 150, **rules}  # random play rarely ends a round: cut it off sooner
    vec = VectorRacko(games, num_players, episode=episode, seed=seed, **rules)
    bot = BatchRandom(num_players, seed=seed)
    g_all = np.arange(games)
    live = np.ones(games, dtype=bool)
    while live.any():
        g = g_all[live]
        seat = vec.game.current[g]
        obs = vec.observe(g, seat)
        yield (
            obs,
            [vec.game.discard_pile(int(i)) for i in g],
            [vec.game.draw_pile(int(i)) if vec.game.draw_known[i] else None for i in g],
        )
        res = vec.step(bot.act_batch(obs, vec.action_masks(g, seat)), g)
        live[g[res.done]] = False


def _reencode(worlds, include_scores: bool) -> np.ndarray:
    eng = VectorGame(len(worlds), worlds.config, seed=0)
    load_worlds(eng, worlds)
    return Encoder(eng).observe(
        np.arange(len(worlds)), np.zeros(len(worlds), dtype=np.intp), include_scores
    )


@pytest.mark.parametrize(("num_players", "rules"), CASES)
def test_every_world_reencodes_to_the_observation(num_players: int, rules: dict) -> None:
    rng = np.random.default_rng(1)
    cfg = RulesConfig.from_dict({"num_players": num_players, "turn_limit": 150, **rules})
    flips = 0
    for obs, _, _ in _decisions(num_players, rules, games=4, seed=3):
        worlds = sample_worlds(obs, 3, rng, cfg)
        again = _reencode(worlds, include_scores=False)
        np.testing.assert_array_equal(again, obs[worlds.source])
        flips += int(worlds.draw_known.sum())
        n_cards = {2: 40, 3: 50, 4: 60}[num_players]
        for w in range(0, len(worlds), 7):  # every card of the deck exactly once
            cards = worlds.racks[w].ravel().tolist() + [int(worlds.held[w])]
            cards += worlds.draw[w, : worlds.draw_len[w]].tolist()
            cards += worlds.discard[w, : worlds.discard_len[w]].tolist()
            assert sorted(c for c in cards if c) == list(range(1, n_cards + 1))
    if rules.get("empty_pile") == "flip":
        assert flips > 0  # the public draw order was exercised


def test_game_mode_scores_reencode() -> None:
    rng = np.random.default_rng(2)
    cfg = RulesConfig(num_players=3, turn_limit=150)
    seen = 0
    for obs, _, _ in _decisions(3, {}, games=4, seed=5, episode="game"):
        worlds = sample_worlds(obs, 2, rng, cfg)
        np.testing.assert_array_equal(_reencode(worlds, include_scores=True), obs[worlds.source])
        seen += 1
        if seen > 300:
            break


def test_discard_orders_fix_the_pile_and_seed_reproduces() -> None:
    cfg = RulesConfig(num_players=2, turn_limit=150)
    for i, (obs, piles, _) in enumerate(_decisions(2, {}, games=3, seed=7)):
        a = sample_worlds(obs, 4, 11, cfg, discard_orders=piles)
        b = sample_worlds(obs, 4, 11, cfg, discard_orders=piles)
        for name in ("racks", "draw", "discard"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        for w in range(len(a)):
            assert a.discard[w, : a.discard_len[w]].tolist() == piles[a.source[w]]
        if i > 20:
            break


def test_public_draw_orders_are_kept() -> None:
    cfg = RulesConfig(num_players=2, turn_limit=150, empty_pile="flip")
    checked = 0
    for obs, _, draws in _decisions(2, {"empty_pile": "flip"}, games=3, seed=8):
        worlds = sample_worlds(obs, 3, 5, cfg, draw_orders=draws)
        np.testing.assert_array_equal(_reencode(worlds, include_scores=False), obs[worlds.source])
        for w in range(len(worlds)):
            pile = draws[worlds.source[w]]
            if pile is not None:
                assert worlds.draw[w, : worlds.draw_len[w]].tolist() == pile
                checked += 1
    assert checked > 0


def test_hidden_cards_are_uniform() -> None:
    """Chi-square: the card in an unknown opponent slot and the draw top are uniform over unseen."""
    game = RackoGame(num_players=2)
    game.new_game(seed=4)
    for _ in range(6):
        game.apply(game.legal_actions()[0])  # draws, keeps, places in slot 0
    obs = encode(game, game.current)
    worlds = sample_worlds(obs, 20000, 0, game.config)
    unseen = np.flatnonzero(obs[UNSEEN][:40] > 0.5) + 1
    for values in (worlds.racks[:, 1, 5], worlds.draw[np.arange(len(worlds)), worlds.draw_len - 1]):
        counts = np.array([(values == c).sum() for c in unseen])
        assert counts.sum() == len(worlds)
        expected = len(worlds) / len(unseen)
        chi2 = ((counts - expected) ** 2 / expected).sum()
        assert chi2 < len(unseen) - 1 + 5 * np.sqrt(2 * (len(unseen) - 1))  # ~5 sigma


def test_oracle_world_reencodes_for_every_seat() -> None:
    game = RackoGame(num_players=4, partners=True)
    game.new_game(seed=9)
    for t in range(30):
        game.apply(game.legal_actions()[t % 2])
    eng = VectorGame(1, game.config, seed=0)
    load_worlds(eng, from_game(game))
    enc = Encoder(eng)
    for p in range(4):
        np.testing.assert_array_equal(enc.observe(np.array([0]), np.array([p]))[0], encode(game, p))


def test_bad_observations_are_named() -> None:
    game = RackoGame(num_players=3)
    game.new_game(seed=1)
    off_turn = encode(game, (game.current + 1) % 3)
    with pytest.raises(ValueError, match="not the seat on turn"):
        sample_worlds(off_turn, 2, 0, game.config)
    with pytest.raises(ValueError, match="3-player game"):
        sample_worlds(encode(game, game.current), 2, 0, num_players=2)
    with pytest.raises(ValueError, match="positive int"):
        sample_worlds(encode(game, game.current), 0, 0, game.config)
