"""The main job, ``python train/ppo.py --config configs/2p.yaml``: ``train.sb3.run``."""

from train.sb3.run import main

if __name__ == "__main__":
    raise SystemExit(main())
