"""Bot names (``"heuristic"``, ``"bot.onnx"``, ...) for the single-agent view, resolved from above.

``racko_env`` sits below the bots (``agents``) and never imports them, not even inside a function:
the engine and the environments must work, and be understood, without the layer that plays them.
Yet ``gymnasium.make("racko/Racko-v0", opponents=["heuristic"])`` after ``import racko_env`` alone is
what users write. So a package that provides bots names a *resolver* under the Python entry point
group ``racko.bots`` (racko's own ``pyproject.toml`` names ``agents.loader:load``), and the view asks
it to turn a name into a bot. A resolver is ``resolver(spec, num_players=n, **rules_options) -> bot``.

A package can also call ``register_resolver`` at import (``agents`` does), so a source checkout
whose installed metadata is older than its ``pyproject.toml`` still resolves names once ``agents``
has been imported. Registered resolvers come first, then the entry points by name; the first one
is used.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

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
