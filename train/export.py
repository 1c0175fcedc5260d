"""Export a PPO run folder as a bot file: ``python train/export.py RUN_DIR``.

The policy is rebuilt from the run's validated ``config.yaml`` (``kind: ppo``) and its data-only
weights (``final_model.pt`` or the newest checkpoint), checked against the ONNX graph on
``--check`` observations and written as ``RUN_DIR/bot.onnx`` + ``bot.json``. RLlib runs export
themselves when they finish."""

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
