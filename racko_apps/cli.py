"""The ``racko`` command: one entry point, one subcommand per front end.

    racko --bots expert              # no subcommand: play in the terminal
    racko play --bots expert         # the same, named

Each subcommand's module is imported only when chosen, so ``racko --help`` is instant.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence

# name -> ("module:function", one-line description). Keep sorted by name.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "evaluate": ("racko_eval.evaluate:main", "duplicate tournament of bots, with 95% intervals"),
    "exploit": ("train.exploit:main", "train a best response to a fixed bot: its win rate"),
    "export": ("train.export:main", "export a train/ppo.py run folder as a bot file"),
    "grade": ("racko_apps.grade.cli:main", "grade a bot against a rubric (legal, fast, wins)"),
    "gradescope-kit": (
        "racko_apps.gradescope.kit:kit_main",
        "write a Gradescope autograder for a rubric (autograder.zip)",
    ),
    "league": ("racko_apps.league.cli:main", "round-robin league of the bots in a folder, rated"),
    "new-bot": ("racko_apps.new_bot.starter:main", "write a starter bot NAME.py and its test"),
    "play": ("racko_apps.play.cli:main", "play Rack-O in the terminal against bots, or watch them"),
    "plot": ("train.plot_curve:main", "plot a training run's learning curve"),
    "replay": (
        "racko_apps.play.replay:main",
        "step through a recorded game (--record), every rack",
    ),
    "sweep": ("train.sweep:main", "seeds and sweeps of the main job as Ray Tune trials"),
    "train": ("train.ppo:main", "train a bot with self-play PPO: the main job (train/ppo.py)"),
    "train-rllib": (
        "train.rllib_ppo:main",
        "train the same policy on Ray RLlib, one machine or many",
    ),
    "web": (
        "racko_apps.play.web:main",
        "serve the browser game on 127.0.0.1 (--port; --fetch-ort)",
    ),
}


# name -> (the extra it needs, the modules of that extra it imports); an .onnx bot's
# onnxruntime is named by the bot loader when one is asked for.
NEEDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "evaluate": ("eval", ("tqdm", "openskill", "matplotlib")),
    "exploit": ("train", ("torch", "stable_baselines3", "sb3_contrib", "yaml", "pydantic")),
    "export": ("train", ("torch", "onnx", "yaml", "pydantic")),
    "grade": ("eval", ("yaml",)),
    "gradescope-kit": ("eval", ("yaml", "pydantic")),
    "league": ("eval", ("openskill", "matplotlib", "tqdm")),
    "play": ("play", ("rich",)),
    "plot": ("eval", ("matplotlib",)),
    "replay": ("eval", ("pydantic",)),
    "sweep": ("cluster", ("ray", "torch", "yaml", "pydantic")),
    "train": ("train", ("torch", "stable_baselines3", "sb3_contrib", "yaml", "pydantic")),
    "train-rllib": ("cluster", ("ray", "torch", "yaml", "pydantic")),
}


def _is_missing(module: str) -> bool:
    if module in sys.modules:
        return sys.modules[module] is None
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def missing_extra(name: str) -> str | None:
    """The one-line reason subcommand ``name`` cannot run here (an extra not installed), or None:
    checked before it starts, not after a league's last pairing."""
    from agents.extras import install_hint

    extra, modules = NEEDS.get(name, ("", ()))
    missing = [m for m in modules if _is_missing(m)]
    if not missing:
        return None
    return (
        f"racko {name} needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
        f"not installed (the '{extra}' extra): {install_hint(extra)}"
    )


def _usage() -> str:
    width = max(len(n) for n in SUBCOMMANDS)
    rows = "\n".join(
        f"  {n:<{width}}  {d}" + (f" [needs the '{NEEDS[n][0]}' extra]" if n in NEEDS else "")
        for n, (_, d) in sorted(SUBCOMMANDS.items())
    )
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
    problem = missing_extra(name)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    module, _, func = SUBCOMMANDS[name][0].partition(":")
    return int(getattr(importlib.import_module(module), func)(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
