"""Rack-O for many games at once in numpy: the training-speed engine (see ``docs/vector.md``).

``VectorGame`` is the batched rules engine, ``Encoder`` the batched observation encoder (layout v1,
bit-identical to ``racko_env.observation``), ``VectorRacko`` adds the AEC env's episodes and rewards,
and ``train.sb3.vec_env.RackoVecEnv`` (imported separately: it needs
stable-baselines3) is the single-agent SB3 ``VecEnv`` for training.
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
