"""The ``racko`` command: one entry point, one subcommand per front end.

    racko --bots expert              # no subcommand: play in the terminal (as before)
    racko play --bots expert         # the same, named
    racko <subcommand> --help

Each subcommand lives in its own module with a ``main(argv) -> int``; the table below names it
as ``"module:function"`` and it is imported only when chosen, so ``racko play`` never imports
torch and ``racko --help`` is instant.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

# name -> ("module:function", one-line description). Keep sorted by name.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "evaluate": ("racko_apps.evaluate:main", "duplicate tournament of bots (train/evaluate.py)"),
    "grade": ("racko_apps.grade:main", "grade a bot against a rubric (legal, fast, wins)"),
    "league": ("racko_apps.league:main", "round-robin league of the bots in a folder, rated"),
    "new-bot": ("racko_apps.new_bot:main", "write a starter bot NAME.py and its test"),
    "play": ("racko_apps.play:main", "play Rack-O in the terminal against bots, or watch them"),
    "train": ("racko_apps.train:main", "train a bot with self-play PPO (train/ppo.py)"),
    "web": ("racko_apps.web:main", "serve the browser game on 127.0.0.1 (--port)"),
}


def _usage() -> str:
    width = max(len(n) for n in SUBCOMMANDS)
    rows = "\n".join(f"  {n:<{width}}  {d}" for n, (_, d) in sorted(SUBCOMMANDS.items()))
    return (
        "usage: racko [SUBCOMMAND] [options]\n\n"
        "Rack-O front ends. With no subcommand, or options only, racko plays in the terminal.\n\n"
        f"subcommands:\n{rows}\n\n'racko SUBCOMMAND --help' for each one's options."
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to the subcommand named by the first argument (default ``play``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if args and not args[0].startswith("-"):
        name, rest = args[0], args[1:]
        if name not in SUBCOMMANDS:
            print(
                f"racko: unknown subcommand {name!r}; choose from {', '.join(sorted(SUBCOMMANDS))}",
                file=sys.stderr,
            )
            return 2
    else:
        name, rest = "play", args
    module, _, func = SUBCOMMANDS[name][0].partition(":")
    return int(getattr(importlib.import_module(module), func)(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
