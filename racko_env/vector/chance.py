"""Where the batched engine's chance comes from: deals, first dealers and refill shuffles.

Every random event of a batch goes through one ``ChanceSource`` so that it can be recorded and
replayed. The differential tests use this to feed the reference engine (``RackoGame``) exactly the
same deals and the same shuffles of the refilled draw pile (see ``docs/vector.md``).

Conventions (the same as ``RackoGame``):

- ``deck_orders``: one row per game, a permutation of the cards 1..N, index 0 = the top card (the
  first one dealt); ``RackoGame.new_game(deck_order=row)`` / ``start_round(deck_order=row)`` deal it
  identically.
- ``refill_orders``: for a game whose discard pile (bottom..top, without its top card) is
  ``under`` with m cards, row ``perm`` makes the new draw pile (bottom..top) ``[under[perm[t]] for t
  in range(m)]``. ``RackoGame`` does ``rng.shuffle(under)``: an ``rng`` whose ``shuffle`` applies
  ``perm`` reproduces it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class ChanceSource(Protocol):
    """The random events of the batched engine, asked for in batches (one row per game)."""

    def first_dealers(self, games: np.ndarray, num_players: int) -> np.ndarray:
        """First dealer seat per game (int array of len(games))."""
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

    def first_dealers(self, games: np.ndarray, num_players: int) -> np.ndarray:
        return self.rng.integers(0, num_players, size=len(games))

    def deck_orders(self, games: np.ndarray, num_cards: int) -> np.ndarray:
        return self.rng.random((len(games), num_cards)).argsort(axis=1) + 1

    def refill_orders(self, games: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
        keys = self.rng.random((len(games), width))
        keys[np.arange(width)[None, :] >= np.asarray(lengths)[:, None]] = 2.0  # padding sorts last
        return keys.argsort(axis=1)
