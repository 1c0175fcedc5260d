"""Rack-O for many games at once in numpy: the training-speed engine (see ``docs/environment/vector.md``).

``VectorGame`` is the batched rules engine, ``Encoder`` the batched observation encoder (the
current layout, bit-identical to ``racko_env.observation``), ``VectorRacko`` adds the AEC env's episodes and rewards,
and the single-agent training envs over it live a layer up, with the bots they seat:
``agents.vector_env.RackoVectorEnv`` (Gymnasium's ``VectorEnv``, ``gymnasium.make_vec``) and
``train.sb3.vec_env.RackoVecEnv`` (SB3's ``VecEnv``), both over ``racko_env.learner_games``.
"""

from racko_env.vector.chance import ChanceSource, NumpyChance
from racko_env.vector.encode import Encoder
from racko_env.vector.engine import LEGAL, VectorGame
from racko_env.vector.env import StepResult, VectorRacko

__all__ = [
    "LEGAL",
    "ChanceSource",
    "Encoder",
    "NumpyChance",
    "StepResult",
    "VectorGame",
    "VectorRacko",
]
