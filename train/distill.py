"""Distil the search bot into a bot file: the structured policy imitates its choices.

Expert iteration (``train/distillation/``): optionally clone ``expert`` first (cheap, so that the
network plays well from the start); then each iteration the network plays against the config's
opponent, the teacher (``search:...``, the decision-time search bot of ``agents/search.py``)
labels every decision it meets with its own choice, and the network is fitted (the project's
fitting loop) on every label so far. The result is exported like every trainer's, as
``bot.onnx`` + ``bot.json`` whose manifest holds the command that reproduces it.

    python train/distill.py --config configs/distill_2p.yaml

``--resume --out RUN_DIR`` continues after the newest finished iteration (``--iterations`` may
grow); every iteration is seeded from ``seed`` and its number.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

os.environ.setdefault("OMP_NUM_THREADS", "1")

from train.common.config import ConfigError  # noqa: E402
from train.common.files import RunFolderError  # noqa: E402
from train.distillation.run import prepare_distill_run, train  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", help="YAML config (see configs/distill_2p.yaml)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out / out")
    parser.add_argument("--seed", type=int, help="override the config's seed")
    parser.add_argument("--iterations", type=int, help="override the number of iterations")
    parser.add_argument("--out", help="override the run folder")
    args = parser.parse_args(argv)
    if args.config is None and not (args.resume and args.out):
        parser.error("give --config FILE (or --resume --out RUN_DIR)")
    command = shlex.join(["python", "train/distill.py", *argv])
    try:
        cfg, run_dir = prepare_distill_run(args, command)
        onnx_path = train(cfg, run_dir, resume=args.resume)
    except (ConfigError, RunFolderError, FileNotFoundError) as exc:
        print(f"distill: error: {exc}", file=sys.stderr)
        return 2
    print(f"exported {onnx_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
