"""Rack-O for many games at once in numpy: the training-speed engine (docs/environment/vector.md).

``VectorGame`` is the batched rules engine, ``Encoder`` the batched observation encoder
(bit-identical to ``racko_env.observation``) and ``VectorRacko`` adds the AEC env's episodes and
rewards; the training envs over it (``racko_env.learner_games``) seat the bots of the layer above.
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
