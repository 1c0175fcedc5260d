"""Rack-O on other RL libraries' PettingZoo wrappers, with no adapter of racko's own, each run as
``python train/examples/NAME.py``: TorchRL's masked PPO (``torchrl_ppo``, the ``torchrl`` extra)
and Tianshou's masked DQN (``tianshou_dqn``, the ``tianshou`` extra). They may import
``racko_env``, ``agents`` and ``train.common``."""
