"""Rack-O bots behind one interface, and ``load`` to get one from a name, a class path or a file.

import agents
bot = agents.load("heuristic", num_players=2)
action = bot.act(env.observe(agent))      # {"observation", "action_mask"} of that seat
"""

from __future__ import annotations

from agents.base import Bot
from agents.loader import BUILTIN_BOTS, StructuredFeatures, load, load_batched
from racko_env.opponents import register_resolver

load.batch, load.features = load_batched, StructuredFeatures()  # racko_env.opponents.provided

# The entry point in pyproject.toml does this for an installed racko; registering here too keeps a
# checkout with older installed metadata working once agents is imported.
register_resolver(load)

__all__ = ["BUILTIN_BOTS", "Bot", "load"]
