"""The old path of ``train.rllib.env``, kept so that RLlib checkpoints written before the move
(which record the env class and the policy mapping as ``train.rllib_env.*``) keep loading.

New code imports ``train.rllib.env``.
"""

from train.rllib.env import (
    MAIN,
    RackoMultiAgentEnv,
    agent_id,
    league_module,
    module_of,
    observation_space,
    policy_mapping_fn,
)

__all__ = [
    "MAIN",
    "RackoMultiAgentEnv",
    "agent_id",
    "league_module",
    "module_of",
    "observation_space",
    "policy_mapping_fn",
]
