"""One-file references to read, each run as ``python train/reference/NAME.py``: the CleanRL-style
masked PPO (``cleanrl_ppo``), the feature-based DQN and linear Q-learning (``dqn_features``,
``linear_q_features``) and the tabular baselines on solitaire (``tabular_mc``, ``tabular_sarsa``,
``tabular_q_learning``). Each is its algorithm top to bottom; what is not the algorithm (flags
from a dataclass, the tabular run's setup, its exact check) is in ``train.common``. They may
import ``racko_env``, ``agents``, ``racko_eval`` and ``train.common``."""
