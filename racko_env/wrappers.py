"""PettingZoo's classic wrappers (reference: ``pettingzoo.utils.wrappers``), with their hot paths in one hop.

Each class subclasses PettingZoo's wrapper of the same name and behaves exactly like it, only
cheaper in the common case: the wrapped env's state is read on ``env.unwrapped`` (one C-level
``attrgetter``, not ``__getattr__`` after a failed lookup), methods a wrapper only passes on are
bound to the wrapped env's, and ``step``, ``observe``, ``last`` and ``agent_iter`` check the common
case (reset done, agent live, action legal) and otherwise run PettingZoo's own method unchanged.
``tests/env/test_racko_v1_fast_path.py`` checks every return value, state and error against
PettingZoo's wrappers.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.wrappers.base import BaseWrapper
from pettingzoo.utils.wrappers.order_enforcing import (
    AECOrderEnforcingIterable,
    AECOrderEnforcingIterator,
)

_STATE = (
    "agents",
    "agent_selection",
    "rewards",
    "_cumulative_rewards",
    "terminations",
    "truncations",
    "infos",
    "possible_agents",
)
# Methods that BaseWrapper only passes on to the wrapped env with the same arguments.
_PASS_THROUGH = ("observe", "action_space", "observation_space")


def _forwarding(name: str, guarded: bool) -> property:
    read = attrgetter(f"_raw_env.{name}")  # C-level lookup: this runs several times per step
    if not guarded:
        return property(read, doc=f"``{name}`` of the unwrapped env.")

    def get(self: Any) -> Any:
        if self._has_reset or name.startswith("_"):
            return read(self)
        raise AttributeError(f"{name} cannot be accessed before reset")

    return property(get, doc=f"``{name}`` of the unwrapped env.")


class _Forwarding:
    _raw_env: AECEnv

    def __init__(self, env: AECEnv, **kwargs: Any) -> None:
        self._raw_env = env.unwrapped
        super().__init__(env, **kwargs)
        self._env_step = env.step
        self._env_observe = env.observe
        for name in _PASS_THROUGH:  # a layer that only passes the call on is skipped
            if getattr(type(self), name) is getattr(BaseWrapper, name):
                setattr(self, name, getattr(env, name))


for _name in _STATE:
    setattr(_Forwarding, _name, _forwarding(_name, guarded=False))


class TerminateIllegalWrapper(_Forwarding, wrappers.TerminateIllegalWrapper):
    def observe(self, agent: Any) -> Any:
        obs = self._env_observe(agent)
        raw = self._raw_env
        if agent == raw.agent_selection:
            self._prev_obs = obs
            infos = raw.infos
            self._prev_info = infos[agent] if agent in infos else {}
        return obs

    def step(self, action: Any) -> None:
        prev = self._prev_obs
        raw = self._raw_env
        agent = raw.agent_selection
        if (
            type(prev) is dict
            and not self._terminated
            and not raw.terminations[agent]
            and not raw.truncations[agent]
        ):
            mask = prev.get("action_mask")
            if mask is not None:
                try:
                    legal = bool(mask[action])
                except Exception:  # PettingZoo's step raises it again, after its own bookkeeping
                    legal = False
                if legal:  # PettingZoo's path for a legal move of a live agent
                    self._prev_obs = None
                    self._prev_info = None
                    self._env_step(action)
                    return
        super().step(action)


class AssertOutOfBoundsWrapper(_Forwarding, wrappers.AssertOutOfBoundsWrapper):
    def step(self, action: Any) -> None:
        raw = self._raw_env
        agent = raw.agent_selection
        assert (
            action is None and (raw.terminations[agent] or raw.truncations[agent])
        ) or self.action_space(agent).contains(action), "action is not in action space"
        self._env_step(action)


class _Iterable(AECOrderEnforcingIterable):
    def __iter__(self) -> _Iterator:
        return _Iterator(self.env, self.max_iter)


class _Iterator(AECOrderEnforcingIterator):
    """PettingZoo's order-enforcing iterator, reading the unwrapped state directly (the iterator
    only exists after ``reset``, so the wrapper's before-reset guard cannot fire)."""

    def __next__(self) -> Any:
        env = self.env
        raw = env._raw_env
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        agent = raw.agent_selection
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return agent


class OrderEnforcingWrapper(_Forwarding, wrappers.OrderEnforcingWrapper):
    def step(self, action: Any) -> None:
        if self._has_reset and self._raw_env.agents:
            self._has_updated = True
            self._env_step(action)
        else:
            super().step(action)

    def observe(self, agent: Any) -> Any:
        if self._has_reset:
            return self._env_observe(agent)
        return super().observe(agent)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            return super().last(observe)
        raw = self._raw_env
        agent = raw.agent_selection
        assert agent is not None
        return (
            self._env_observe(agent) if observe else None,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )

    def agent_iter(self, max_iter: int = 2**63) -> _Iterable:
        if not self._has_reset:
            return super().agent_iter(max_iter)  # raises: reset() first
        return _Iterable(self, max_iter)


for _name in _STATE:
    setattr(OrderEnforcingWrapper, _name, _forwarding(_name, guarded=True))


def wrap_classic(env: AECEnv, illegal_reward: float = -1.0) -> AECEnv:
    """The PettingZoo classic wrapper stack: illegal moves end the game, bounds and order checked."""
    env = TerminateIllegalWrapper(env, illegal_reward=illegal_reward)
    env = AssertOutOfBoundsWrapper(env)
    return OrderEnforcingWrapper(env)
