"""Plain-text pieces of the terminal game: slot labels, move descriptions, input parsing, scoring.

Free of rich and of I/O, so that every sentence the player reads can be unit-tested.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase
from racko_env.config import RulesConfig
from racko_env.engine import TurnRecord
from racko_env.rules import (
    CARD_POINTS,
    RACK_SIZE,
    RACKO_BONUS,
    ascending_prefix,
    hand_score,
    longest_run,
    run_bonus,
)

SLOT_LABELS: tuple[int, ...] = tuple(CARD_POINTS * (i + 1) for i in range(RACK_SIZE))
SLOT_LIST = ", ".join(str(s) for s in SLOT_LABELS)


def slot_label(slot: int) -> str:
    """The printed label of a slot index: 0 (front) -> "5", 9 (back) -> "50"."""
    return str(SLOT_LABELS[slot])


def parse_slot(text: str) -> int | None:
    """The slot index of a printed label ("5".."50"), or None if ``text`` is not one."""
    text = text.strip()
    if not text.isdigit():
        return None
    value = int(text)
    return SLOT_LABELS.index(value) if value in SLOT_LABELS else None


# agents' explanations number slots 1-10 from the front (agents.base.describe_action)
_BOT_SLOT = re.compile(r"\bslot (10|[1-9])\b")


def label_bot_slots(text: str) -> str:
    """Say a bot's 1-10 slot numbers as the labels the player types: 'slot 7' -> 'slot 35'."""
    return _BOT_SLOT.sub(lambda m: f"slot {SLOT_LABELS[int(m.group(1)) - 1]}", text)


# ------------------------------------------------------------------------- the log of moves


def describe_turn(record: TurnRecord, name: str, drawn: int | None = None) -> str:
    """One log line for a finished turn; ``drawn``: the card drawn, where the reader may know
    it (their own turn, or --watch)."""
    if record.source == TAKE_DISCARD:
        return (
            f"{name} took the {record.taken} from the discard pile into slot "
            f"{slot_label(record.slot)}, discarding the {record.discarded}"
        )
    if record.slot is None:
        return f"{name} drew and discarded the {record.discarded}"
    if drawn is None:
        return (
            f"{name} drew and kept a card in slot {slot_label(record.slot)}, "
            f"discarding the {record.discarded}"
        )
    return (
        f"{name} drew the {drawn} and kept it in slot {slot_label(record.slot)}, "
        f"discarding the {record.discarded}"
    )


# ------------------------------------------------------------------------- reading the player

HELP_TEXT = (
    "How to play: get your 10 cards in ascending order from slot 5 (front) to slot 50 (back).\n"
    "  On your turn type  d  to draw the top card of the draw pile, or  t  to take the top card\n"
    "  of the discard pile (it must go into your rack). After drawing, type  k  to keep the card\n"
    "  or  x  to discard it. To place a card, type the label of the slot it replaces:\n"
    f"  {SLOT_LIST} (the card there goes onto the discard pile).\n"
    "  Shortcuts: 't 20' takes the discard straight into slot 20; a slot label right after\n"
    "  drawing keeps the card there.  ?  shows this help,  q  leaves the game."
)

_DRAW_WORDS = {"d": DRAW_PILE, "draw": DRAW_PILE, "t": TAKE_DISCARD, "take": TAKE_DISCARD}
_KEEP_WORDS = {"k": KEEP, "keep": KEEP, "x": DISCARD, "discard": DISCARD}


@dataclass(frozen=True)
class Command:
    """What one line of input asks for: actions to play in order, or help / quit, or an error."""

    actions: tuple[int, ...] = ()
    help: bool = False
    quit: bool = False
    error: str = ""


def _split(text: str) -> tuple[str, str]:
    """'t20', 't 20' and 'take 20' -> ('t', '20'); a lone word -> (word, '')."""
    text = " ".join(text.lower().split())
    head, _, rest = text.partition(" ")
    if not rest:
        letters = head.rstrip("0123456789")
        if letters and letters != head:
            return letters, head[len(letters) :]
    return head, rest


def _bad_slot(text: str) -> str:
    return f"'{text}' is not a slot label: the slots are {SLOT_LIST} (front to back)."


def parse_command(
    text: str, phase: Phase, held: int | None, discard_top: int, from_discard: bool = False
) -> Command:
    """Turn a line typed by the player into the env actions it means, or explain why it cannot.
    Only choices legal in ``phase`` are returned, so a typo never reaches the engine."""
    raw = text.strip()
    if raw.lower() in ("?", "h", "help"):
        return Command(help=True)
    if raw.lower() in ("q", "quit", "exit"):
        return Command(quit=True)
    if not raw:
        return Command(error="Nothing typed.")
    word, arg = _split(raw)
    if phase == Phase.DRAW:
        if word in _DRAW_WORDS and not arg:
            return Command(actions=(_DRAW_WORDS[word],))
        if word in ("t", "take") and arg:
            slot = parse_slot(arg)
            if slot is None:
                return Command(error=_bad_slot(arg))
            return Command(actions=(TAKE_DISCARD, slot))
        if parse_slot(raw) is not None:
            return Command(
                error=f"First choose where your card comes from: d (draw pile) or t (take the "
                f"{discard_top}); 't {raw}' takes the {discard_top} straight into slot {raw}."
            )
        if word in _KEEP_WORDS:
            return Command(error="You have not drawn a card yet: type d to draw or t to take.")
        if raw.isdigit():
            return Command(
                error=_bad_slot(raw) + f" And first type d (draw) or t (take the {discard_top})."
            )
        return Command(error=f"'{raw}' is not a choice now: type d (draw) or t (take the discard).")
    if phase == Phase.KEEP_OR_DISCARD:
        if word in _KEEP_WORDS and not arg:
            return Command(actions=(_KEEP_WORDS[word],))
        if word in ("k", "keep") and arg:
            slot = parse_slot(arg)
            if slot is None:
                return Command(error=_bad_slot(arg))
            return Command(actions=(KEEP, slot))
        slot = parse_slot(raw)
        if slot is not None:
            return Command(actions=(KEEP, slot))
        if word in _DRAW_WORDS:
            return Command(
                error=f"You already drew the {held}: type k to keep it or x to discard it."
            )
        if raw.isdigit():
            return Command(error=_bad_slot(raw))
        return Command(error=f"'{raw}' is not a choice now: type k (keep the {held}) or x.")
    if phase == Phase.PLACE:
        slot = parse_slot(arg if word in ("k", "keep", "t", "take") and arg else raw)
        if slot is not None:
            return Command(actions=(slot,))
        if word in ("x", "discard"):
            why = "came from the discard pile" if from_discard else "is one you chose to keep"
            return Command(
                error=f"The {held} {why}, so it must go into your rack: type a slot label."
            )
        if word in _DRAW_WORDS or word in ("k", "keep"):
            return Command(
                error=f"You already hold the {held}: type the label of the slot it goes into."
            )
        if raw.isdigit():
            return Command(error=_bad_slot(raw))
        return Command(error=f"'{raw}' is not a slot label: type one of {SLOT_LIST}.")
    return Command(error="It is not your turn.")


def prompt_for(phase: Phase, held: int | None, discard_top: int, draw_size: int) -> str:
    """The question asked for each decision, naming exactly the legal choices."""
    if phase == Phase.DRAW:
        return (
            f"Your turn: [d] draw from the draw pile ({draw_size} cards) or "
            f"[t] take the {discard_top} from the discard pile"
        )
    if phase == Phase.KEEP_OR_DISCARD:
        return f"You drew the {held}: [k] keep it, [x] discard it, or a slot label to keep it there"
    return f"Put the {held} into which slot? Type its label ({SLOT_LIST})"


# ------------------------------------------------------------------------- scoring, explained


def run_cards(rack: Sequence[int]) -> list[int]:
    """The cards of the first longest run of consecutive numbers in adjacent slots."""
    best_start, best_len, start = 0, 1, 0
    for i in range(1, len(rack)):
        if rack[i] != rack[i - 1] + 1:
            start = i
        if i - start + 1 > best_len:
            best_start, best_len = start, i - start + 1
    return list(rack[best_start : best_start + best_len])


def explain_score(rack: Sequence[int], went_racko: bool, config: RulesConfig) -> list[str]:
    """Line-by-line reasoning for one rack's round points (from ``racko_env.rules``, so it
    agrees with the engine); the last line is the total."""
    total = hand_score(rack, went_racko, config.bonus)
    k = len(rack)
    if went_racko:
        lines = [
            f"Rack-O: all {k} cards ascending: {k} x {CARD_POINTS} = "
            f"{k * CARD_POINTS}, plus the Rack-O bonus of {RACKO_BONUS}"
        ]
        if config.bonus:
            run = run_cards(rack)
            pts = run_bonus(len(run))
            if pts:
                lines.append(
                    f"Bonus Rack-O: longest run {'-'.join(map(str, run))} "
                    f"({len(run)} cards) scores +{pts}"
                )
            else:
                lines.append(
                    f"Bonus Rack-O: longest run is {len(run)} card(s); a run of 3 or more "
                    "is needed: +0"
                )
        lines.append(f"total {total}")
        return lines
    n = ascending_prefix(rack)
    cards = ", ".join(str(c) for c in rack[:n])
    if n == k:
        why = "not a Rack-O"
        if config.min_run:
            why = (
                f"no Rack-O: it needs a run of {config.min_run} consecutive numbers and the "
                f"longest is {longest_run(rack)}"
            )
        first = f"all {k} cards ascending ({why}): {n} x {CARD_POINTS} = {total}"
    else:
        first = (
            f"ascending from slot 5: {cards} ({n} card{'s' if n != 1 else ''}); the {rack[n]} "
            f"in slot {slot_label(n)} breaks the order: {n} x {CARD_POINTS} = {total}"
        )
    return [first, f"total {total}"]
