"""Train a Rack-O bot with MaskablePPO and self-play: ``python train/ppo.py --config configs/2p.yaml``.

The script of the main job; its front door is ``train.sb3.run`` (also ``racko train``)."""

from __future__ import annotations

from train.common import front_door

front_door.thread_defaults()  # before numpy and torch load: they read them once

from train.sb3.run import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
