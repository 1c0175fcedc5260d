"""The trainers' front door, written once: ``train/ppo.py`` and ``rllib_ppo.py`` are each a
``FrontDoor`` with their own run kind.

Each has the same command line (``--config``, ``--out``, ``--resume``, the run's length, ``--seed``
where it takes one, its own flags) and fails the same way: bad input is one line ``NAME: error:
...`` on stderr and exit status 2. ``fail`` is that line for the other commands of ``train/``, and
``racko_env.cli.OneLineParser`` with these number types the command line of the examples. Nothing heavy is
imported at load, so that ``thread_defaults`` runs before numpy and torch read them."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from racko_env.cli import positive_float, positive_int

if TYPE_CHECKING:
    from train.common.runs import RunKind

# One OpenMP / MKL thread unless the caller says otherwise (the trainers set torch's own count
# from the config); OpenMP threads sleep instead of spinning between parallel regions: with
# update_threads > 1 spinning threads took the cores from each other (and from the rollout)
# whenever the machine was busy (docs/training/main-job.md). Ray: no usage-stats prompt, no
# ~/.ray/config.json.
THREAD_DEFAULTS = {
    "OMP_NUM_THREADS": "1",
    "OMP_WAIT_POLICY": "PASSIVE",
    "MKL_NUM_THREADS": "1",
    "RAY_USAGE_STATS_ENABLED": "0",
}

LENGTH_HELP = {
    "total_steps": "override total env steps",
    "iterations": "override the number of iterations",
}


def thread_defaults() -> None:
    """Set ``THREAD_DEFAULTS`` where the environment does not; call before numpy/torch load."""
    for key, value in THREAD_DEFAULTS.items():
        os.environ.setdefault(key, value)


def one_line(exc: BaseException) -> str:
    """An error's message on one line (a pydantic report has one line per problem)."""
    return str(exc).replace("\n", "; ").replace(":;", ":")


def fail(name: str, exc: BaseException) -> int:
    """Print ``NAME: error: MESSAGE`` on stderr; the exit status of a bad input (2)."""
    print(f"{name}: error: {one_line(exc)}", file=sys.stderr)
    return 2


def user_errors() -> tuple[type[Exception], ...]:
    """The errors of bad input every trainer reports in one line (imported when needed)."""
    from train.common.config import ConfigError
    from train.common.files import RunFolderError

    return (ConfigError, RunFolderError, FileNotFoundError)


@dataclass(frozen=True)
class Launch:
    """What a trainer is started with: the checked config, its run folder, the command line."""

    cfg: Any
    run_dir: Path
    args: argparse.Namespace


@dataclass(frozen=True)
class FrontDoor:
    """One trainer's command: its run kind, its own flags and what it does with a ``Launch``."""

    run: RunKind
    description: str
    train: Callable[[Launch], None]
    options: Callable[[argparse.ArgumentParser], None] | None = None  # the trainer's own flags
    seed: bool = True  # the command takes --seed
    errors: tuple[type[Exception], ...] = ()  # more errors that are bad input (one line)

    @property
    def name(self) -> str:
        """The script's name, the prefix of its error lines: ``ppo``, ``rllib_ppo``."""
        return Path(self.run.command.split()[-1]).stem

    def parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(description=self.description)
        parser.add_argument("--config", help=f"YAML config (e.g. {self.run.example})")
        parser.add_argument("--out", help="override the run folder")
        parser.add_argument(
            "--resume", action="store_true", help="continue the run in --out (or the config's out)"
        )
        if self.seed:
            parser.add_argument("--seed", type=int, help="override the config's seed")
        length = self.run.length
        parser.add_argument("--" + length.replace("_", "-"), type=int, help=LENGTH_HELP[length])
        if self.options is not None:
            self.options(parser)
        return parser

    def main(self, argv: list[str] | None = None) -> int:
        """Parse ``argv``, prepare the run folder, train; 0, or 2 with one line on bad input."""
        from train.common.runs import prepare_run

        argv = sys.argv[1:] if argv is None else list(argv)
        args = self.parser().parse_args(argv)
        overrides = {self.run.length: getattr(args, self.run.length)}
        if self.seed:
            overrides["seed"] = args.seed
        try:
            cfg, run_dir = prepare_run(self.run, args.config, args.out, args.resume, **overrides)
            self.train(Launch(cfg, run_dir, args))
        except (*user_errors(), *self.errors) as exc:
            return fail(self.name, exc)
        return 0


def settings_flags(
    parser: argparse.ArgumentParser,
    defaults: object,
    types: dict[str, Callable[[str], object]] | None = None,
) -> None:
    """A flag per field of the dataclass instance ``defaults`` (``--frames-per-batch`` for
    ``frames_per_batch``), with its default: an ``int`` field takes a positive integer, a
    ``float`` a positive number, unless ``types`` names another type for the field (``int`` for
    a seed, ``probability``)."""
    for name, value in vars(defaults).items():
        kind = (types or {}).get(name)
        if kind is None:
            kind = {int: positive_int, float: positive_float}.get(type(value), type(value))
        parser.add_argument(f"--{name.replace('_', '-')}", type=kind, default=value)
