"""``agents.load(spec)``: one entry point for built-in bots, users' bot classes and bot files."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.base import Bot
from agents.function_bot import FunctionBot, is_act_function
from racko_env.config import RulesConfig
from racko_env.rules import MAX_PLAYERS, SOLITAIRE


def _lazy(path: str) -> Callable[..., Bot]:
    """The bot class at ``module:Class``, imported when a bot is first built (``agents`` imports
    cheaply); it takes every offered keyword (``_accepted``), as the built-in bots do."""

    def build(**kw: Any) -> Bot:
        module, _, name = path.partition(":")
        return getattr(importlib.import_module(module), name)(**kw)

    return build


_search = _lazy("agents.search:SearchBot")
BUILTIN_BOTS: dict[str, Callable[..., Bot]] = {
    "random": _lazy("agents.random_bot:RandomBot"),
    "heuristic": _lazy("agents.heuristic:HeuristicBot"),
    "expert": _lazy("agents.expert:ExpertBot"),
    "search": _search,
}
BOT_FILE_SUFFIXES = (".onnx",)
SEARCH_WITH_OPTIONS = "search:"  # the search bot with options, e.g. search:worlds=32


def is_builtin_spec(spec: str) -> bool:
    """A built-in bot's name, or the search bot with options: never a student's ``module:Class``."""
    return spec in BUILTIN_BOTS or spec.startswith(SEARCH_WITH_OPTIONS)


# Trained bots shipped in agents/pretrained/, loaded by name (each plays one player count).
SHIPPED_BOTS: dict[str, Path] = {
    f"racko_{n}p": Path(__file__).with_name("pretrained") / f"racko_{n}p.onnx" for n in (2, 3, 4)
}


def load(
    spec: str | Path | Bot, num_players: int = 2, *, seed: int | None = None, **rules_options: Any
) -> Bot:
    """A bot for ``num_players`` under the given rules options; ``seed`` makes random bots
    reproducible.

    ``spec``: a built-in name (``"random"``, ``"heuristic"``, ``"expert"``, ``"search"`` or
    ``"search:worlds=32,..."``), a shipped bot's name (``"racko_2p"``, ``"racko_3p"``,
    ``"racko_4p"``), ``"module:Class"`` (a user's class, given the keywords its constructor takes;
    the module is also looked for in the current folder), ``"module:function"`` (an act function,
    ``agents.function_bot``), the path of a bot file (``.onnx`` with its ``.json``) or a bot object.
    Raises ValueError for a bad name, player count or rules option, FileNotFoundError for a missing
    bot file, ``agents.onnx_bot.BotFileError`` for one that does not fit, and
    ``agents.extras.MissingExtraError`` (the 'bots' extra) without onnxruntime.
    """
    if isinstance(num_players, bool) or not isinstance(num_players, int):
        raise ValueError(
            f"num_players must be an int from {SOLITAIRE} to {MAX_PLAYERS}, got {num_players!r}"
        )
    if not SOLITAIRE <= num_players <= MAX_PLAYERS:
        raise ValueError(
            f"num_players must be from {SOLITAIRE} to {MAX_PLAYERS}, got {num_players}"
        )
    RulesConfig.from_dict({"num_players": num_players, **rules_options})  # names bad options
    if _is_bot(spec):
        return spec  # type: ignore[return-value]
    if isinstance(spec, Path):
        return _load_file(spec, num_players, rules_options)
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"bot spec must be a non-empty string, a path or a Bot, got {spec!r}")
    if spec in BUILTIN_BOTS:
        factory = BUILTIN_BOTS[spec]
        return factory(
            **_accepted(factory, {"num_players": num_players, "seed": seed, **rules_options})
        )
    if spec.startswith(SEARCH_WITH_OPTIONS):
        from agents.search import parse_options

        offered = {"num_players": num_players, "seed": seed, **rules_options}
        options = parse_options(spec[len(SEARCH_WITH_OPTIONS) :])
        return _search(**{**_accepted(_search, offered), **options})
    if spec in SHIPPED_BOTS:
        return _load_file(SHIPPED_BOTS[spec], num_players, rules_options)
    if spec.lower().endswith(BOT_FILE_SUFFIXES) or "/" in spec or "\\" in spec:
        return _load_file(Path(spec), num_players, rules_options)
    if ":" in spec:
        return _load_class(spec, num_players, seed, rules_options)
    raise ValueError(
        f"unknown bot {spec!r}; known bots are {sorted(BUILTIN_BOTS) + sorted(SHIPPED_BOTS)}, or give a 'module:Class' "
        f"path to your own bot class (or 'module:act', your act function), or the path of an exported bot file ({', '.join(BOT_FILE_SUFFIXES)})"
    )


def _is_bot(obj: Any) -> bool:
    return not isinstance(obj, str | Path) and callable(getattr(obj, "act", None))


def _load_file(path: Path, num_players: int, rules_options: dict[str, Any]) -> Bot:
    if not path.exists():
        raise FileNotFoundError(f"bot file {str(path)!r} does not exist")
    if path.suffix.lower() not in BOT_FILE_SUFFIXES:
        raise ValueError(
            f"bot file {str(path)!r} is not a supported bot file; expected one of {BOT_FILE_SUFFIXES}"
        )
    from agents.onnx_bot import load_onnx_bot  # numpy only; onnxruntime is checked inside

    return load_onnx_bot(str(path), num_players=num_players, **rules_options)


def _load_class(
    spec: str, num_players: int, seed: int | None, rules_options: dict[str, Any]
) -> Bot:
    module_name, _, class_name = spec.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"bot class path {spec!r} must look like 'module:Class'")
    try:
        module = _import_user_module(module_name)
    except ImportError as err:
        raise ValueError(f"cannot import module {module_name!r} of bot {spec!r}: {err}") from err
    target: Any = module
    for part in class_name.split("."):
        if not hasattr(target, part):
            raise ValueError(
                f"module {module_name!r} has no attribute {class_name!r} (bot {spec!r})"
            )
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"bot {spec!r} is not a class, a factory or an act function")
    if is_act_function(target):  # Kaggle's style: def act(observation) -> int
        return FunctionBot(target, spec, num_players, **rules_options)
    offered = {"num_players": num_players, "seed": seed, **rules_options}
    bot = target(**_accepted(target, offered))
    if not callable(getattr(bot, "act", None)):
        raise ValueError(f"bot {spec!r} has no act(observation) method")
    return bot


def _import_user_module(module_name: str) -> Any:
    """Import a user's bot module; one not on the path is looked for in the current folder.

    The ``racko`` console command does not put the current folder on ``sys.path`` (so a user's own
    ``train.py`` or ``agents.py`` cannot shadow the toolkit), yet ``racko evaluate --bots
    my_bot:Bot`` should find ``my_bot.py`` where it is run. The folder is added only while the
    module is imported, and at the end of the path, so it never shadows an installed module.
    """
    top = module_name.partition(".")[0]
    if top in sys.modules or importlib.util.find_spec(top) is not None:
        return importlib.import_module(module_name)
    here = os.getcwd()
    importlib.invalidate_caches()  # a bot file written a moment ago (racko new-bot) is seen
    sys.path.append(here)
    try:
        return importlib.import_module(module_name)
    finally:
        if sys.path and sys.path[-1] == here:
            sys.path.pop()


def _accepted(factory: Callable[..., Any], offered: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments among ``offered`` that the constructor takes (all with **kwargs)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return {k: v for k, v in offered.items() if k != "seed" or v is not None}
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return {k: v for k, v in offered.items() if k in names}
