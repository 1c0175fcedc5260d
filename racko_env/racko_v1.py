"""Rack-O as a PettingZoo AEC environment, version 1 (``racko_v1``): observation layout version 2.

| Import             | ``from racko_env import racko_v1``                       |
|--------------------|----------------------------------------------------------|
| Actions            | Discrete(14)                                             |
| Parallel API       | No                                                       |
| Agents             | ``agents = ['player_0', ..., 'player_{n-1}']``           |
| Agents count       | 2-4                                                      |
| Observation shape  | (270,) float32 in [0, 1], plus a (14,) int8 action mask  |
| Registered id      | ``pettingzoo.make("aec", "racko/racko-v1")``             |

The game, the turn structure, actions, rewards, episode ends, illegal actions, arguments, reset
options and the read-only accessors are exactly ``racko_v0``'s (``help(racko_v0)`` documents them;
this env is its subclass and plays the same game for the same seed). Only the observation differs.

**Observations** are dicts ``{"observation": Box(0, 1, (270,), float32), "action_mask":
Box(0, 1, (14,), int8)}``: layout version 2 of ``racko_env.observation`` (``raw_env.obs_version``).
Its first 177 entries are version 1, the observation of ``racko_v0``, unchanged and in place; then
come the public facts version 1 left out: for every opponent slot, whether its card came from the
draw pile, the turn it last changed and the card that last came out of it, and per opponent the
discard it last passed over. A player at a real table sees all of these (every placement and every
discard happens face up); ``docs/env.md`` lists each public fact and where the observation holds it.

Bots written for version 1 (bot files exported before version 2) read version 1's view of this
vector, its first 177 entries (``racko_env.observation.view(obs, 1)``): ``agents`` does so for them.
The shipped bots read version 2: on ``racko_v0``'s narrower vector they refuse in one line.

**Version history.** v0: first release (observation layout version 1). v1: observation layout
version 2 (each opponent slot's public history appended); the game is unchanged.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv

from racko_env import racko_v0
from racko_env.wrappers import wrap_classic


class raw_env(racko_v0.raw_env):
    """``racko_v0.raw_env`` giving observation layout version 2."""

    obs_version = 2
    metadata = {**racko_v0.raw_env.metadata, "name": "racko_v1"}


def env(**kwargs: Any) -> AECEnv:
    """The environment wrapped as PettingZoo classic envs are (illegal moves end the episode)."""
    return wrap_classic(raw_env(**kwargs), illegal_reward=-1.0)
