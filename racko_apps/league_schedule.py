"""Which pairings a league plays next: rounds of pairings between bots of similar rating.

A round robin of 200 submissions is 19,900 pairings, most of them between bots so far apart that
their result is known in advance (the best student against a bot that forfeits every move). The
simulation leagues of Kaggle rate thousands of agents instead by pairing each with agents of a
similar rating, again and again: a game between near equals is the one that moves the ratings
most. ``plan_round`` does that, one *pairing round* at a time: every bot whose 95% interval is
still wider than the target gets one pairing, with the nearest bot in the current rating order
that it has not met yet (each bot in at most one pairing per round, so a round's pairings can
all be played at once). The league plays a round, updates the ratings, and plans the next,
until every interval is narrow enough, no unplayed pairing can narrow one, or the budget of
rounds is spent.

Deterministic: the same ratings and the same record give the same plan (ties in the rating
order are broken by a hash of the league's seed and the label, not by the labels' alphabet, so
the first round, where all ratings are equal, pairs bots at random but reproducibly).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

Z95 = 1.959964  # the 95% interval of a rating is mu ± Z95 * sigma


@dataclass(frozen=True)
class Rated:
    """A bot's current rating, by its record key."""

    key: str
    label: str
    mu: float
    sigma: float

    @property
    def half_width(self) -> float:
        """Half the width of the 95% interval."""
        return Z95 * self.sigma


def _tiebreak(seed: int, label: str) -> str:
    return hashlib.sha256(f"{seed}:{label}".encode()).hexdigest()


def unsettled(bots: Iterable[Rated], target: float) -> list[Rated]:
    """The bots whose 95% interval is wider than ± ``target``, widest first."""
    wide = [b for b in bots if b.half_width > target]
    return sorted(wide, key=lambda b: (-b.sigma, b.label))


def plan_round(
    bots: Sequence[Rated],
    seekers: Sequence[Rated],
    played: set[frozenset[str]],
    seed: int = 0,
    players: int = 2,
) -> list[tuple[str, ...]]:
    """One pairing round: pairs of keys (each pair in label order), every bot in at most one.
    With ``players`` > 2 a pairing is a table of that many bots (``plan_tables``).

    ``seekers`` (in the order they choose: the widest interval first, ``unsettled``) each get a
    pairing if they can: with the nearest bot of ``bots`` in rating order (mu, best first) that
    they have not met (``played`` holds the pairs already on record, as frozensets of keys) and
    that is free this round. Searching outward from the seeker's place, of two candidates at the
    same distance in rank the closer in mu is taken.
    """
    if players > 2:
        return plan_tables(bots, seekers, played, seed, players)
    order = sorted(bots, key=lambda b: (-b.mu, _tiebreak(seed, b.label)))
    place = {b.key: i for i, b in enumerate(order)}
    busy: set[str] = set()
    pairs: list[tuple[str, ...]] = []
    for bot in seekers:
        if bot.key in busy:
            continue
        i = place[bot.key]
        chosen: Rated | None = None
        for d in range(1, len(order)):
            near = [order[j] for j in (i - d, i + d) if 0 <= j < len(order)]
            free = [
                c for c in near if c.key not in busy and frozenset((bot.key, c.key)) not in played
            ]
            if free:
                chosen = min(free, key=lambda c: (abs(c.mu - bot.mu), c.label))
                break
        if chosen is None:
            continue
        busy |= {bot.key, chosen.key}
        first, second = sorted((bot, chosen), key=lambda b: b.label)
        pairs.append((first.key, second.key))
    return sorted(pairs, key=lambda p: place[p[0]])


def plan_tables(
    bots: Sequence[Rated],
    seekers: Sequence[Rated],
    played: set[frozenset[str]],
    seed: int,
    players: int,
) -> list[tuple[str, ...]]:
    """``plan_round`` for tables of ``players`` bots: each seeker, widest first, sits with the
    ``players - 1`` free bots nearest to it in rating order (by distance in rank, then in mu)
    whose table is not on record yet; each table's keys in label order."""
    order = sorted(bots, key=lambda b: (-b.mu, _tiebreak(seed, b.label)))
    place = {b.key: i for i, b in enumerate(order)}
    busy: set[str] = set()
    tables: list[tuple[str, ...]] = []
    for bot in seekers:
        if bot.key in busy:
            continue
        i = place[bot.key]
        free = [c for c in order if c.key not in busy and c.key != bot.key]
        free.sort(key=lambda c: (abs(place[c.key] - i), abs(c.mu - bot.mu), c.label))
        nearest = free[: players + 3]  # a few more than needed: a table on record is skipped
        for others in itertools.combinations(nearest, players - 1):
            table = (bot, *others)
            if frozenset(b.key for b in table) not in played:
                busy |= {b.key for b in table}
                tables.append(tuple(b.key for b in sorted(table, key=lambda b: b.label)))
                break
    return sorted(tables, key=lambda t: min(place[k] for k in t))


def all_pairs(
    keys_in_label_order: Sequence[str], played: set[frozenset[str]], players: int = 2
) -> list[tuple[str, ...]]:
    """The round robin: every pair (every table of ``players`` bots) not played yet, in label
    order."""
    return [
        table
        for table in itertools.combinations(keys_in_label_order, players)
        if frozenset(table) not in played
    ]


def how_sure(bots: Sequence[Rated], target: float) -> dict[str, float | int]:
    """How sure the ratings are: the widest 95% half-width, how many bots are within the target,
    and how many neighbours in the ranking (by mu) have intervals that do not overlap."""
    order = sorted(bots, key=lambda b: -b.mu)
    apart = sum(
        1
        for hi, lo in zip(order, order[1:], strict=False)
        if hi.mu - hi.half_width > lo.mu + lo.half_width
    )
    return {
        "widest_half_width": round(max((b.half_width for b in bots), default=0.0), 4),
        "within_target": sum(1 for b in bots if b.half_width <= target),
        "neighbours_apart": apart,
        "neighbours": max(0, len(order) - 1),
    }


def rated(ratings: Mapping[str, tuple[str, float, float]]) -> list[Rated]:
    """``Rated`` from ``key -> (label, mu, sigma)``."""
    return [Rated(k, label, mu, sigma) for k, (label, mu, sigma) in ratings.items()]
