"""Which pairings a league plays next: rounds of pairings between bots of similar rating.

A round robin of 200 submissions is 19,900 pairings, most between bots so far apart that the
result is known in advance. As Kaggle's simulation leagues do, ``plan_round`` pairs each bot whose
95% interval is still wider than the target with the nearest bot in rating order that it has not
met, each bot in at most one pairing per round so that a round plays at once. The league plans
the next round when the last one's pairings have all gone to workers, from the ratings so far,
among the bots not playing then (racko_apps.league.rounds). Ties in the rating order are broken by a hash of
the league's seed and the label, so the same ratings and record give the same plan.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Sequence
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
    playing: Iterable[str] = (),
) -> list[tuple[str, ...]]:
    """One pairing round: tables of ``players`` keys (each in label order), every bot in at most
    one, and none of those ``playing`` now (keys). Each of ``seekers`` (widest interval first)
    sits with the free bots nearest to it in rating order (by distance in rank, then in mu) with
    whom its table is not in ``played``."""
    order = sorted(bots, key=lambda b: (-b.mu, _tiebreak(seed, b.label)))
    place = {b.key: i for i, b in enumerate(order)}
    busy: set[str] = set(playing)
    tables: list[tuple[str, ...]] = []
    for bot in seekers:
        if bot.key in busy:
            continue
        i = place[bot.key]
        free = [c for c in order if c.key not in busy and c.key != bot.key]
        free.sort(key=lambda c: (abs(place[c.key] - i), abs(c.mu - bot.mu), c.label))
        if players > 2:
            free = free[: players + 3]  # a few more than needed: a table on record is skipped
        for others in itertools.combinations(free, players - 1):
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
