"""A bot written as a function, Kaggle's agent style: ``def act(observation) -> int``.

``agents.load("my_bot:act")`` wraps such a function in ``FunctionBot``, so it plays wherever a
``class Bot`` does. An act function (``is_act_function``) is a plain function whose first
parameter is positional, has no default and is not named like a constructor argument
(``num_players``, ``seed``, a rules option): ``def make_bot(num_players=2)`` stays a factory. It is
called once per decision with the observation dict, and with a second positional parameter also
gets ``configuration``, a read-only mapping of ``num_players`` and the rules options, as Kaggle
passes its environment's. A function has no ``reset`` or ``seed``: a bot that remembers a round or
plays at random is a ``class Bot`` (docs/bots/writing-a-bot.md).
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable, Mapping
from dataclasses import asdict, fields
from types import MappingProxyType
from typing import Any

from agents.base import Bot
from racko_env.config import RulesConfig

# Parameter names that make a function a factory (constructed once), never an act function.
CONSTRUCTOR_ARGUMENTS = frozenset({"seed"} | {f.name for f in fields(RulesConfig)})


def _positional(func: Callable[..., Any]) -> list[inspect.Parameter] | None:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p for p in params if p.kind in kinds]


def is_act_function(target: Any) -> bool:
    """Whether ``target`` is an act function (module docstring), not a class or a factory."""
    if not inspect.isfunction(target):  # a def or a lambda; a class or a builtin is not
        return False
    positional = _positional(target)
    if not positional:
        return False
    first = positional[0]
    return first.default is inspect.Parameter.empty and first.name not in CONSTRUCTOR_ARGUMENTS


class FunctionBot(Bot):
    """An act function played as a bot (module docstring); ``name`` is the function's spec."""

    def __init__(
        self, func: Callable[..., Any], name: str, num_players: int = 2, **rules_options: Any
    ) -> None:
        if not is_act_function(func):
            raise ValueError(f"{name!r} is not a function taking the observation as its argument")
        self.func = func
        self.name = name
        config = asdict(RulesConfig.from_dict({"num_players": num_players, **rules_options}))
        self.configuration: Mapping[str, Any] = MappingProxyType(config)
        positional = _positional(func) or []
        self._takes_configuration = len(positional) >= 2

    def act(self, observation: Mapping[str, Any]) -> int:
        if self._takes_configuration:
            action = self.func(observation, self.configuration)
        else:
            action = self.func(observation)
        try:  # numpy integers become ints; anything else is returned for the caller to refuse
            return action if isinstance(action, bool) else operator.index(action)
        except TypeError:
            return action
