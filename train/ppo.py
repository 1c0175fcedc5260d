"""Train a Rack-O bot with MaskablePPO and self-play: ``python train/ppo.py --config configs/2p.yaml``.

The run folder (``out`` in the config, ``--out``) receives: ``config.yaml`` (the resolved config,
``kind: ppo``), ``tb/`` (TensorBoard logs), ``checkpoints/`` (every ``checkpoint_every`` steps, at
rollout boundaries, in data-only formats: train/sb3/checkpoint.py), ``eval_history.json`` (periodic
win rates of the quick batched check, racko_eval/quick_eval.py), ``final_model.pt`` (the policy's
weights only), ``final_eval.json`` (a duplicate tournament) and the exported bot ``bot.onnx`` +
``bot.json``. Every file is written atomically.

Same seed + config -> same run (on the same machine, same VecEnv kind and ``n_envs``). Ctrl-C
finishes the rollout in progress, checkpoints at the rollout boundary and exports; ``--resume``
then continues bit for bit as if the run had not stopped (with ``vec_env: batched``, whose games
are saved in the checkpoint; Dummy/Subproc VecEnvs are dealt afresh on resume).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

os.environ.setdefault("OMP_NUM_THREADS", "1")
# OpenMP threads sleep instead of spinning between parallel regions: with update_threads > 1
# spinning threads took the cores from each other (and from the rollout) whenever the machine
# was busy (docs/training.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("MKL_NUM_THREADS", "1")

from train.common.config import ConfigError, TrainConfig, config_data, parse_config
from train.common.files import RunFolderError
from train.common.runs import FINAL_MODEL, RunKind
from train.common.runs import prepare_run as prepare_run_folder

# the parts (train/sb3/), importable from the front door as before
from train.sb3.evaluation import describe_eval, evaluate_against, final_evaluation  # noqa: E402
from train.sb3.export import export_ppo_run  # noqa: E402
from train.sb3.model import (  # noqa: E402
    build_model,
    init_policy_from,
    load_policy_state,
    load_trained_model,
    make_snapshot,
    policy_spec,
    wrap_features,
)
from train.sb3.trainer import Trainer  # noqa: E402

__all__ = [
    "PPO_RUN",
    "Trainer",
    "build_model",
    "config_data",
    "describe_eval",
    "evaluate_against",
    "export_ppo_run",
    "final_evaluation",
    "init_policy_from",
    "load_policy_state",
    "load_trained_model",
    "main",
    "make_snapshot",
    "policy_spec",
    "prepare_run",
    "wrap_features",
]


# ----------------------------------------------------------------- the run folder


def holds_a_run(run_dir: Path) -> bool:
    """A folder holds a run once it has a complete checkpoint or a final model."""
    from train.sb3.checkpoint import CHECKPOINTS

    return (run_dir / FINAL_MODEL).is_file() or CHECKPOINTS.latest(run_dir) is not None


def _refuse_old_format(run_dir: Path) -> None:
    from train.sb3.checkpoint import old_format_checkpoints

    if old_format_checkpoints(run_dir):
        raise RunFolderError(
            f"{run_dir} holds checkpoints in the earlier pickled format (state.pkl), which "
            "are not loaded (they could run code); train into another --out"
        )


def _checkpoint_config(run_dir: Path) -> tuple[str, dict[str, Any]] | None:
    """The config the latest checkpoint was made with (itself checked to be a valid config)."""
    from train.sb3.checkpoint import CHECKPOINTS, read_checkpoint_state

    ckpt = CHECKPOINTS.latest(run_dir)
    if ckpt is None:
        return None
    name = f"checkpoint {ckpt.name}"
    theirs = read_checkpoint_state(ckpt)["config"]
    if not isinstance(theirs, dict):
        raise RunFolderError(f"--resume: {name} does not record its config")
    parse_config(theirs, name)
    return name, theirs


def _init_from_exists(cfg: TrainConfig) -> None:
    if cfg.init_from is not None and not Path(cfg.init_from).is_file():
        raise RunFolderError(f"init_from: no file at {cfg.init_from}")


PPO_RUN = RunKind(
    kind="ppo",
    command="python train/ppo.py",
    schema=TrainConfig,
    length="total_steps",
    holds_a_run=holds_a_run,
    example="configs/2p.yaml",
    stale_files=("eval_history.json", "timing.json", "warmstart.json", "final_eval.json"),
    may_change=("out", "progress_bar"),
    recorded_config=_checkpoint_config,
    check_folder=_refuse_old_format,
    check_config=_init_from_exists,
)


def prepare_run(
    config: str | None,
    out: str | None,
    seed: int | None,
    total_steps: int | None,
    resume: bool,
) -> tuple[TrainConfig, Path]:
    """The config and the run folder of a command line (``train.common.runs.prepare_run``): a
    resumed run may only change ``total_steps``; a folder a killed run left before its first
    checkpoint starts over."""
    return prepare_run_folder(PPO_RUN, config, out, resume, seed=seed, total_steps=total_steps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Train a Rack-O bot with MaskablePPO + self-play.")
    parser.add_argument("--config", help="YAML config (configs/2p.yaml, configs/smoke.yaml, ...)")
    parser.add_argument("--seed", type=int, help="override the config's seed")
    parser.add_argument("--total-steps", type=int, help="override total env steps")
    parser.add_argument("--out", help="override the run folder")
    parser.add_argument(
        "--resume", action="store_true", help="continue the run in --out (or the config's out)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        cfg, run_dir = prepare_run(args.config, args.out, args.seed, args.total_steps, args.resume)
        if args.no_progress:
            cfg = cfg.model_copy(update={"progress_bar": False})
        Trainer(cfg, run_dir, args.resume).run()
    except (ConfigError, RunFolderError, FileNotFoundError) as exc:
        print(f"ppo: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
