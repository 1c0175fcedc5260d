"""``run_league``: a league from its folder to its report.

Find the bots (racko_apps.league.submissions), check what they need, open the record
(racko_apps.league.record), load every bot not known to load, play what the schedule asks for
(racko_apps.league.rounds), and write the standings (racko_apps.league.report).
"""

from __future__ import annotations

import itertools
import math
import os
import secrets
from dataclasses import fields
from pathlib import Path
from typing import Any

from agents.extras import require
from racko_apps.league.clock import DEFAULT_SECONDS_PER_ROUND
from racko_apps.league.pool import Contestant, LoadJob, LocalPool, Play, RayPool, try_load
from racko_apps.league.record import Record, recorded_settings
from racko_apps.league.report import write_grades, write_reports
from racko_apps.league.rounds import Plan, adaptive, round_robin
from racko_apps.league.stopped import Progress, stopped_sure, stopped_text
from racko_apps.league.stopped import report as make_report
from racko_apps.league.submissions import Entry, Exported, league_entries
from racko_apps.league.workqueue import Pairer, clock
from racko_apps.sandbox.bwrap import check_isolation
from racko_apps.sandbox.isolation import ISOLATIONS, NOT_ISOLATED, choose_isolation
from racko_apps.sandbox.jit import jit_cache
from racko_apps.sandbox.toolkit import DEFAULT_ALLOW, check_allow
from racko_apps.sandbox.wire import Limits
from racko_env.config import RulesConfig

SCHEMA = "racko-league/1"
PLAYERS = 2  # the default
PLAYER_COUNTS = (2, 3, 4)
SCHEDULES = ("adaptive", "round-robin")
# The adaptive schedule's defaults: a 95% interval of ± 3 rating points (a bot starts at
# 25 ± 16.3), at most 30 pairings asked for per bot, and a budget of an hour per run.
DEFAULT_TARGET = 3.0
DEFAULT_MAX_PAIRINGS = 30
DEFAULT_BUDGET_MINUTES = 60.0
# Rounds of a pairing played side by side (referee.lockstep): a sandboxed bot's cost is per
# exchange with its sandbox, and 16 bot objects fit its memory limit easily.
DEFAULT_TABLES = 16


def _files(e: Entry) -> list[str]:
    """The names of a bot's files in its folder (what travels with a Ray job)."""
    if e.path is None:
        return []
    if e.kind == "onnx":
        return [e.path.name, e.path.with_suffix(".json").name]
    if e.path.is_dir():
        root = e.path.parent
        return [str(p.relative_to(root)) for p in sorted(e.path.rglob("*")) if p.is_file()]
    return [e.path.name]


def _entries(
    folder: Path, baselines: list[str], export: list[Exported] | None
) -> tuple[list[Entry], list[str]]:
    """The league's bots (the folder's or a Gradescope export's, with the baselines) and the
    lines of what is left out."""
    if export is None:
        return league_entries(folder, baselines)
    bots = [s.bot for s in export if s.bot is not None]
    skipped = [f"{s.alias}: {s.why}" for s in export if s.bot is None]
    entries, _ = league_entries(None, baselines, bots)
    return entries, skipped


def _home(e: Entry, folder: Path) -> Path:
    """The folder a bot plays from: its own file's, else the league's."""
    return (e.path.parent if e.path is not None else folder).resolve()


def _rules(players: int, rules: dict[str, Any] | None) -> dict[str, Any]:
    """The rules options that differ from the defaults, checked (a one-line ValueError)."""
    if players not in PLAYER_COUNTS:
        raise ValueError(f"players must be one of {PLAYER_COUNTS}, got {players!r}")
    if (rules or {}).get("partners"):
        raise ValueError("a league rates each bot on its own: partners is not supported")
    config = RulesConfig(num_players=players, **dict(rules or {}))
    default = RulesConfig(num_players=players)
    return {
        f.name: getattr(config, f.name)
        for f in fields(RulesConfig)
        if f.name != "num_players" and getattr(config, f.name) != getattr(default, f.name)
    }


def _check(folder: Path, schedule: str, tables: Any, budget_minutes: Any) -> None:
    """One-line errors for settings no league can run with."""
    if not isinstance(tables, int) or isinstance(tables, bool) or tables < 1:
        raise ValueError(f"tables must be a positive integer, got {tables!r}")
    if budget_minutes is not None and not (
        isinstance(budget_minutes, int | float) and 0 <= budget_minutes < float("inf")
    ):
        raise ValueError(f"budget_minutes must be a number of minutes >= 0, got {budget_minutes!r}")
    if not folder.is_dir():
        raise FileNotFoundError(f"folder {str(folder)!r} does not exist")
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; choose from {', '.join(SCHEDULES)}")


def _needs(entries: list[Entry], isolate: bool, isolation: str | None) -> tuple[str, str | None]:
    """What the bots need, checked before anything is played: the isolation they run under and
    the warning every report states (None under bubblewrap)."""
    sandboxed = any(e.kind != "builtin" for e in entries)
    if isolation is None:
        isolation = "bwrap" if isolate else "none"
        warning = None if isolate else NOT_ISOLATED
        if isolate and sandboxed:
            check_isolation()
    elif isolation not in ("auto", *ISOLATIONS):
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)} or auto")
    elif sandboxed:
        isolation, warning = choose_isolation(isolation)
    else:  # only built-in bots: nothing runs in a sandbox
        isolation, warning = "none", None
    if isolation != "none" and any(e.kind == "python" for e in entries):
        jit_cache()  # the compiled planner, once here for every worker's sandboxes (sandbox.py)
    if any(e.kind == "onnx" for e in entries):
        require("onnxruntime", "bots", "playing an exported .onnx bot")
    return isolation, warning


def _load(
    record: Record,
    pool: LocalPool | RayPool,
    entries: list[Entry],
    contestants: dict[str, Contestant],
    play: Play,
    players: int,
) -> tuple[list[Entry], list[str]]:
    """The bots that load (those not known to are started once), and a line for each that
    does not."""
    known = record.loaded()
    checks = [
        LoadJob(i, contestants[e.key], play, players)
        for i, e in enumerate(entries)
        if e.key not in known
    ]
    failed: dict[int, str | None] = {}
    waiting = iter(checks)
    for job in itertools.islice(waiting, pool.capacity):  # no more in flight than workers
        pool.submit(try_load, job)
    while len(failed) < len(checks):
        index, why = pool.next()
        failed[index] = why
        if (job := next(waiting, None)) is not None:
            pool.submit(try_load, job)
    record.mark_loaded([entries[i].key for i, why in failed.items() if why is None])
    playing = [e for i, e in enumerate(entries) if failed.get(i) is None]
    lines = [
        f"{e.label}: does not load: {failed[i]}" for i, e in enumerate(entries) if failed.get(i)
    ]
    return playing, lines


def choose_seed(seed: int | None, db: Path) -> tuple[int, bool]:
    """The deals' seed and whether it is secret: ``seed`` when given (practice), else the
    record's own, else fresh entropy (kept in the record and league.json, the teacher's, never
    in league.md or league.html)."""
    if seed is not None:
        return seed, False
    settings = recorded_settings(db)
    if settings is not None and isinstance(settings.get("seed"), int):
        return settings["seed"], bool(settings.get("secret", True))
    return secrets.randbits(63), True


def _config(
    plan: Plan, play: Play, folder: Path, record: Record, adaptive_run: bool
) -> dict[str, Any]:
    """The report's ``config``: what the league was played with."""
    return {
        "players": plan.players,
        **({"rules": play.rules} if play.rules else {}),
        "rounds": plan.rounds,
        "seed": plan.seed,
        "folder": str(folder),
        "db": str(record.path),
        "schedule": plan.schedule,
        **(
            {
                "target": plan.target,
                "max_pairings": plan.max_pairings,
                "budget_minutes": plan.budget_minutes or None,
            }
            if adaptive_run
            else {}
        ),
        "move_seconds": play.limits.move_seconds,
        "round_seconds": play.limits.round_seconds,
        "pairing_seconds": play.pairing_seconds,
        "tables": play.tables,
        "isolation": play.isolation,
        "allow": list(play.allow),
    }


def _play(
    pool: LocalPool | RayPool,
    record: Record,
    entries: list[Entry],
    folder: Path,
    plan: Plan,
    play: Play,
    say: tuple[Any, bool],
    times: tuple[float, float],
    got: Progress,
) -> dict[str, Any] | None:
    """Load the bots, then play what the schedule asks for, keeping in ``got`` the bots that
    play, the lines of those that do not load and the pairer; (adaptive) how sure the ratings
    are."""
    log, progress = say
    contestants = {
        e.key: pool.contestant(e.label, e.spec, e.kind, _home(e, folder), _files(e))
        for e in entries
    }
    playing, got.failed = _load(record, pool, entries, contestants, play, plan.players)
    got.playing = playing
    pairs = got.pairs = Pairer(record, playing, pool, contestants, plan, play, log, progress)
    sure = None
    if plan.schedule == "round-robin":
        round_robin(pairs, playing, log, plan.players)
    else:
        sure = adaptive(pairs, playing, plan, times[1], log)
        log(f"league: {sure['stopped']} ({(clock() - times[0]) / 60:.1f} min)")
    return sure


def run_league(
    folder: Path,
    *,
    rounds: int = 50,
    seed: int | None = None,
    db: Path | None = None,
    out: Path | None = None,
    baselines: list[str] | None = None,
    limits: Limits | None = None,
    max_forfeits: int = 3,
    log: Any = print,
    isolate: bool = True,
    record_dir: Path | None = None,
    schedule: str = "adaptive",
    target: float = DEFAULT_TARGET,
    max_pairings: int = DEFAULT_MAX_PAIRINGS,
    workers: int | None = None,
    address: str | None = None,
    progress: bool = False,
    tables: int = DEFAULT_TABLES,
    budget_minutes: float | None = DEFAULT_BUDGET_MINUTES,
    pairing_seconds: float | None = None,
    export: list[Exported] | None = None,
    players: int = 2,
    rules: dict[str, Any] | None = None,
    isolation: str | None = None,
    allow: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Play the pairings the schedule asks for that are not in the record yet, then write
    league.md/.json/.html to ``out``. The keywords are ``racko league``'s flags
    (docs/coursework/league.md), and:

    ``isolate``: run sandboxed bots under bubblewrap (IsolationUnavailableError where it
    cannot); ``isolation`` (sandbox.isolation.ISOLATIONS or ``auto``) overrides it, and every
    report states anything weaker. ``budget_minutes`` (adaptive only; 0 or None: none): the
    pairing rounds are cut to what fits in the rest of it at this run's pace, and no result is
    waited for past it. ``export``: the submissions of a Gradescope export play instead of the
    folder's, under aliases, and ``grades.csv`` is written beside the report."""
    _check(folder, schedule, tables, budget_minutes)
    db = db or folder / "league.sqlite"
    seed, secret = choose_seed(seed, db)
    started = clock()
    deadline = started + 60.0 * budget_minutes if budget_minutes else float("inf")
    entries, skipped = _entries(folder, list(baselines or []), export)
    chosen, warning = _needs(entries, isolate, isolation)
    rules = _rules(players, rules)
    plan = Plan(schedule, rounds, seed, target, max_pairings, budget_minutes, players)
    if pairing_seconds is None:  # the default: per round each bot plays in a pairing
        pairing_seconds = DEFAULT_SECONDS_PER_ROUND * rounds * math.factorial(players)
    allowed = check_allow(DEFAULT_ALLOW if allow is None else allow)
    limits = limits or Limits()
    play = Play(limits, rules, pairing_seconds, max_forfeits, chosen, tables, record_dir, allowed)
    settings = {"players": players, "rounds": rounds, "seed": seed}
    record = Record(db, {**settings, **({"rules": rules} if rules else {})})
    head = {
        **({} if warning is None else {"isolated": chosen != "none", "warning": warning}),
        "schema": SCHEMA,
        "config": {
            **_config(plan, play, folder, record, schedule != "round-robin"),
            "seed_secret": secret,
        },
        "skipped": skipped,
    }
    pool: LocalPool | RayPool | None = None
    got, stop = Progress(), None
    try:
        try:
            pool = RayPool(address) if address else LocalPool(workers or os.cpu_count() or 1)
            times = (started, deadline)
            sure = _play(pool, record, entries, folder, plan, play, (log, progress), times, got)
            provisional = None
            if got.pairs is not None and got.pairs.out_of_time:
                provisional = f"the time budget of {budget_minutes:g} min was spent"
        except KeyboardInterrupt as err:  # the ranking so far, marked provisional
            stop, provisional = err, stopped_text(err)
            if pool is not None:
                pool.close()  # the pairings in flight end with their workers
            playing = got.bots(entries, record)
            sure = (
                None
                if schedule == "round-robin"
                else stopped_sure(record, playing, plan, provisional)
            )
        report = make_report(record, entries, got, sure, provisional, head)
    finally:
        if pool is not None:
            pool.close()
        record.close()
    write_reports(out or folder, report)
    if export is not None:
        write_grades(out or folder, report, export)
    if stop is not None:
        stop.provisional = (out or folder) / "league.md"  # type: ignore[attr-defined]
        raise stop
    return report
