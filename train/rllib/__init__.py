"""PPO on Ray RLlib (``run``: ``train/rllib_ppo.py``, ``racko train-rllib``) and ``racko sweep``."""
