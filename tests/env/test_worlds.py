"""racko_env.worlds: sampled worlds agree with the seat's observation, and are uniform."""

from __future__ import annotations

import numpy as np
import pytest

from agents.batched import BatchRandom
from racko_env.config import RulesConfig
from racko_env.engine import RackoGame
from racko_env.observation import UNSEEN, encode, layout_for
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
    bot = BatchRandom(num_players, seed=seed, **rules)
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


# ----------------------------------------------------------------- every size the rules allow


def _sizes() -> list[tuple[int, dict]]:
    """A game of each rack size 3..10 for 1-4 players, with a seeded legal deck (the smallest
    deck of some) and either empty-pile rule."""
    import random

    rng = random.Random(41)
    cases = []
    for k in range(3, 11):
        for players in (1, 2, 3, 4):
            smallest = players * k + 2
            if smallest > 60:
                continue
            deck = (
                smallest
                if (k + players) % 3 == 0
                else rng.randint(smallest, min(60, smallest + 12))
            )
            rules = {
                "rack_size": k,
                "deck_size": deck,
                "empty_pile": rng.choice(["shuffle", "flip"]),
            }
            if players == 4 and k % 2:
                rules["partners"] = True
            cases.append((players, rules))
    return cases


SIZES = _sizes()


def _size_id(case: tuple[int, dict]) -> str:
    players, rules = case
    return f"{players}p-k{rules['rack_size']}-n{rules['deck_size']}-{rules['empty_pile']}"


@pytest.mark.parametrize("case", SIZES, ids=[_size_id(c) for c in SIZES])
def test_worlds_of_every_size_agree_with_every_public_fact(case: tuple[int, dict]) -> None:
    """At every size: each world re-encodes to exactly the observation (so it agrees with every
    public fact the seat has), holds every card of the deck once, keeps the seat's own rack and
    every slot it saw, and deals the unknown slots and the draw pile only unseen cards; the
    rules read from keyword options alone are the same."""
    num_players, rules = case
    cfg = RulesConfig.from_dict({"num_players": num_players, "turn_limit": 60, **rules})
    lay = layout_for(cfg)
    rng = np.random.default_rng(3)
    decisions = 0
    for obs, piles, draws in _decisions(num_players, {**rules, "turn_limit": 60}, games=2, seed=5):
        worlds = sample_worlds(obs, 2, rng, cfg, discard_orders=piles, draw_orders=draws)
        np.testing.assert_array_equal(_reencode(worlds, include_scores=False), obs[worlds.source])
        n, k = cfg.num_cards, cfg.rack_size
        for w in range(len(worlds)):
            seen = obs[worlds.source[w]]
            cards = worlds.racks[w].ravel().tolist() + [int(worlds.held[w])]
            cards += worlds.draw[w, : worlds.draw_len[w]].tolist()
            cards += worlds.discard[w, : worlds.discard_len[w]].tolist()
            assert sorted(c for c in cards if c) == list(range(1, n + 1))
            assert worlds.racks[w, 0].tolist() == np.rint(seen[lay.RACK] * n).astype(int).tolist()
            unseen = set((np.flatnonzero(seen[lay.UNSEEN][:n] > 0.5) + 1).tolist())
            hidden = worlds.public_slots[w, 1:] == 0
            dealt = (
                worlds.racks[w, 1:][hidden].tolist() + worlds.draw[w, : worlds.draw_len[w]].tolist()
            )
            assert sorted(dealt) == sorted(unseen)
            assert worlds.discard[w, : worlds.discard_len[w]].tolist() == piles[worlds.source[w]]
            assert worlds.racks.shape[1:] == (num_players, k)
        decisions += len(obs)
        if decisions > 120:
            break
    again = sample_worlds(obs, 1, 0, num_players=num_players, **{**rules, "turn_limit": 60})
    assert again.config == cfg


def test_solitaire_worlds_differ_only_in_the_piles_orders() -> None:
    """Solitaire has no hidden rack: every world holds the seat's rack; the draw pile's order
    is all that is dealt, uniformly (chi-square on its top card)."""
    game = RackoGame(num_players=1, rack_size=4, deck_size=12)
    game.new_game(seed=2)
    obs = encode(game, 0)
    worlds = sample_worlds(obs, 6000, 0, game.config)
    assert (worlds.racks[:, 0] == game.racks[0]).all() and worlds.racks.shape[1] == 1
    pile = sorted(game.draw)
    tops = worlds.draw[np.arange(len(worlds)), worlds.draw_len - 1]
    counts = np.array([(tops == c).sum() for c in pile])
    assert (
        counts.sum() == len(worlds) and (np.sort(worlds.draw[:, : len(pile)], axis=1) == pile).all()
    )
    expected = len(worlds) / len(pile)
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < len(pile) - 1 + 5 * np.sqrt(2 * (len(pile) - 1))  # ~5 sigma


def test_an_observation_of_another_size_is_named() -> None:
    game = RackoGame(num_players=2, rack_size=4, deck_size=12)
    game.new_game(seed=1)
    obs = encode(game, game.current)
    with pytest.raises(ValueError, match=r"obs must have shape .* for Layout\(rack_size=5"):
        sample_worlds(obs, 1, 0, RulesConfig(num_players=2, rack_size=5, deck_size=14))
    with pytest.raises(ValueError, match=r"obs must have shape .* for Layout\(rack_size=5"):
        sample_worlds(obs, 1, 0, num_players=2, rack_size=5, deck_size=14)
    with pytest.raises(ValueError, match="rules option 'rack_size' must be between 3 and 10"):
        sample_worlds(obs, 1, 0, rack_size=2)
