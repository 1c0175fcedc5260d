"""Duplicate matches where a misbehaving bot forfeits the round instead of stopping everything.

``racko_eval.tournament`` stops at the first illegal move or exception, which is right for bots
the user trusts. The grader and the league play students' bots, so here a bot that crashes,
hangs, prints garbage or plays an illegal action loses that round (its opponents share the win),
and the failure becomes one line of the report. After its forfeit limit (``Strikes``) a bot's
remaining rounds are forfeited unplayed. The deals and seatings are ``racko_eval.tournament``'s:
a match here and ``racko evaluate`` with the same seed deal the same cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.base import Bot
from agents.extras import require
from agents.loader import BOT_FILE_SUFFIXES, is_builtin_spec
from racko_apps.referee.book import Book, Job, MatchResult, Strikes, reason
from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.toolkit import DEFAULT_ALLOW
from racko_apps.sandbox.wire import BotFailureError, Limits
from racko_eval import (
    BotError,
    DealPlayer,
    IllegalActionError,
    TableSetup,
    deal_seeds,
    seatings,
    tables_for,
)


def is_python_spec(spec: str) -> bool:
    """A ``module:Class`` spec (student code, to be sandboxed), not a name or a bot file."""
    return (
        ":" in spec
        and not is_builtin_spec(spec)
        and not spec.lower().endswith(".onnx")
        and "/" not in spec
        and "\\" not in spec
    )


def is_bot_file_spec(spec: str) -> bool:
    """An exported bot's file (``NAME.onnx``): someone else's graph, as untrusted as their code
    (a shipped bot's name, ``racko_2p``, is the toolkit's own)."""
    return spec.lower().endswith(BOT_FILE_SUFFIXES)


def is_sandboxed_spec(spec: str) -> bool:
    """What plays in a sandbox (racko_apps.sandbox): Python code and exported bot files."""
    return is_python_spec(spec) or is_bot_file_spec(spec)


def sandbox_for(
    spec: str,
    num_players: int,
    rules: dict[str, Any],
    *,
    folder: str | Path = ".",
    label: str | None = None,
    limits: Limits | None = None,
    isolate: bool = False,
    allow: Sequence[str] = DEFAULT_ALLOW,
    isolation: str | None = None,
) -> SandboxedBot:
    """A sandbox (not started) for a ``module:Class`` in ``folder`` or a bot file (relative to
    ``folder``; the sandbox shows it only the file and its manifest). ``isolation``: one of
    racko_apps.sandbox.isolation.ISOLATIONS; None: bubblewrap with ``isolate``, else none."""
    label, exposed = label or spec, None
    if is_bot_file_spec(spec):
        require("onnxruntime", "bots", "playing an exported .onnx bot")  # the one-line hint
        path = Path(folder).resolve() / spec  # a link is refused by the sandbox, not followed
        if not path.is_file():
            raise FileNotFoundError(f"bot file {spec!r} does not exist")
        exposed = [p for p in (path, path.with_suffix(".json")) if p.is_file()]
        spec, folder = str(path), path.parent
    return SandboxedBot(
        spec,
        folder,
        num_players,
        label=label,
        limits=limits,
        isolate=isolate,
        exposed=exposed,
        allow=allow,
        isolation=isolation,
        **rules,
    )


def seat_bot(spec: str, num_players: int, rules: dict[str, Any], **options: Any) -> str | Bot:
    """What to seat for ``spec``: a started sandbox (``sandbox_for``, with ``options``) for
    Python code and bot files, else the spec itself (built-in and shipped bots are the
    toolkit's own code and play in-process).

    Raises BotFailureError when a sandboxed bot cannot start, ValueError / FileNotFoundError /
    ImportError when any other spec cannot load (checked here, before any play).
    """
    if is_sandboxed_spec(spec):
        bot = sandbox_for(spec, num_players, rules, **options)
        bot.start()
        return bot
    import agents

    agents.load(spec, num_players, **rules)
    return spec


def play_match(
    bots: Sequence[str | Bot],
    labels: Sequence[str],
    *,
    num_players: int = 2,
    deals: int = 100,
    seed: int = 0,
    rules: dict[str, Any] | None = None,
    strikes: Sequence[Strikes] | None = None,
    record_dir: str | Path | None = None,
    tables: int = 1,
) -> MatchResult:
    """Play ``deals`` duplicate deals of single rounds at every table and seating.

    ``bots`` are specs or bot objects (sandboxes); ``strikes[i]`` counts bot i's forfeits (shared
    ones carry a count across matches; default: 3 per bot). ``record_dir`` gets a record of every
    game, linked from its row and forfeit line. ``tables`` > 1 plays that many rounds side by side
    (``racko_apps.referee.lockstep``). Never raises for a bot's misbehaviour: it is a forfeit.
    """
    rules = dict(rules or {})
    strikes = list(strikes) if strikes is not None else [Strikes(3) for _ in bots]
    setup = TableSetup(list(bots), list(labels), num_players, "round", rules)
    plan = [s for lineup in tables_for(len(bots), num_players) for s in seatings(lineup)]
    jobs: list[Job] = [
        (d, deal_seed, salt, seating)
        for d, deal_seed in enumerate(deal_seeds(seed, deals))
        for salt, seating in enumerate(plan)
    ]
    book = Book(setup, strikes, record_dir)
    if tables > 1 and all(len(set(seating)) == len(seating) for seating in plan):
        from racko_apps.referee.lockstep import play_lockstep

        play_lockstep(setup, jobs, book, tables)
        return book.close()
    player = DealPlayer(setup)
    for order, job in enumerate(jobs):
        go, recorder = book.begin(job)
        if not go:
            book.finish(order, job)
            continue
        try:
            seat_results = player.play(job[1], job[3], job[2], recorder)
        except (BotError, IllegalActionError, BotFailureError) as err:
            book.finish(order, job, None, book.culprit(err, job[3]), reason(err), recorder)
            continue
        book.finish(order, job, seat_results, recorder=recorder)
    return book.close()
