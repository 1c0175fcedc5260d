"""Self-play PPO on Ray RLlib, on one machine or a cluster: ``python train/rllib_ppo.py --config
configs/2p_rllib.yaml`` (docs/training/rllib.md).

The script of the RLlib trainer; its front door is ``train.rllib.run`` (also ``racko
train-rllib``)."""

from __future__ import annotations

from train.common import front_door

front_door.thread_defaults()  # before numpy and torch load: they read them once

from train.rllib.run import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
