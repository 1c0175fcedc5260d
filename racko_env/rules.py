"""Scoring and rack predicates of Rack-O, as pure functions.

These are the rule-book formulas (``docs/rules.md``) with nothing about game flow, so that tests,
bots, front ends and the batched engine can all check a rack the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

RACK_SIZE = 10  # the rule book's rack; ``RulesConfig.rack_size`` plays smaller ones
MIN_RACK_SIZE = 3
MIN_PLAYERS = 2  # the multi-player game; ``RulesConfig`` also takes 1 (solitaire)
SOLITAIRE = 1
MAX_PLAYERS = 4
CARD_POINTS = 5
RACKO_BONUS = 25
TARGET_SCORE = 500

# Bonus Rack-O: points for the longest run of consecutive numbers in adjacent slots.
RUN_BONUS = {3: 50, 4: 100, 5: 200, 6: 400}

_DECK_SIZES = {SOLITAIRE: 40, 2: 40, 3: 50, 4: 60}
MAX_CARDS = _DECK_SIZES[MAX_PLAYERS]  # the box's 60 cards: no deck is larger


def deck_size(num_players: int) -> int:
    """Cards in play by default: 1 (solitaire) or 2 players use 1-40, 3 use 1-50, 4 use 1-60
    (``RulesConfig.deck_size`` sets another deck)."""
    if isinstance(num_players, bool) or not isinstance(num_players, int):
        raise TypeError(f"num_players must be an int, got {num_players!r}")
    if num_players not in _DECK_SIZES:
        raise ValueError(
            f"num_players must be between {SOLITAIRE} and {MAX_PLAYERS}, got {num_players}"
        )
    return _DECK_SIZES[num_players]


def ascending_prefix(rack: Sequence[int]) -> int:
    """Number of cards in strictly ascending order from slot 0 up to the first break."""
    if not rack:
        return 0
    n = 1
    for i in range(1, len(rack)):
        if rack[i] <= rack[i - 1]:
            break
        n += 1
    return n


def longest_run(rack: Sequence[int]) -> int:
    """Longest run of consecutive numbers (c, c+1, c+2, ...) in adjacent slots, front to back."""
    if not rack:
        return 0
    best = cur = 1
    for i in range(1, len(rack)):
        cur = cur + 1 if rack[i] == rack[i - 1] + 1 else 1
        if cur > best:
            best = cur
    return best


def run_bonus(run_length: int) -> int:
    """Bonus Rack-O points for a run of this length (only the longest run counts)."""
    if run_length >= 6:
        return RUN_BONUS[6]
    return RUN_BONUS.get(run_length, 0)


def racko_score(rack_size: int = RACK_SIZE) -> int:
    """Points for going Rack-O: 5 per card of the rack and the 25 bonus (75 with 10 slots)."""
    return rack_size * CARD_POINTS + RACKO_BONUS


def is_racko(rack: Sequence[int], min_run: int = 0, rack_size: int = RACK_SIZE) -> bool:
    """A full rack (``rack_size`` cards) in strictly ascending order; with ``min_run`` it also
    needs a run that long."""
    if len(rack) != rack_size or ascending_prefix(rack) != rack_size:
        return False
    return min_run <= 1 or longest_run(rack) >= min_run


def hand_score(rack: Sequence[int], went_racko: bool, bonus: bool = False) -> int:
    """Round points for one rack: 75 (+ run bonus) for Rack-O (``racko_score`` of a smaller rack),
    else 5 per ascending-prefix card."""
    if went_racko:
        return racko_score(len(rack)) + (run_bonus(longest_run(rack)) if bonus else 0)
    return CARD_POINTS * ascending_prefix(rack)
