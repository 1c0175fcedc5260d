"""Rack-O bots behind one interface, and ``load`` to get one from a name, a class path or a file.

import agents
bot = agents.load("heuristic", num_players=2)
action = bot.act(env.observe(agent))      # {"observation", "action_mask"} of that seat
"""

from __future__ import annotations

from typing import Any

from agents.base import Bot
from agents.loader import BUILTIN_BOTS, load
from racko_env.config import RulesConfig
from racko_env.opponents import register_resolver


# What the resolver hands racko_env's batched env besides per-game bots (``load.batch`` and
# ``load.features``, read by ``racko_env.opponents.provided``). Both import their module when
# first used: ``import agents`` stays cheap, and a sandboxed bot, whose allow list hides
# ``agents.batched`` and ``agents.features``, can still import ``agents``.
def load_batched(*args: Any, **kwargs: Any) -> Any:
    """``agents.batched.load_batch``: a batch policy for a bot spec."""
    from agents.batched import load_batch

    return load_batch(*args, **kwargs)


class StructuredFeatures:
    """The structured policy's flat features (``agents.batched.group_features``) and their width
    in a game's own layout."""

    def width(self, config: RulesConfig) -> int:
        from agents.features import feature_shape
        from racko_env.observation import layout_for

        return feature_shape(layout_for(config)).size

    def features(self, obs: Any, num_cards: int, layout: Any = None) -> Any:
        """Observations of ``layout`` (default the rule book's: the learner's seat asks so for
        its self-play snapshots, which read features at those sizes only)."""
        from agents.batched import group_features
        from racko_env.observation import DEFAULT

        return group_features(obs, num_cards, DEFAULT if layout is None else layout)


load.batch, load.features = load_batched, StructuredFeatures()  # racko_env.opponents.provided

# The entry point in pyproject.toml does this for an installed racko; registering here too keeps a
# checkout with older installed metadata working once agents is imported.
register_resolver(load)

__all__ = ["BUILTIN_BOTS", "Bot", "StructuredFeatures", "load", "load_batched"]
