"""The parts of ``train/rllib_ppo.py`` (PPO on Ray RLlib): its config schema (``config``), the
multi-agent env over ``racko_v0`` (``env``) and the action-masking RLModule (``module``)."""
