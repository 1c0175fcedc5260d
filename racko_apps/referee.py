"""Duplicate matches where a misbehaving bot forfeits the round instead of stopping everything.

``racko_eval.tournament`` plays duplicate deals and stops at the first illegal move or exception, which
is right for evaluating bots the user trusts. The grader and the league play students' bots, so
here each (deal, seating) is played on its own: a bot that crashes, hangs, prints garbage or plays
an illegal action loses that round (its opponents share the win) and the failure becomes one line
of the report. After ``max_forfeits`` forfeits a bot's remaining rounds in the match are forfeited
unplayed, so a bot that hangs on every move costs seconds, not hours.

Deals, seatings and per-deal seeding are ``racko_eval.tournament``'s (no torch on this path), so a
match here and a ``racko evaluate`` tournament with the same seed deal the same cards.

With ``record_dir`` every game played is written there as a record (docs/records.md), its path
kept in the round's row and named in the forfeit's line, so a report can link each forfeit and
each lost round to a game the student can step through (``racko replay``, or the web page).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.base import Bot
from agents.extras import require
from agents.loader import BOT_FILE_SUFFIXES, is_builtin_spec
from racko_apps.referee_book import Book, Job, MatchResult, Strikes, reason
from racko_apps.sandbox import DEFAULT_ALLOW, BotFailureError, Limits, SandboxedBot
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
    """An exported bot's file (``NAME.onnx``, its manifest beside it): someone else's graph, as
    untrusted as their Python code (a shipped bot's name, ``racko_2p``, is the toolkit's own)."""
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
    """A sandbox (not started) for a ``module:Class`` in ``folder`` or a bot file (a path,
    relative to ``folder``): the child loads the file and runs its graph, under the same move
    limit, clock and memory limit as Python code, showing it only the file and its manifest.
    ``isolation``: the backend (racko_apps.sandbox.ISOLATIONS); None: bubblewrap with
    ``isolate``, else none."""
    label, exposed = label or spec, None
    if is_bot_file_spec(spec):
        require("onnxruntime", "bots", "playing an exported .onnx bot")  # the one-line hint
        path = (Path(folder) / spec).resolve()
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

    ``bots`` are specs or bot objects (sandboxes); ``strikes[i]`` counts bot i's forfeits (pass
    shared ones to carry a count across matches; default: 3 per bot). ``record_dir`` gets a
    record of every game played (``deal0000-seating0.json``...). Never raises for a bot's
    misbehaviour: it is recorded as a forfeit.

    ``tables`` > 1 plays that many rounds side by side, each sandboxed bot answering the moves of
    all of them in one exchange with its sandbox, with a bot of its own at every table
    (``racko_apps.lockstep``): the same games and results as one round at a time for bots
    whose state is their own object's, at a fraction of the cost per move.
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
        from racko_apps.lockstep import play_lockstep

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
