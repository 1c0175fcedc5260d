"""The main job's front door (``python train/ppo.py --config configs/2p.yaml``, ``racko train``):
MaskablePPO with self-play.

The run folder (``out``, ``--out``; docs/training/main-job.md) receives the resolved
``config.yaml``, ``tb/``, data-only ``checkpoints/``, ``eval_history.json``, ``final_model.pt``,
``final_eval.json`` and the bot, ``bot.onnx`` + ``bot.json``, each written atomically. Same seed
and config, same run. Ctrl-C finishes the rollout in progress, checkpoints and exports;
``--resume`` then continues bit for bit as if the run had not stopped."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from train.common import front_door

front_door.thread_defaults()  # before numpy and torch load: they read them once

from train.common.config import TrainConfig, config_data, parse_config  # noqa: E402
from train.common.files import RunFolderError  # noqa: E402
from train.common.runs import FINAL_MODEL, RunKind  # noqa: E402
from train.sb3.trainer import Trainer  # noqa: E402


def holds_a_run(run_dir: Path) -> bool:
    """A folder holds a run once it has a complete checkpoint or a final model."""
    from train.sb3.checkpoint import CHECKPOINTS

    return (run_dir / FINAL_MODEL).is_file() or CHECKPOINTS.latest(run_dir) is not None


def _checkpoint_config(run_dir: Path) -> tuple[str, dict[str, Any]] | None:
    """The config the latest checkpoint was made with, checked and resolved."""
    from train.sb3.checkpoint import CHECKPOINTS, read_checkpoint_state

    ckpt = CHECKPOINTS.latest(run_dir)
    if ckpt is None:
        return None
    name = f"checkpoint {ckpt.name}"
    theirs = read_checkpoint_state(ckpt)["config"]
    if not isinstance(theirs, dict):
        raise RunFolderError(f"--resume: {name} does not record its config")
    return name, config_data(parse_config(theirs, name))


def _init_from_exists(cfg: TrainConfig) -> None:
    if cfg.init_from is not None and not Path(cfg.init_from).is_file():
        raise RunFolderError(f"init_from: no file at {cfg.init_from}")


PPO_RUN = RunKind(
    command="python train/ppo.py",
    schema=TrainConfig,
    length="total_steps",
    holds_a_run=holds_a_run,
    example="configs/2p.yaml",
    stale_files=("eval_history.json", "timing.json", "warmstart.json", "final_eval.json"),
    may_change=("out", "progress_bar"),
    recorded_config=_checkpoint_config,
    check_config=_init_from_exists,
)


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _train(run: front_door.Launch) -> None:
    cfg = run.cfg.model_copy(update={"progress_bar": False}) if run.args.no_progress else run.cfg
    Trainer(cfg, run.run_dir, run.args.resume).run()


PPO = front_door.FrontDoor(
    PPO_RUN, "Train a Rack-O bot with MaskablePPO + self-play.", _train, _options
)
main = PPO.main
