"""Play Rack-O in the terminal against any bot, or watch bots play each other.

    racko play --players 3 --bots expert agents/pretrained/racko_3p.onnx
    racko --bots heuristic --hint expert --rounds 2
    racko --watch --bots heuristic random --delay 0.5

The game runs through the real AEC env, and the screen shows only what the human's seat may know
(docs/bots/play-terminal.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from racko_env.cli import OneLineParser, add_rules_arguments, flag_names, rules_options
from racko_env.config import RulesConfig

# ------------------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    """The ``racko play`` command line (also ``racko`` with options only)."""
    p = OneLineParser(
        prog="racko",
        description="Play Rack-O in the terminal against bots, or watch bots play (--watch).",
        epilog="Bot specs: random, heuristic, expert, search (or search:OPTIONS, e.g. "
        "search:worlds=16,depth=1), a 'module:Class' path, or an exported .onnx bot file. "
        "See docs/bots/play-terminal.md.",
    )
    p.add_argument("--players", type=int, default=2, help="players at the table, 2-4 (default 2)")
    p.add_argument(
        "--bots",
        nargs="+",
        metavar="SPEC",
        default=None,
        help="one bot per other seat, in seat order skipping yours (players-1 specs); with "
        "--watch one per seat. Default: heuristic in every bot seat",
    )
    p.add_argument("--seat", type=int, default=0, help="your seat, 0..players-1 (default 0)")
    p.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="stop after this many rounds (the highest total wins) if nobody reached the "
        "target score before; default: a full game",
    )
    p.add_argument("--seed", type=int, default=None, help="seed of the deals and bots (replays)")
    p.add_argument("--hint", metavar="SPEC", default=None, help="show what this bot would do, why")
    p.add_argument("--watch", action="store_true", help="bots only: watch them play each other")
    p.add_argument(
        "--delay", type=float, default=1.0, help="--watch: seconds between moves (default 1)"
    )
    p.add_argument(
        "--record",
        type=Path,
        metavar="DIR",
        help="write a record of the game to DIR (racko replay FILE; docs/records.md)",
    )
    add_rules_arguments(p)
    return p


def rules_from_args(args: argparse.Namespace) -> RulesConfig:
    """The validated rules (RulesConfig names any bad option)."""
    return RulesConfig(num_players=args.players, **rules_options(args))


def check_args(args: argparse.Namespace, config: RulesConfig) -> list[str]:
    """The bot spec of every seat (None for the human), or raise ValueError explaining the misfit."""
    n = config.num_players
    if not args.watch and not 0 <= args.seat < n:
        raise ValueError(f"--seat must be a seat in 0..{n - 1} for {n} players, got {args.seat}")
    if args.rounds is not None and args.rounds < 1:
        raise ValueError(f"--rounds must be at least 1, got {args.rounds}")
    if args.delay < 0:
        raise ValueError(f"--delay must be 0 or more seconds, got {args.delay}")
    specs = args.bots if args.bots is not None else ["heuristic"] * (n if args.watch else n - 1)
    if args.watch:
        if len(specs) == n - 1:  # the seat a human would take gets the default bot
            specs = list(specs)
            specs.insert(min(max(args.seat, 0), n - 1), "heuristic")
        if len(specs) != n:
            raise ValueError(
                f"--watch needs one bot spec per seat: {n} for --players {n} (or {n - 1}, and "
                f"heuristic takes --seat), got {len(specs)} ({' '.join(specs)})"
            )
        return list(specs)
    if len(specs) != n - 1:
        raise ValueError(
            f"--bots needs {n - 1} spec(s) for --players {n} (one per seat besides yours), got "
            f"{len(specs)} ({' '.join(specs)}); use --watch to let bots fill every seat"
        )
    seats: list[Any] = list(specs)
    seats.insert(args.seat, None)
    return seats


def load_bot(spec: str, config: RulesConfig, seed: int | None) -> Any:
    """``agents.load`` with the table's rules; imported here so the engine alone needs no bots."""
    import agents

    options = config.to_dict()
    num_players = options.pop("num_players")
    return agents.load(spec, num_players=num_players, seed=seed, **options)


# ------------------------------------------------------------------------- entry point


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (0 ok or end of input, 130 Ctrl-C, 2 usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = rules_from_args(args)
        seat_specs = check_args(args, config)
    except (ValueError, TypeError) as err:
        parser.error(flag_names(str(err)))
    hint_spec = args.hint
    if args.watch and hint_spec is not None:
        parser.error("--hint is for a human player; it cannot be used with --watch")
    from agents.extras import MissingExtraError

    try:
        from racko_apps.play.table import Table  # rich is needed only once a game starts

        bots = [
            None if spec is None else load_bot(spec, config, _seat_seed(args.seed, seat))
            for seat, spec in enumerate(seat_specs)
        ]
        hint_bot = None if hint_spec is None else load_bot(hint_spec, config, args.seed)
    except MissingExtraError as err:  # not a usage error: one line naming it, no usage text
        print(f"{parser.prog}: {err}", file=sys.stderr)
        return 1
    except Exception as err:  # any failure of a user's bot class or file ends here, named
        parser.error(f"cannot load bot: {err}")

    table = Table(
        config=config,
        seat_specs=seat_specs,
        bots=bots,
        hint=(hint_spec, hint_bot) if hint_bot is not None else None,
        watch=args.watch,
        delay=args.delay,
        rounds=args.rounds,
        seed=args.seed,
        record_dir=args.record,
    )
    return table.run()


def _seat_seed(seed: int | None, seat: int) -> int | None:
    """Each bot its own stream, fixed by --seed."""
    return None if seed is None else seed * 10 + seat + 1
