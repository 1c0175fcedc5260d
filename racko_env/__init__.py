"""racko_env: the Rack-O card game as a rules engine and PettingZoo / Gymnasium environments.

The rules engine (``RackoGame``, ``RulesConfig``, ``rules``) needs only the standard library; the
environments need numpy, gymnasium and pettingzoo, and are registered on import:
``pettingzoo.make("aec", "racko/racko-v0")``, ``gymnasium.make("racko/Racko-v0")`` (the
single-agent view, ``racko_env.gym_env``) and ``gymnasium.make_vec("racko/Racko-v0", num_envs=N,
vectorization_mode="vector_entry_point")`` (the batched engine with its opponents inside,
``agents.vector_env.RackoVectorEnv``: named by a string, imported only when asked for, because its
bots live in ``agents``, the layer above).
"""

from racko_env import rules
from racko_env.actions import DISCARD, DRAW_PILE, KEEP, NUM_ACTIONS, TAKE_DISCARD, Phase
from racko_env.config import RulesConfig
from racko_env.engine import RackoGame, TurnRecord

__all__ = [
    "DISCARD",
    "DRAW_PILE",
    "KEEP",
    "NUM_ACTIONS",
    "TAKE_DISCARD",
    "Phase",
    "RackoGame",
    "RulesConfig",
    "TurnRecord",
    "racko_v0",
    "rules",
]
__version__ = "0.1.0"


def _register() -> None:
    try:
        import pettingzoo
    except ImportError:  # the rules engine works without the environment dependencies
        return
    if "racko/racko-v0" not in pettingzoo.aec_registry:
        pettingzoo.register("aec", "racko/racko-v0", entry_point="racko_env.racko_v0:env")
    import gymnasium

    if "racko/Racko-v0" not in gymnasium.registry:
        gymnasium.register(
            id="racko/Racko-v0",
            entry_point="racko_env.gym_env:make_env",
            vector_entry_point="agents.vector_env:RackoVectorEnv",
        )


def __getattr__(name: str):
    if name == "racko_v0":  # imported lazily so that the engine alone needs no numpy/gym
        import importlib

        return importlib.import_module("racko_env.racko_v0")
    raise AttributeError(f"module 'racko_env' has no attribute {name!r}")


_register()
