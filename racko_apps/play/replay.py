"""``racko replay FILE``: step through a recorded game (docs/records.md) in the terminal.

    racko replay records/deal0003-seating1.json            # interactive: Enter, b, a number, q
    racko replay game.json --to-end                        # print the last position and the result
    racko replay game.json --step 12                       # the position after move 12
    racko replay game.json --all                           # every position, one after another

Every rack is shown face up, with the piles, the card in hand, the scores, the last move and the
bot's explanation of it where recorded. The positions come from replaying the moves through the
rules engine, checked against the record's result. Without a terminal it prints the last
position.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agents.base import describe_action
from racko_apps.play.text import SLOT_LABELS, label_bot_slots
from racko_env.actions import DRAW_PILE, TAKE_DISCARD
from racko_env.cli import OneLineParser
from racko_eval.records import RecordError, replay_states

UNDER_DISCARD = 5
HELP = "Enter/n next, b back, s start, e end, r next round, a number: go to that move, q quit"


def _who(record: Mapping[str, Any], seat: int) -> str:
    return f"player_{seat} ({record['seats'][seat]['bot']})"


def describe_move(record: Mapping[str, Any], states: Sequence[Mapping[str, Any]], k: int) -> str:
    """Move ``k`` (1-based) in words: who, what, and the bot's explanation if recorded."""
    move = record["moves"][k - 1]
    before = states[k - 1]
    action = move["action"]
    card = None
    if action == TAKE_DISCARD:
        card = before["discard"][-1] if before["discard"] else None
    elif action != DRAW_PILE:
        card = before["held"]
    text = f"{_who(record, move['seat'])}: {label_bot_slots(describe_action(action, card))}"
    if move.get("explain"):
        text += f"\n    why: {label_bot_slots(move['explain'])}"
    return text


def format_state(record: Mapping[str, Any], states: Sequence[Mapping[str, Any]], k: int) -> str:
    """The position after move ``k`` (0 = the first deal) as text, every rack face up."""
    s = states[k]
    total = len(states) - 1
    n = len(s["racks"])
    lines = [
        f"=== move {k}/{total} - round {s['round']}, turn {s['turn']}, "
        f"dealer player_{s['dealer']} ==="
    ]
    if k:
        lines.append("last move: " + describe_move(record, states, k))
    width = max(len(_who(record, p)) for p in range(n))
    labels = SLOT_LABELS[: len(s["racks"][0])]
    lines.append(f"  {'slot':<{width}}  " + " ".join(f"{label:2d}" for label in labels))
    for p in range(n):
        cards = " ".join(f"{c:2d}" for c in s["racks"][p])
        mark = ">" if p == s["current"] and not s["round_over"] else " "
        lines.append(f"{mark} {_who(record, p):<{width}}  {cards}   score {s['totals'][p]}")
    under = s["discard"][-1 - UNDER_DISCARD : -1][::-1]
    top = str(s["discard"][-1]) if s["discard"] else "empty"
    below = f" (below it: {', '.join(map(str, under))})" if under else ""
    piles = f"discard pile: {top}{below}   draw pile: {len(s['draw'])} cards"
    if s["held"] is not None:
        source = "discard pile" if s["held_from_discard"] else "draw pile"
        piles += f"   in hand: {s['held']} (from the {source})"
    lines.append(piles)
    if s["round_over"]:
        if s["racko_player"] is not None:
            why = f"{_who(record, s['racko_player'])} went Rack-O"
        else:
            why = "cut off at the turn limit"
        points = ", ".join(str(p) for p in s["round_points"])
        lines.append(f"round {s['round']} over: {why}; round points {points}")
    else:
        lines.append(f"{_who(record, s['current'])} to play ({s['phase']})")
    if k == total:
        lines.append(result_line(record))
    return "\n".join(lines)


def result_line(record: Mapping[str, Any]) -> str:
    """How the recorded game ended, in one line."""
    result = record["result"]
    totals = ", ".join(f"{_who(record, p)} {t}" for p, t in enumerate(result["totals"]))
    text = f"end of record: totals {totals}"
    forfeit = result.get("forfeit")
    if forfeit:
        seat = forfeit.get("seat")
        who = _who(record, seat) if seat is not None else forfeit["bot"]
        text += f"; {who} forfeited: {forfeit['reason']}"
    elif result["win"] is not None:
        shares = ", ".join(f"{w:g}" for w in result["win"])
        text += f"; win shares {shares}"
    elif result["game_over"] and result["winner"] is not None:
        winner = result["winner"]
        if record["rules"].get("partners"):
            text += f"; team {winner + 1} (seats {winner} and {winner + 2}) won the game"
        else:
            text += f"; {_who(record, winner)} won the game"
    return text


def interactive(
    record: Mapping[str, Any],
    states: Sequence[Mapping[str, Any]],
    read: Callable[[str], str] = input,
    write: Callable[[str], Any] = print,
) -> int:
    """Step forward and back until q or the end of input."""
    k, last = 0, len(states) - 1
    write(HELP)
    while True:
        write(format_state(record, states, k))
        try:
            line = read("replay> ").strip().lower()
        except EOFError:
            return 0
        if line in ("q", "quit", "exit"):
            return 0
        if line in ("", "n", "next"):
            k = min(last, k + 1)
        elif line in ("b", "back", "p"):
            k = max(0, k - 1)
        elif line in ("s", "start"):
            k = 0
        elif line in ("e", "end"):
            k = last
        elif line in ("r", "round"):
            k = next((j for j in range(k + 1, last + 1) if states[j]["round_over"]), last)
        elif line.isdigit():
            k = min(last, int(line))
        else:
            write(HELP)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="racko replay",
        description="Step through a recorded game (racko-record/1, written by --record of play, "
        "evaluate, grade and league), every rack shown. See docs/records.md.",
    )
    parser.add_argument("file", metavar="FILE", help="a record file (.json)")
    show = parser.add_mutually_exclusive_group()
    show.add_argument("--step", type=int, metavar="N", help="print the position after move N")
    show.add_argument("--to-end", action="store_true", help="print the last position and result")
    show.add_argument("--all", action="store_true", help="print every position in order")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; 0 ok, 2 a bad file or option (one line on stderr)."""
    from racko_eval.record_schema import load_record

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        record = load_record(args.file)
        states = replay_states(record)
    except RecordError as err:
        print(f"racko replay: error: {err}", file=sys.stderr)
        return 2
    last = len(states) - 1
    if args.step is not None:
        if not 0 <= args.step <= last:
            print(
                f"racko replay: error: --step must be 0..{last}, got {args.step}", file=sys.stderr
            )
            return 2
        print(format_state(record, states, args.step))
    elif args.all:
        print("\n\n".join(format_state(record, states, k) for k in range(last + 1)))
    elif args.to_end or not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(format_state(record, states, last))
    else:
        return interactive(record, states)
    return 0
