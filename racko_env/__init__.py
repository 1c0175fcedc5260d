"""racko_env: the Rack-O card game as a rules engine and PettingZoo / Gymnasium environments.

The rules engine (``RackoGame``, ``RulesConfig``, ``rules``) needs only the standard library; the
environments need numpy, gymnasium and pettingzoo, and are registered on import:
``pettingzoo.make("aec", "racko/racko-v1")``, ``gymnasium.make("racko/Racko-v1")`` (the
single-agent view, ``racko_env.gym_env``) and ``gymnasium.make_vec("racko/Racko-v1", num_envs=N,
vectorization_mode="vector_entry_point")`` (the batched engine with its opponents inside,
``racko_env.vector_env.RackoVectorEnv``, imported only when asked for; its bots and features come
from the layer above through the bot resolver, ``racko_env.opponents``). ``gymnasium.make("racko/RackoSolitaire-v0")`` is one
player going for Rack-O in the fewest turns (``racko_env.solitaire_env``; small sizes solved
exactly by ``racko_env.solitaire``).
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
    "racko_v1",
    "rules",
]
__version__ = "0.2.0"


def _register() -> None:
    """The ids (PettingZoo / Gymnasium convention: a changed observation is a new env version,
    and only the newest is shipped)."""
    try:
        import pettingzoo
    except ImportError:  # the rules engine works without the environment dependencies
        return
    if "racko/racko-v1" not in pettingzoo.aec_registry:
        pettingzoo.register("aec", "racko/racko-v1", entry_point="racko_env.racko_v1:env")
    import gymnasium

    if "racko/Racko-v1" not in gymnasium.registry:
        gymnasium.register(
            id="racko/Racko-v1",
            entry_point="racko_env.gym_env:RackoGymEnv",
            vector_entry_point="racko_env.vector_env:RackoVectorEnv",
            kwargs={"observation_version": 2},
        )
    if "racko/RackoSolitaire-v0" not in gymnasium.registry:  # one player, fewest turns
        gymnasium.register(
            id="racko/RackoSolitaire-v0",
            entry_point="racko_env.solitaire_env:RackoSolitaireEnv",
            vector_entry_point="racko_env.solitaire_vector:SolitaireVectorEnv",
        )


def __getattr__(name: str):
    if name == "racko_v1":  # imported lazily: the engine alone needs no numpy/gym
        import importlib

        return importlib.import_module(f"racko_env.{name}")
    raise AttributeError(f"module 'racko_env' has no attribute {name!r}")


_register()
