"""Export a PPO run folder as a bot file: ``python train/export.py RUN_DIR``.

The run's ``config.yaml`` says which trainer made it (``kind: ppo``, from ``train/ppo.py``); the
exporter rebuilds the policy from the validated config and the run's data-only weights
(``final_model.pt`` or the newest checkpoint), checks the ONNX graph against the policy on
``--check`` observations and writes ``RUN_DIR/bot.onnx`` + ``bot.json``. Nothing is guessed from
the files on disk and nothing is unpickled. RLlib runs export themselves when they finish
(``train/rllib_ppo.py``).

The graph-building pieces live in ``train.common.onnx_export`` (and, for SB3 models,
``train.sb3.export``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from train.common.config import read_yaml
from train.common.files import RunFolderError
from train.common.front_door import fail, user_errors

KINDS = ("ppo",)


def run_kind(run_dir: str | Path) -> str:
    """The ``kind`` the trainer wrote into the run's ``config.yaml`` (checked to be exportable)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunFolderError(f"run folder not found: {run_dir}")
    path = run_dir / "config.yaml"
    if not path.is_file():
        raise RunFolderError(f"{run_dir} is not a run folder: it has no config.yaml")
    kind = read_yaml(path).get("kind")
    if kind not in KINDS:
        raise RunFolderError(
            f"{path}: kind must be one of {list(KINDS)} (a run of train/ppo.py), got {kind!r}"
        )
    return kind


def export_run(run_dir: str | Path, check: int = 300) -> tuple[Path, Path]:
    """Export a PPO run folder; returns the bot file paths."""
    run_kind(run_dir)
    from train.sb3.export import export_ppo_run

    return export_ppo_run(Path(run_dir), check)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", help="a folder written by train/ppo.py")
    parser.add_argument("--check", type=int, default=300, help="observations to verify (0: skip)")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    try:
        onnx_path, json_path = export_run(args.run_dir, args.check)
    except user_errors() as exc:
        return fail("export", exc)
    print(f"wrote {onnx_path} and {json_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
