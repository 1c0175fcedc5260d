"""Bot names (``"heuristic"``, ``"bot.onnx"``, ...) for the single-agent view, resolved from above.

``racko_env`` never imports the bots (``agents``), not even inside a function, yet
``gymnasium.make("racko/Racko-v1", opponents=["heuristic"])`` must work. So a package that
provides bots names a *resolver*, ``resolver(spec, num_players=n, **rules_options) -> bot``, under
the entry point group ``racko.bots`` (racko's own is ``agents.loader:load``), or registers one at
import with ``register_resolver`` (``agents`` does). Registered resolvers come first, then the
entry points by name; the first one is used.

For the batched env (``racko_env.vector_env``) a resolver may also carry (``provided``) ``batch``
(``spec, num_players, *, seed, **rules`` to the bots' vectorized twins) and ``features``, the
structured policy's (``width(config)`` checks the game, ``features(obs, num_cards)``).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import numpy as np

from racko_env.actions import NUM_ACTIONS, as_action_id

ENTRY_POINT_GROUP = "racko.bots"

Resolver = Callable[..., Any]

_registered: list[Resolver] = []
_discovered: list[Resolver] | None = None


def register_resolver(resolver: Resolver) -> None:
    """Use ``resolver`` for bot names (ahead of the entry points); registering twice is a no-op."""
    if not callable(resolver):
        raise TypeError(f"a bot resolver must be callable, got {resolver!r}")
    if resolver not in _registered:
        _registered.append(resolver)


def _entry_point_resolvers() -> list[Resolver]:
    global _discovered
    if _discovered is None:  # loading imports the providing package: do it once, when first needed
        eps = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value))
        _discovered = [ep.load() for ep in eps]
    return _discovered


def resolve(spec: str, num_players: int, **rules_options: Any) -> Any:
    """The bot named ``spec`` for this game, from the first resolver (see the module docstring).

    Raises ``LookupError`` in one line when no resolver is installed; the resolver's own errors
    (an unknown name, a missing file) pass through unchanged.
    """
    resolvers = _registered or _entry_point_resolvers()
    if not resolvers:
        raise LookupError(
            f"opponent {spec!r} is a bot name, but no bot resolver is installed (entry point group "
            f"{ENTRY_POINT_GROUP!r}): install racko (in a checkout: pip install -e .), "
            "or pass bot objects instead of names"
        )
    return resolvers[0](spec, num_players=num_players, **rules_options)


def provided(name: str) -> Any:
    """The first resolver's ``"batch"`` or ``"features"`` (the module docstring), or None."""
    resolvers = _registered or _entry_point_resolvers()
    return getattr(resolvers[0], name, None) if resolvers else None


class BotBatch:
    """Any per-game bot (``reset()``/``act(obs_dict)``) as a batch policy, row by row.

    One bot instance decides every row, so it suits bots that decide from the observation alone
    (as the ``Bot`` contract asks); ``reset`` and ``seed`` are passed on. An action that is not an
    integer (``racko_env.actions.as_action_id``) raises ``ValueError`` naming it: nothing is
    coerced.
    """

    def __init__(self, bot: Any) -> None:
        if not callable(getattr(bot, "act", None)):
            raise TypeError(
                f"opponent {bot!r} is neither a bot name nor a bot (reset/act or act_batch)"
            )
        self.bot = bot
        self.name = getattr(bot, "name", type(bot).__name__)

    def reset(self) -> None:
        if callable(getattr(self.bot, "reset", None)):
            self.bot.reset()

    def seed(self, seed: int | None) -> None:
        if callable(getattr(self.bot, "seed", None)):
            self.bot.seed(seed)

    @property
    def rng(self) -> Any:
        """The bot's random generator, if it has one (saved with an env's state)."""
        return getattr(self.bot, "rng", None)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs)
        masks8 = np.asarray(masks).astype(np.int8).reshape(len(obs), NUM_ACTIONS)
        out = np.empty(len(obs), dtype=np.intp)
        for i, (o, m) in enumerate(zip(obs, masks8, strict=True)):
            action = self.bot.act({"observation": o, "action_mask": m})
            try:
                out[i] = as_action_id(action)
            except ValueError as err:
                raise ValueError(f"played {action!r}: {err}") from None
        return out
