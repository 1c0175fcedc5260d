"""Where the batched engine's chance comes from: deals, first dealers and refill shuffles.

Every random event of a batch goes through one ``ChanceSource``, so the differential tests can
feed ``RackoGame`` exactly the same deals and refills. Conventions (``RackoGame``'s):
``deck_orders`` rows are permutations of 1..N, index 0 the top card (as
``RackoGame.new_game(deck_order=row)`` deals it); a ``refill_orders`` row ``perm`` makes the new
draw pile (bottom..top) ``[under[perm[t]] for t in range(m)]`` from the m cards ``under`` the
discard top, as ``rng.shuffle(under)`` does with an ``rng`` that applies ``perm``.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

import numpy as np

from racko_env.rules import deck_size


class ChanceSource(Protocol):
    """The random events of the batched engine, asked for in batches (one row per game)."""

    def first_dealers(self, games: np.ndarray, num_players: int, num_cards: int) -> np.ndarray:
        """First dealer seat per game (int array of len(games)), the deck being 1..num_cards."""
        ...

    def deck_orders(self, games: np.ndarray, num_cards: int) -> np.ndarray:
        """A shuffled deck per game: int array [len(games), num_cards], values 1..num_cards."""
        ...

    def refill_orders(self, games: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
        """Per game a permutation of range(lengths[i]) in the first lengths[i] entries of a row of
        an int array [len(games), width] (the rest of the row is ignored)."""
        ...


class NumpyChance:
    """The default source: one seeded ``numpy.random.Generator`` for the whole batch.

    The first dealer is uniform over the seats, which is what the highest-card draw of the rules
    gives (``RackoGame`` draws the cards; the distribution is the same).
    """

    def __init__(self, seed: int | np.random.SeedSequence | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def first_dealers(self, games: np.ndarray, num_players: int, num_cards: int = 0) -> np.ndarray:
        return self.rng.integers(0, num_players, size=len(games))

    def deck_orders(self, games: np.ndarray, num_cards: int) -> np.ndarray:
        return self.rng.random((len(games), num_cards)).argsort(axis=1) + 1

    def refill_orders(self, games: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
        keys = self.rng.random((len(games), width))
        keys[np.arange(width)[None, :] >= np.asarray(lengths)[:, None]] = 2.0  # padding sorts last
        return keys.argsort(axis=1)

    def get_state(self) -> dict[str, Any]:
        """The generator's state, as JSON-able data (for checkpoints)."""
        return self.rng.bit_generator.state

    def set_state(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state


class GameSeeds:
    """The chance of ``racko_v1``'s ``reset(seed=deal_seed)`` (``RackoGame``'s draws from its
    ``random.Random``), per game: a twin of ``RackoGame.new_game``/``_deal``/
    ``_refill_draw_pile`` and ``racko_v1.raw_env.reset``, so that the batched engine deals exactly
    the games the AEC env deals from the same seed (``tests/env/test_gym_env.py`` holds them
    equal). ``seed(game, deal_seed)`` before dealing that game."""

    def __init__(self, num_games: int) -> None:
        self.rngs = [random.Random() for _ in range(num_games)]

    def seed(self, game: int, deal_seed: int) -> None:
        """As ``raw_env.reset(seed=deal_seed)``: the game's seed is a draw of a seeded ``Random``."""
        self.rngs[game].seed(random.Random(deal_seed).getrandbits(64))

    def first_dealers(self, games: np.ndarray, num_players: int, num_cards: int = 0) -> np.ndarray:
        out = np.empty(len(games), dtype=np.intp)
        cards = num_cards or deck_size(num_players)
        for row, g in enumerate(games.tolist()):
            draw = self.rngs[g].sample(range(1, cards + 1), num_players)
            out[row] = max(range(num_players), key=draw.__getitem__)
        return out

    def deck_orders(self, games: np.ndarray, num_cards: int) -> np.ndarray:
        decks = np.empty((len(games), num_cards), dtype=np.intp)
        for row, g in enumerate(games.tolist()):
            deck = list(range(1, num_cards + 1))
            self.rngs[g].shuffle(deck)
            decks[row] = deck
        return decks

    def refill_orders(self, games: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
        out = np.tile(np.arange(width, dtype=np.intp), (len(games), 1))
        for row, (g, m) in enumerate(
            zip(games.tolist(), np.asarray(lengths).tolist(), strict=True)
        ):
            perm = list(range(m))
            self.rngs[g].shuffle(perm)  # the swaps of shuffle(under): the same permutation
            out[row, :m] = perm
        return out

    def get_state(self) -> list[Any]:
        return [
            [v, list(internal), gauss] for v, internal, gauss in (r.getstate() for r in self.rngs)
        ]

    def set_state(self, state: list[Any]) -> None:
        for rng, (v, internal, gauss) in zip(self.rngs, state, strict=True):
            rng.setstate((v, tuple(internal), gauss))
