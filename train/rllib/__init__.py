"""The parts of ``train/rllib_ppo.py`` (PPO on Ray RLlib): its config schema (``config``), the
vector path's env creator and league snapshots (``vector``: ``agents.vector_env.RackoVectorEnv``
through RLlib's single-agent env runners), the multi-agent env over ``racko_v1`` (``env``), the action-masking RLModule (``module``), the bot
files (``export``), the evaluation and its record (``evaluation``), checkpoints (``checkpoint``)
and the last phase, export and final evaluation (``finish``)."""
