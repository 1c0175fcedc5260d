"""PPO on Ray RLlib, ``python train/rllib_ppo.py --config configs/2p_rllib.yaml``: ``train.rllib.run``."""

from train.rllib.run import main

if __name__ == "__main__":
    raise SystemExit(main())
