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

from pathlib import Path

from train.common import front_door

front_door.thread_defaults()  # before numpy and torch load: they read them once

from train.distillation.run import DISTILL_RUN, record_command, train  # noqa: E402


def _train(run: front_door.Launch) -> Path:
    if not run.args.resume:  # how the run was started, for its bot's manifest
        record_command(run.run_dir, run.command)
    return train(run.cfg, run.run_dir, resume=run.args.resume)


DISTILL = front_door.FrontDoor(DISTILL_RUN, __doc__.split("\n")[0], _train)
main = DISTILL.main

if __name__ == "__main__":
    raise SystemExit(main())
