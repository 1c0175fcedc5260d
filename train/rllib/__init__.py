"""The parts of ``train/rllib_ppo.py``, PPO on Ray RLlib."""
