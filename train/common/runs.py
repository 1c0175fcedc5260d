"""The run-folder contract of every trainer (``train/ppo.py``, ``rllib_ppo.py``).

- **A new run** (``--config FILE``): a folder already holding a run is refused (``--resume`` it
  or use another ``--out``); the leftovers of a run killed before its first checkpoint are
  removed; the resolved config goes to ``config.yaml`` with its ``kind:``.
- **A resumed run** (``--resume --out RUN_DIR``): the run's own ``config.yaml`` is the config; a
  ``--config`` given too, and the config the latest checkpoint records, must equal it but for the
  run's length, which may grow (a new one is written back).
- **Checkpoints** are written under a ``.tmp_`` name and renamed when complete; the newest few
  are kept. Every file is written atomically."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from racko_env.files import TMP_PREFIX
from train.common.config import config_data, config_differences, load_config, read_yaml
from train.common.files import RunFolderError, remove_temp_files, write_yaml_atomic

CONFIG_FILE = "config.yaml"
CHECKPOINTS = "checkpoints"
FINAL_MODEL = "final_model.pt"  # the trained weights a finished run leaves (data only)


@dataclass(frozen=True)
class RunKind:
    """What the contract needs to know of one trainer."""

    command: str  # how the trainer is started, for messages: "python train/ppo.py"
    schema: type  # the pydantic config model
    length: str  # the key a resume may change: "total_steps" or "iterations"
    holds_a_run: Callable[[Path], bool]  # a complete checkpoint (or more) in the folder
    example: str = ""  # a config to name when --config is missing
    stale_files: tuple[str, ...] = ()  # files of a run killed before its first checkpoint
    # keys that never make two configs different runs (they change nothing trained)
    may_change: tuple[str, ...] = ("out",)
    # the config the latest checkpoint was made with, where it records one
    recorded_config: Callable[[Path], tuple[str, dict[str, Any]] | None] | None = None
    # extra checks of a new run's config before its folder is made (e.g. a file it names exists)
    check_config: Callable[[Any], None] | None = None


def prepare_run(
    run: RunKind,
    config: str | None,
    out: str | None,
    resume: bool,
    **overrides: Any,
) -> tuple[Any, Path]:
    """The config and the run folder of a command line; ``overrides`` are its top-level settings
    (None where not given). Raises ``RunFolderError`` (saying what to do) or ``ConfigError``."""
    if resume:
        return _resume(run, config, out, overrides)
    if config is None:
        raise RunFolderError(f"--config is required (e.g. {run.example})")
    cfg = load_config(config, run.schema, out=out, **overrides)
    run_dir = Path(cfg.out)
    if run.holds_a_run(run_dir):
        raise RunFolderError(
            f"{run_dir} already holds a run; use --resume to continue it or --out for a new one"
        )
    if run.check_config is not None:
        run.check_config(cfg)
    clean_folder(run_dir)
    for name in run.stale_files:  # from a run killed before its first checkpoint
        (run_dir / name).unlink(missing_ok=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_yaml_atomic(run_dir / CONFIG_FILE, config_data(cfg))
    return cfg, run_dir


def _resume(
    run: RunKind, config: str | None, out: str | None, overrides: dict[str, Any]
) -> tuple[Any, Path]:
    if out is None and config is None:
        raise RunFolderError("--resume needs --out RUN_DIR or the --config that names it")
    run_dir = Path(out) if out else Path(load_config(config, run.schema).out)
    saved = run_dir / CONFIG_FILE
    if not saved.is_file():
        raise RunFolderError(f"--resume: {saved} not found: {run_dir} holds no run to resume")
    clean_folder(run_dir)
    if not run.holds_a_run(run_dir):
        raise RunFolderError(
            f"--resume: {run_dir} has no complete checkpoint (the run stopped before its first "
            f"one); start it over with: {run.command} --config {saved} --out {run_dir}"
        )
    length = overrides.get(run.length)
    cfg = load_config(saved, run.schema, **{run.length: length})
    ours = config_data(cfg)
    if run.recorded_config is not None:
        recorded = run.recorded_config(run_dir)
        if recorded is not None:
            name, theirs = recorded
            _same_run(run, ours, theirs, str(saved), f"the config {name} was made with")
    if config is not None:
        given = load_config(config, run.schema, out=str(run_dir), **{run.length: ours[run.length]})
        _same_run(run, config_data(given), ours, config, f"the run's {saved}")
    seed = overrides.get("seed")
    if seed is not None and seed != ours.get("seed"):
        raise RunFolderError(
            f"--resume: the run was started with seed {ours.get('seed')}, not {seed}"
        )
    if length is not None and read_yaml(saved).get(run.length) != length:
        write_yaml_atomic(saved, ours)
    return cfg, run_dir


def _same_run(run: RunKind, ours: dict[str, Any], theirs: Any, what: str, other: str) -> None:
    """Refuse ``ours`` unless it differs from ``theirs`` only in the run's length."""
    if not isinstance(theirs, dict):
        raise RunFolderError(f"--resume: {other} is not a config")
    ignore = {run.length, *run.may_change}
    diff = [k for k in config_differences(ours, theirs) if k not in ignore]
    if diff:
        raise RunFolderError(
            f"--resume: {what} differs from {other} in {', '.join(diff)}; resume with that "
            "config or start a new run with --out"
        )


def clean_folder(run_dir: Path) -> None:
    """Remove the half-written ``.tmp_*`` files and folders a killed run left behind."""
    remove_temp_files(run_dir)
    remove_temp_files(run_dir / CHECKPOINTS)


@dataclass(frozen=True)
class Checkpoints:
    """One trainer's checkpoint folders: ``checkpoints/<prefix><number>``, complete when they
    hold every file named in ``complete``."""

    prefix: str  # "step_" (PPO), "iter_" (RLlib)
    complete: tuple[str, ...]  # files every complete checkpoint holds
    digits: int  # of the number in the name: names sort as numbers
    folder: str = CHECKPOINTS

    def path(self, run_dir: Path, number: int) -> Path:
        """Where checkpoint ``number`` (env steps, iterations) lives once complete."""
        return Path(run_dir) / self.folder / f"{self.prefix}{number:0{self.digits}d}"

    def latest(self, run_dir: Path) -> Path | None:
        """The newest complete checkpoint (temporary ``.tmp_*`` folders never match)."""
        root = Path(run_dir) / self.folder
        done = sorted(p for p in root.glob(self.prefix + "*") if self._complete(p))
        return done[-1] if done else None

    def _complete(self, path: Path) -> bool:
        return path.is_dir() and all((path / name).is_file() for name in self.complete)

    @contextmanager
    def write(self, run_dir: Path, number: int, keep: int) -> Iterator[Path]:
        """Write checkpoint ``number`` atomically: fill the yielded ``.tmp_`` folder; leaving the
        block renames it into place and keeps only the newest ``keep`` checkpoints. An exception
        leaves the earlier checkpoints as they were (the temporary folder goes at the next run)."""
        final = self.path(run_dir, number)
        root, tmp = final.parent, final.parent / f"{TMP_PREFIX}{final.name}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        yield tmp
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        for old in sorted(p for p in root.glob(self.prefix + "*") if p.is_dir())[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
