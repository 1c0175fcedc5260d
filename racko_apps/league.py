"""``racko league DIR``: duplicate matches between the bots of a folder, rated with OpenSkill.

    racko league bots/                              # the adaptive schedule, on every core
    racko league bots/ --rounds 100 --baselines random heuristic expert
    racko league bots/ --schedule round-robin       # every pair
    racko league bots/ --address auto               # the pairings as tasks on a Ray cluster

What counts as a bot in DIR (nothing else is touched):

* ``NAME.onnx`` with its manifest ``NAME.json`` beside it (an exported bot, docs/bot-format.md);
* ``NAME.py`` whose source defines a top-level ``class Bot`` (what ``racko new-bot`` writes),
  or else a top-level function ``act(observation)`` (a bot as a function, agents.function_bot),
  where NAME is a Python identifier not starting with ``test_`` or ``_``. The file is inspected,
  never imported, by the league itself.

Both kinds play sandboxed, each in its own process, isolated under bubblewrap where it sees only
its own files (``--no-isolation`` to skip, said in every report; racko_apps.sandbox), under the
same move limit, clock per round and memory limit. A pairing is ``--rounds`` duplicate deals
(each in both seatings, 2 players); a bot that breaks forfeits the round (racko_apps.referee).

Which pairings: by default rounds of pairings between bots of similar rating until every 95%
interval is narrow enough (racko_apps.league_schedule) or the run's time budget is spent
(``--budget``, an hour by default: a rerun goes on from the record), or every pair (``--schedule
round-robin``). Where: worker processes on every core, or Ray tasks (racko_apps.league_pool).
Results live in a SQLite file (``DIR/league.sqlite`` by default), one transaction per finished
pairing, written by this process alone, keyed by each bot's name and a hash of its file(s); each
pairing round's plan is recorded before it is played. A rerun plays only what is missing (a new
or changed bot, the rest of an interrupted round), and a league killed mid-run loses only the
pairings in flight. Ratings are OpenSkill (Plackett-Luce) over every recorded round, in a fixed
order, with 95% intervals (mu ± 1.96 sigma); the standings are written as Markdown, JSON and a
self-contained HTML page with a plot.
With ``--record DIR`` every game played goes to ``DIR/A-vs-B/`` as a record (docs/records.md):
each forfeit's line names its record, and ``league.json``'s ``records`` lists each bot's
forfeited and lost rounds of the pairings played in this run.
"""

from __future__ import annotations

import argparse
import ast
import base64
import hashlib
import html
import io
import json
import os
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents import BUILTIN_BOTS
from agents.extras import require
from racko_apps.league_pool import (
    Contestant,
    LoadJob,
    LocalPool,
    PairingJob,
    RayPool,
    play_pairing,
    try_load,
)
from racko_apps.league_schedule import Rated, all_pairs, how_sure, plan_round, unsettled
from racko_apps.referee import MatchResult
from racko_apps.sandbox import (
    DEFAULT_ROUND_SECONDS,
    NOT_ISOLATED,
    IsolationUnavailableError,
    Limits,
    check_isolation,
    jit_cache,
)
from racko_env.files import write_text_atomic
from racko_eval.records import safe_name

SCHEMA = "racko-league/1"
PLAYERS = 2
Z95 = 1.959964


@dataclass(frozen=True)
class Entry:
    """One bot of the league: ``label`` in tables, ``spec`` to load, ``key`` = label + hash."""

    label: str
    spec: str
    key: str
    kind: str  # python, onnx, builtin


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _top_level(path: Path) -> list[ast.stmt]:
    """The module's top-level statements, parsed, never imported ([] when it does not parse)."""
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []


def defines_bot_class(path: Path) -> bool:
    """True when the module's source has a top-level ``class Bot`` (parsed, not imported)."""
    return any(isinstance(n, ast.ClassDef) and n.name == "Bot" for n in _top_level(path))


def defines_act(path: Path) -> bool:
    """True when the module's source has a top-level ``def act`` (a bot as a function, Kaggle's
    style: agents.function_bot); parsed, not imported."""
    return any(isinstance(n, ast.FunctionDef) and n.name == "act" for n in _top_level(path))


def find_bots(folder: Path, baselines: list[str]) -> tuple[list[Entry], list[str]]:
    """The league's bots in ``folder`` (see the module docstring) plus built-in baselines, sorted
    by label; and one line per file that looks like a bot but is left out, saying why."""
    entries, skipped = [], []
    for path in sorted(folder.iterdir()):
        if path.suffix == ".onnx":
            manifest = path.with_suffix(".json")
            if not manifest.is_file():
                skipped.append(f"{path.name}: no manifest {manifest.name} beside it")
                continue
            entries.append(
                Entry(path.name, str(path), f"{path.name}@{_digest(path, manifest)}", "onnx")
            )
        elif path.suffix == ".py":
            name = path.stem
            if name.startswith(("test_", "_")) or not name.isidentifier():
                continue
            attribute = "Bot" if defines_bot_class(path) else "act" if defines_act(path) else ""
            if not attribute:
                skipped.append(f"{path.name}: defines no top-level class Bot nor function act")
                continue
            entries.append(Entry(name, f"{name}:{attribute}", f"{name}@{_digest(path)}", "python"))
    for name in baselines:
        if name not in BUILTIN_BOTS:
            raise ValueError(f"unknown baseline {name!r}; choose from {', '.join(BUILTIN_BOTS)}")
        entries.append(Entry(name, name, f"{name}@builtin", "builtin"))
    labels = [e.label for e in entries]
    for label in labels:
        if labels.count(label) > 1:
            raise ValueError(f"two bots are labelled {label!r}; rename one")
    return sorted(entries, key=lambda e: e.label), skipped


# ----------------------------------------------------------------------------- the record


def round_ranks(result: MatchResult) -> list[tuple[float, float]]:
    """Each round's rank score of bot a and of bot b (whatever their seats), in round order."""
    out = []
    for r in result.rounds:
        rank = {0: 0.0, 1: 0.0}
        for seat, bot in enumerate(r["seating"]):
            rank[bot] = r["rank"][seat]
        out.append((rank[0], rank[1]))
    return out


class Record:
    """The league's SQLite file: its settings, and one row per finished pairing with its rounds."""

    def __init__(self, path: Path, settings: dict[str, Any]) -> None:
        self.path = path
        self.conn = sqlite3.connect(path)
        with self.conn:
            self.conn.executescript(
                """
                CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS pairings (
                    a TEXT NOT NULL, b TEXT NOT NULL, a_label TEXT NOT NULL,
                    b_label TEXT NOT NULL, rounds INTEGER NOT NULL, a_wins REAL NOT NULL,
                    b_wins REAL NOT NULL, a_forfeits INTEGER NOT NULL,
                    b_forfeits INTEGER NOT NULL, forfeit_lines TEXT NOT NULL,
                    finished_at TEXT NOT NULL, PRIMARY KEY (a, b));
                CREATE TABLE IF NOT EXISTS rounds (
                    a TEXT NOT NULL, b TEXT NOT NULL, idx INTEGER NOT NULL,
                    a_rank REAL NOT NULL, b_rank REAL NOT NULL, PRIMARY KEY (a, b, idx));
                """
            )
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
        wanted = json.dumps(settings, sort_keys=True)
        if row is None:
            with self.conn:
                self.conn.execute("INSERT INTO meta VALUES ('settings', ?)", (wanted,))
        elif row[0] != wanted:
            self.conn.close()
            old = json.loads(row[0])
            diff = ", ".join(f"{k} {old.get(k)!r}" for k in settings if old.get(k) != settings[k])
            raise ValueError(
                f"{path} holds a league played with {diff}; use the same settings or another --db"
            )

    def done(self) -> set[tuple[str, str]]:
        return {(a, b) for a, b in self.conn.execute("SELECT a, b FROM pairings")}

    def schedule(self) -> dict[tuple[str, str], int]:
        """Every planned pairing and its pairing round (kept in ``meta`` as ``round/NNNNN``)."""
        rows = self.conn.execute("SELECT key, value FROM meta WHERE key LIKE 'round/%'")
        return {(a, b): int(key.split("/")[1]) for key, value in rows for a, b in json.loads(value)}

    def loaded(self) -> set[str]:
        """The bots (keys) that loaded in an earlier run (a failure is checked again: it may have
        been a machine too busy to start Python in time)."""
        return {
            k[len("loads/") :]
            for (k,) in self.conn.execute("SELECT key FROM meta WHERE key LIKE 'loads/%'")
        }

    def mark_loaded(self, keys: list[str]) -> None:
        with self.conn:
            self.conn.executemany(
                "INSERT OR IGNORE INTO meta VALUES (?, '')", [(f"loads/{k}",) for k in keys]
            )

    def plan(self, pairs: list[tuple[str, str]]) -> int:
        """Record the next pairing round's plan (before any of it is played, so that a league
        killed mid-round resumes the same round); its number."""
        rounds = set(self.schedule().values())
        number = max(rounds) + 1 if rounds else 0
        with self.conn:
            self.conn.execute(
                "INSERT INTO meta VALUES (?, ?)", (f"round/{number:05d}", json.dumps(pairs))
            )
        return number

    def add(self, a: Entry, b: Entry, result: Any) -> None:
        """Record one finished pairing and its rounds in one transaction (all or nothing)."""
        with self.conn:
            self.conn.execute(
                "INSERT INTO pairings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    a.key,
                    b.key,
                    a.label,
                    b.label,
                    result.played[0],
                    result.wins[0],
                    result.wins[1],
                    result.forfeits[0],
                    result.forfeits[1],
                    json.dumps(result.forfeit_lines),
                    time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                ),
            )
            rows = [(a.key, b.key, i, ra, rb) for i, (ra, rb) in enumerate(round_ranks(result))]
            self.conn.executemany("INSERT INTO rounds VALUES (?, ?, ?, ?, ?)", rows)

    def pairings(self, keys: set[str]) -> list[dict[str, Any]]:
        """The finished pairings among ``keys``, in the order they are rated: by pairing round
        (one played before the schedule was recorded counts as round -1), then by key, so the
        same record always gives the same ratings, whichever pairing of a round finished first."""
        cur = self.conn.execute("SELECT * FROM pairings")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, row, strict=True)) for row in cur]
        planned = self.schedule()
        rows = [r for r in rows if r["a"] in keys and r["b"] in keys]
        return sorted(rows, key=lambda r: (planned.get((r["a"], r["b"]), -1), r["a"], r["b"]))

    def ranks(self, a: str, b: str) -> list[tuple[float, float]]:
        cur = self.conn.execute(
            "SELECT a_rank, b_rank FROM rounds WHERE a = ? AND b = ? ORDER BY idx", (a, b)
        )
        return list(cur)

    def close(self) -> None:
        self.conn.close()


# ----------------------------------------------------------------------------- standings


class Ratings:
    """OpenSkill (Plackett-Luce) ratings of the current bots, one update per recorded round."""

    def __init__(self, entries: list[Entry]) -> None:
        from openskill.models import PlackettLuce

        self.model = PlackettLuce()
        self.labels = {e.key: e.label for e in entries}
        self.of = {e.key: self.model.rating(name=e.label) for e in entries}

    def add(self, a: str, b: str, ranks: list[tuple[float, float]]) -> None:
        """A pairing's rounds, in their order (``(a_rank, b_rank)``: higher is better)."""
        for a_rank, b_rank in ranks:
            new = self.model.rate([[self.of[a]], [self.of[b]]], scores=[a_rank, b_rank])
            self.of[a], self.of[b] = new[0][0], new[1][0]

    def rated(self) -> list[Rated]:
        return [Rated(k, self.labels[k], r.mu, r.sigma) for k, r in self.of.items()]


def rate(record: Record, entries: list[Entry]) -> tuple[Ratings, list[dict[str, Any]]]:
    """The ratings from every recorded pairing among ``entries`` (in the record's order), and
    those pairings."""
    ratings = Ratings(entries)
    pairings = record.pairings({e.key for e in entries})
    for p in pairings:
        ratings.add(p["a"], p["b"], record.ranks(p["a"], p["b"]))
    return ratings, pairings


def standings(record: Record, entries: list[Entry]) -> dict[str, Any]:
    """Ratings and totals of the current bots from every recorded pairing among them."""
    keys = {e.key for e in entries}
    by_key = {e.key: e for e in entries}
    totals = {e.key: {"rounds": 0, "wins": 0.0, "forfeits": 0} for e in entries}
    rated_now, pairings = rate(record, entries)
    ratings = rated_now.of
    for p in pairings:
        for side in ("a", "b"):
            t = totals[p[side]]
            t["rounds"] += p["rounds"]
            t["wins"] += p[f"{side}_wins"]
            t["forfeits"] += p[f"{side}_forfeits"]
    bots = []
    for key in keys:
        r, t = ratings[key], totals[key]
        bots.append(
            {
                "name": by_key[key].label,
                "kind": by_key[key].kind,
                "key": key,
                "rounds": t["rounds"],
                "wins": round(t["wins"], 6),
                "win_rate": round(t["wins"] / t["rounds"], 6) if t["rounds"] else 0.0,
                "forfeits": t["forfeits"],
                "mu": round(r.mu, 4),
                "sigma": round(r.sigma, 4),
                "ci95": [round(r.mu - Z95 * r.sigma, 4), round(r.mu + Z95 * r.sigma, 4)],
                "ordinal": round(r.ordinal(), 4),
            }
        )
    bots.sort(key=lambda b: (-b["ordinal"], b["name"]))
    return {
        "bots": bots,
        "pairings": [
            {
                "a": p["a_label"],
                "b": p["b_label"],
                "rounds": p["rounds"],
                "a_wins": p["a_wins"],
                "b_wins": p["b_wins"],
                "forfeits": json.loads(p["forfeit_lines"]),
                "finished_at": p["finished_at"],
            }
            for p in pairings
        ],
    }


def format_markdown(report: dict[str, Any]) -> str:
    cfg = report["config"]
    lines = [f"**{report['warning']}**", ""] if "warning" in report else []
    lines += [
        f"# League of {len(report['bots'])} bots",
        "",
        f"{cfg['players']} players, {cfg['rounds']} duplicate deals per pairing in both seatings, "
        f"seed {cfg['seed']}. Rating: OpenSkill mu with its 95% interval (mu ± 1.96 sigma); "
        "ranked by mu - 3 sigma.",
        "",
    ]
    sure = report.get("sure")
    if sure:
        lines += [
            f"Adaptive schedule: {len(report['pairings'])} pairings; stopped because "
            f"{sure['stopped']}. How sure: the widest 95% interval is ±"
            f"{sure['widest_half_width']:.2f}; {sure['within_target']} of {len(report['bots'])} "
            f"bots are within ±{cfg['target']:g}; {sure['neighbours_apart']} of "
            f"{sure['neighbours']} neighbours in the ranking have intervals that do not overlap.",
            "",
        ]
    lines += [
        "| rank | bot | rating (95% CI) | win rate | rounds | forfeits |",
        "|---:|---|---|---:|---:|---:|",
    ]
    for i, b in enumerate(report["bots"], 1):
        lo, hi = b["ci95"]
        lines.append(
            f"| {i} | {b['name']} | {b['mu']:.1f} ({lo:.1f}-{hi:.1f}) | {b['win_rate']:.1%} | "
            f"{b['rounds']} | {b['forfeits']} |"
        )
    forfeits = [line for p in report["pairings"] for line in p["forfeits"]]
    if report["skipped"] or forfeits:
        lines += ["", "## Notes", ""]
        lines += [f"- left out: {s}" for s in report["skipped"]]
        lines += [f"- {line}" for line in forfeits]
    return "\n".join(lines) + "\n"


def plot_png(report: dict[str, Any]) -> bytes:
    """Ratings with their 95% intervals, best on top, as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bots = report["bots"]
    names = [b["name"] for b in bots]
    mus = [b["mu"] for b in bots]
    err = [[b["mu"] - b["ci95"][0] for b in bots], [b["ci95"][1] - b["mu"] for b in bots]]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.45 * max(1, len(bots))))
    ax.errorbar(mus, names, xerr=err, fmt="o", capsize=4, color="tab:blue")
    ax.invert_yaxis()
    ax.set_xlabel("OpenSkill rating mu (95% interval)")
    ax.set_title(f"League: {report['config']['rounds']} duplicate deals per pairing")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def format_html(report: dict[str, Any]) -> str:
    """A self-contained page: the table and the plot (a PNG embedded as base64)."""
    png = base64.b64encode(plot_png(report)).decode()
    rows = "".join(
        f"<tr><td>{i}</td><td>{html.escape(b['name'])}</td><td>{b['mu']:.1f} "
        f"({b['ci95'][0]:.1f}-{b['ci95'][1]:.1f})</td><td>{b['win_rate']:.1%}</td>"
        f"<td>{b['rounds']}</td><td>{b['forfeits']}</td></tr>"
        for i, b in enumerate(report["bots"], 1)
    )
    notes = [f"left out: {s}" for s in report["skipped"]]
    notes += [line for p in report["pairings"] for line in p["forfeits"]]
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    cfg = report["config"]
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Rack-O league</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
        "td:nth-child(2){text-align:left}</style></head><body>"
        + (
            f"<p style='color:#b00;font-weight:bold'>{html.escape(report['warning'])}</p>"
            if "warning" in report
            else ""
        )
        + f"<h1>League of {len(report['bots'])} bots</h1>"
        f"<p>{cfg['players']} players, {cfg['rounds']} duplicate deals per pairing in both "
        f"seatings, seed {cfg['seed']}. Rating: OpenSkill mu, 95% interval (mu ± 1.96 sigma).</p>"
        "<table><tr><th>rank</th><th>bot</th><th>rating (95% CI)</th><th>win rate</th>"
        f"<th>rounds</th><th>forfeits</th></tr>{rows}</table>"
        f"<p><img alt='ratings with 95% intervals' src='data:image/png;base64,{png}'></p>"
        + (f"<h2>Notes</h2><ul>{items}</ul>" if items else "")
        + "</body></html>\n"
    )


# ----------------------------------------------------------------------------- running


SCHEDULES = ("adaptive", "round-robin")
# The adaptive schedule's defaults: a 95% interval of ± 3 rating points (OpenSkill's scale: a bot
# starts at 25 ± 16.3; its sigma shrinks with the rounds it plays, to ± 3 in about 450), at most
# 30 pairings per bot as the one asking for them (docs/coursework.md: what that costs and gives).
DEFAULT_TARGET = 3.0
DEFAULT_MAX_PAIRINGS = 30
# Rounds of a pairing played side by side (racko_apps.lockstep): a sandboxed bot's cost is per
# exchange with its sandbox, and 16 tables cut a pairing's CPU about threefold (docs/coursework.md)
# while 16 bot objects of a shipped or an expert-like bot fit its memory limit easily.
DEFAULT_TABLES = 16
# The adaptive schedule's time budget: a league plans no pairing past it, so that one run ends
# within about this long (a rerun goes on from the record); 0 or None: no budget.
DEFAULT_BUDGET_MINUTES = 60.0
_clock = time.monotonic  # the budget's clock (tests replace it)


def _files(e: Entry, folder: Path) -> list[str]:
    if e.kind == "onnx":
        return [e.label, Path(e.label).with_suffix(".json").name]
    if e.kind == "python":
        return [f"{e.label}.py"]
    return []


def _bar(total: int, desc: str, show: bool) -> Any:
    """A progress bar with the ETA on stderr (tqdm; off when ``show`` is false or stderr is not
    a terminal); ``None`` when off."""
    if not show or not total:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="pairing", file=sys.stderr, disable=None)


def run_league(
    folder: Path,
    *,
    rounds: int = 50,
    seed: int = 0,
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
) -> dict[str, Any]:
    """Play the pairings the schedule asks for that are not in the record yet, then write
    league.md/.json/.html to ``out``.

    ``schedule``: ``adaptive`` (racko_apps.league_schedule: pairing rounds between bots of similar
    rating until every 95% interval is within ± ``target``, each bot asking for at most
    ``max_pairings``) or ``round-robin`` (every pair). Pairings are played by ``workers``
    processes (default: one per core) or, with ``address``, as tasks on that Ray cluster
    (racko_apps.league_pool). ``isolate``: sandboxed bots run under bubblewrap, each seeing only
    its own files (racko_apps.sandbox); IsolationUnavailableError when it cannot. Without it
    every report says so at its top. ``tables``: rounds of a pairing played side by side, each
    sandboxed bot answering all of theirs in one exchange (racko_apps.lockstep).
    ``budget_minutes`` (adaptive only; 0 or None: none): from the start of this run, the
    pairing rounds are cut to the pairings that fit in what is left of it at this run's pace
    (the widest intervals first), and no result is waited for past it (a pairing then still in
    flight is lost, as with a kill, and played by the next run); the report says so."""
    if not isinstance(tables, int) or isinstance(tables, bool) or tables < 1:
        raise ValueError(f"tables must be a positive integer, got {tables!r}")
    if budget_minutes is not None and not (
        isinstance(budget_minutes, int | float) and 0 <= budget_minutes < float("inf")
    ):
        raise ValueError(f"budget_minutes must be a number of minutes >= 0, got {budget_minutes!r}")
    started = _clock()
    deadline = started + 60.0 * budget_minutes if budget_minutes else float("inf")
    if not folder.is_dir():
        raise FileNotFoundError(f"folder {str(folder)!r} does not exist")
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; choose from {', '.join(SCHEDULES)}")
    entries, skipped = find_bots(folder, list(baselines or []))
    if isolate and any(e.kind != "builtin" for e in entries):
        check_isolation()
    if isolate and any(e.kind == "python" for e in entries):
        jit_cache()  # the compiled planner, once here for every worker's sandboxes (sandbox.py)
    if any(e.kind == "onnx" for e in entries):
        require("onnxruntime", "bots", "playing an exported .onnx bot")
    limits = limits or Limits()
    settings = {"players": PLAYERS, "rounds": rounds, "seed": seed}
    record = Record(db or folder / "league.sqlite", settings)
    pool: LocalPool | RayPool | None = None
    try:
        pool = RayPool(address) if address else LocalPool(workers or os.cpu_count() or 1)
        contestants = {
            e.key: pool.contestant(e.label, e.spec, e.kind, folder.resolve(), _files(e, folder))
            for e in entries
        }
        known = record.loaded()
        checks = [
            LoadJob(i, contestants[e.key], limits, isolate)
            for i, e in enumerate(entries)
            if e.key not in known
        ]
        failed = dict(pool.run(try_load, checks))
        record.mark_loaded([entries[i].key for i, why in failed.items() if why is None])
        playing = [e for i, e in enumerate(entries) if failed.get(i) is None]
        skipped += [
            f"{e.label}: does not load: {failed[i]}" for i, e in enumerate(entries) if failed.get(i)
        ]
        by_key = {e.key: e for e in playing}
        pairs = _Pairer(
            record,
            playing,
            pool,
            contestants,
            rounds,
            seed,
            limits,
            max_forfeits,
            isolate,
            log,
            progress,
            record_dir,
            tables,
        )
        kept = len(pairs.played)
        if schedule == "round-robin":
            todo = all_pairs([e.key for e in playing], pairs.played)
            log(f"league: {len(playing)} bots, {kept} pairing(s) on record, {len(todo)} to play")
            pairs.play_round(todo, record.plan(todo) if todo else -1)
            sure = None
        else:
            log(
                f"league: {len(playing)} bots, {kept} pairing(s) on record; adaptive schedule: "
                f"pairing rounds until every 95% interval is within ±{target:g} "
                f"(each bot asking for at most {max_pairings} pairings)"
            )
            left = pairs.planned_not_played()
            if left:
                number, todo = left
                log(f"round {number}: {len(todo)} pairing(s) planned and not played yet")
                pairs.play_round(todo, number, deadline)
            began = _clock()
            ratings, _ = rate(record, playing)
            # what rating a round takes (the record's so far, then this run's), for the reserve
            rating = {"seconds": _clock() - began, "rounds": 2 * rounds * len(pairs.played)}

            def results_until(more: int) -> float:
                """The budget's end, less what the report will take after ``more`` pairings:
                four times this run's time per rated round, for every round on record (the
                report rates them all again, then builds its tables and plot; twice was 0.6 s
                short for the 200-bot class, docs/coursework.md), so that the run and its report
                end within the budget."""
                if deadline == float("inf") or not rating["rounds"]:
                    return deadline
                rounds_after = 2 * rounds * (len(pairs.played) + more)
                return deadline - 4 * rating["seconds"] / rating["rounds"] * rounds_after

            while not pairs.out_of_time:
                counts = pairs.counts()
                bots = ratings.rated()
                seekers = [b for b in unsettled(bots, target) if counts[b.key] < max_pairings]
                fit = pairs.fit(results_until(len(seekers)))
                cut = fit is not None and fit < len(seekers)
                if cut:  # as many as fit in what is left of the budget, the widest first
                    seekers = seekers[:fit]
                    if not seekers:
                        pairs.out_of_time = True
                        break
                todo = plan_round(bots, seekers, pairs.played, seed)
                if not todo:
                    break
                number = record.plan(todo)
                log(
                    f"round {number}: {len(todo)} pairing(s)"
                    + (" (as many as fit the time budget)" if cut else "")
                    + f"; {len(unsettled(bots, target))} bot(s) wider than ±{target:g}"
                )
                for a, b, ranks in pairs.play_round(todo, number, results_until(len(todo))):
                    began = _clock()
                    ratings.add(a, b, ranks)
                    rating["seconds"] += _clock() - began
                    rating["rounds"] += len(ranks)
            sure = how_sure(ratings.rated(), target)
            wide = unsettled(ratings.rated(), target)
            if not wide:
                sure["stopped"] = f"every 95% interval is within ±{target:g}"
            elif pairs.out_of_time:
                sure["stopped"] = (
                    f"the time budget of {budget_minutes:g} min was spent with {len(wide)} "
                    f"interval(s) wider than ±{target:g}; run the league again to narrow them "
                    "(it goes on from its record)"
                )
            else:
                sure["stopped"] = (
                    f"{len(wide)} interval(s) wider than ±{target:g}, but no pairing left to ask "
                    f"for (each bot asks for at most {max_pairings}, and meets each other bot once)"
                )
            log(f"league: {sure['stopped']} ({(_clock() - started) / 60:.1f} min)")
        report = {
            **({} if isolate else {"isolated": False, "warning": NOT_ISOLATED}),
            "schema": SCHEMA,
            "config": {
                **settings,
                "folder": str(folder),
                "db": str(record.path),
                "schedule": schedule,
                **(
                    {
                        "target": target,
                        "max_pairings": max_pairings,
                        "budget_minutes": budget_minutes or None,
                    }
                    if sure
                    else {}
                ),
                "move_seconds": limits.move_seconds,
                "round_seconds": limits.round_seconds,
                "tables": tables,
            },
            "skipped": skipped,
            **standings(record, list(by_key.values())),
            **({"sure": sure} if sure else {}),
            **({} if record_dir is None else {"records": pairs.records}),
        }
    finally:
        if pool is not None:
            pool.close()
        record.close()
    out = out or folder
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "league.json", json.dumps(report, indent=2) + "\n")
    write_text_atomic(out / "league.md", format_markdown(report))
    write_text_atomic(out / "league.html", format_html(report))
    return report


def _links(result: Any) -> dict[str, Any]:
    """Per bot of a pairing, the records of its forfeited and of its lost rounds."""
    return {label: result.record_links(i) for i, label in enumerate(result.labels)}


class _Pairer:
    """Plays pairing rounds on the pool and records each pairing as it finishes."""

    def __init__(
        self,
        record: Record,
        playing: list[Entry],
        pool: LocalPool | RayPool,
        contestants: dict[str, Contestant],
        rounds: int,
        seed: int,
        limits: Limits,
        max_forfeits: int,
        isolate: bool,
        log: Any,
        progress: bool,
        record_dir: Path | None = None,
        tables: int = 1,
    ) -> None:
        self.record, self.pool, self.contestants = record, pool, contestants
        self.record_dir = record_dir
        self.records: list[dict[str, Any]] = []  # per pairing, each bot's forfeit and loss records
        self.by_key = {e.key: e for e in playing}
        self.job = {
            "deals": rounds,
            "seed": seed,
            "limits": limits,
            "max_forfeits": max_forfeits,
            "isolate": isolate,
            "tables": tables,
        }
        self.log, self.progress = log, progress
        self.busy_seconds = 0.0  # wall time of this run's pairing rounds, and their pairings
        self.finished = 0
        self.out_of_time = False  # the budget ran out while a round was played
        self.played = {
            frozenset(p) for p in record.done() if p[0] in self.by_key and p[1] in self.by_key
        }

    def _dir(self, a: str, b: str) -> Path | None:
        """Where a pairing's game records go (``--record``): one folder per pairing."""
        if self.record_dir is None:
            return None
        return self.record_dir / safe_name(f"{self.by_key[a].label}-vs-{self.by_key[b].label}")

    def counts(self) -> dict[str, int]:
        """Pairings on record per current bot."""
        counts = dict.fromkeys(self.by_key, 0)
        for pair in self.played:
            for key in pair:
                counts[key] += 1
        return counts

    def planned_not_played(self) -> tuple[int, list[tuple[str, str]]] | None:
        """The last pairing round's pairings among the current bots that are not on record
        (a league killed mid-round), or None."""
        planned = self.record.schedule()
        if not planned:
            return None
        last = max(planned.values())
        todo = [
            p
            for p, number in planned.items()
            if number == last
            and p[0] in self.by_key
            and p[1] in self.by_key
            and frozenset(p) not in self.played
        ]
        return (last, sorted(todo)) if todo else None

    def fit(self, deadline: float) -> int | None:
        """How many pairings fit before ``deadline`` at this run's pace so far (wall time per
        pairing, the workers' parallelism included); None before the first has finished."""
        if deadline == float("inf") or not self.finished or self.busy_seconds <= 0:
            return None
        return max(0, int((deadline - _clock()) * self.finished / self.busy_seconds))

    def play_round(
        self, todo: list[tuple[str, str]], number: int, deadline: float = float("inf")
    ) -> list[tuple[str, str, list[tuple[float, float]]]]:
        """Play ``todo`` in parallel, recording each as it finishes; the rounds' ranks of each
        pairing, in key order (the order the ratings take them in). Past ``deadline`` no more
        results are waited for (``out_of_time``): the pairings in flight are lost, as with a
        kill, and the rest of the round stays planned for the next run."""
        jobs = [
            PairingJob(
                i, self.contestants[a], self.contestants[b], **self.job, record_dir=self._dir(a, b)
            )
            for i, (a, b) in enumerate(todo)
        ]
        bar = _bar(len(jobs), f"round {number}", self.progress)
        say = bar.write if bar is not None else self.log
        done: dict[int, list[tuple[float, float]]] = {}
        began = _clock()
        results = self.pool.run(play_pairing, jobs, deadline, _clock)
        try:
            for i, result in results:
                a, b = (self.by_key[k] for k in todo[i])
                self.record.add(a, b, result)
                self.played.add(frozenset(todo[i]))
                if self.record_dir is not None:
                    self.records.append({"a": a.label, "b": b.label, "bots": _links(result)})
                done[i] = round_ranks(result)
                if bar is not None:
                    bar.update()
                if sum(result.forfeits) or bar is None:
                    say(
                        f"[{len(done)}/{len(jobs)}] {a.label} {result.win_rate(0):.0%} - "
                        f"{result.win_rate(1):.0%} {b.label}"
                        + (f" ({sum(result.forfeits)} forfeited)" if sum(result.forfeits) else "")
                    )
        finally:
            results.close()
            if len(done) < len(jobs):  # out of time: the pairings in flight end with their workers
                self.out_of_time = True
                self.pool.close()
            self.busy_seconds += _clock() - began
            self.finished += len(done)
            if bar is not None:
                bar.close()
        if len(done) < len(jobs):
            say(
                f"round {number}: the time budget is spent; {len(jobs) - len(done)} "
                "pairing(s) left for the next run"
            )
        return [(*todo[i], done[i]) for i in sorted(done, key=lambda i: todo[i])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="racko league",
        description="Rate every bot in a folder (NAME.onnx with its NAME.json; NAME.py defining "
        "class Bot) by duplicate matches between bots of similar rating (or a round robin), with "
        "OpenSkill ratings and their 95% intervals; pairings played in parallel (every core, or "
        "a Ray cluster), results kept in SQLite so a rerun plays only what is missing.",
    )
    parser.add_argument("folder", metavar="DIR", type=Path, help="the folder of bots")
    parser.add_argument("--rounds", type=int, default=50, help="deals per pairing (default 50)")
    parser.add_argument("--seed", type=int, default=0, help="deals seed (default 0)")
    parser.add_argument("--db", type=Path, help="SQLite file (default DIR/league.sqlite)")
    parser.add_argument("--out", type=Path, help="folder for league.md/.json/.html (default DIR)")
    parser.add_argument(
        "--baselines", nargs="*", default=[], metavar="NAME", help="built-in bots to add"
    )
    parser.add_argument(
        "--record", type=Path, metavar="DIR", help="write a record of every game to DIR (replays)"
    )
    parser.add_argument(
        "--schedule",
        choices=SCHEDULES,
        default="adaptive",
        help="adaptive: rounds of pairings between bots of similar rating until every interval "
        "is narrow enough (default); round-robin: every pair",
    )
    parser.add_argument(
        "--target",
        type=float,
        default=DEFAULT_TARGET,
        help=f"adaptive: the 95%% interval's half-width to reach (default {DEFAULT_TARGET:g})",
    )
    parser.add_argument(
        "--max-pairings",
        type=int,
        default=DEFAULT_MAX_PAIRINGS,
        help=f"adaptive: pairings a bot may ask for (default {DEFAULT_MAX_PAIRINGS})",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=DEFAULT_BUDGET_MINUTES,
        metavar="MINUTES",
        help="adaptive: plan no pairing past this many minutes of this run, the widest intervals "
        f"first; a rerun goes on from the record (default {DEFAULT_BUDGET_MINUTES:g}; 0: none)",
    )
    parser.add_argument(
        "--workers", type=int, help="processes playing pairings (default: one per core)"
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="play the pairings on the Ray cluster at ADDR ('auto' or HOST:PORT; needs the "
        "'cluster' extra, and racko and bubblewrap on every node)",
    )
    parser.add_argument(
        "--move-seconds", type=float, default=5.0, help="a move's hard time limit (default 5)"
    )
    parser.add_argument(
        "--round-seconds",
        type=float,
        default=DEFAULT_ROUND_SECONDS,
        help="a bot's clock: the wall time it may use over one round, all its moves together "
        f"(default {DEFAULT_ROUND_SECONDS:g})",
    )
    parser.add_argument(
        "--memory-mb", type=int, default=1024, help="a sandboxed bot's memory limit (default 1024)"
    )
    parser.add_argument(
        "--max-forfeits",
        type=int,
        default=3,
        help="forfeits after which a bot's other rounds of a pairing are forfeited (default 3)",
    )
    parser.add_argument(
        "--tables",
        type=int,
        default=DEFAULT_TABLES,
        help="rounds of a pairing played side by side, each sandboxed bot answering all of their "
        f"moves in one exchange with a bot object per table (default {DEFAULT_TABLES}; 1: one "
        "round at a time)",
    )
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="run sandboxed bots without bubblewrap (only bots you trust; every report says so)",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.max_forfeits < 1 or args.max_pairings < 1:
        parser.error("--rounds, --max-forfeits and --max-pairings must be positive")
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be positive")
    if args.tables < 1:
        parser.error("--tables must be positive")
    if not args.target > 0:
        parser.error("--target must be positive")
    if not 0 <= args.budget < float("inf"):
        parser.error("--budget must be a number of minutes >= 0 (0: no budget)")
    if args.no_isolation:
        print(f"**{NOT_ISOLATED}**", flush=True)
    try:
        limits = Limits(
            move_seconds=args.move_seconds,
            round_seconds=args.round_seconds,
            memory_mb=args.memory_mb,
        )
        report = run_league(
            args.folder,
            rounds=args.rounds,
            seed=args.seed,
            db=args.db,
            out=args.out,
            baselines=args.baselines,
            limits=limits,
            max_forfeits=args.max_forfeits,
            log=lambda line: print(line, flush=True),
            isolate=not args.no_isolation,
            record_dir=args.record,
            schedule=args.schedule,
            target=args.target,
            max_pairings=args.max_pairings,
            workers=args.workers,
            address=args.address,
            progress=True,
            tables=args.tables,
            budget_minutes=args.budget,
        )
    except (
        ValueError,
        FileNotFoundError,
        ImportError,
        sqlite3.DatabaseError,
        IsolationUnavailableError,
    ) as err:
        print(f"racko league: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # the record is safe: every finished pairing was committed
        db = args.db or args.folder / "league.sqlite"
        print(
            f"racko league: stopped; the pairings finished so far are kept in {db}: "
            "run the same command again to go on",
            file=sys.stderr,
        )
        return 130
    print(format_markdown({**report}), end="")
    out = args.out or args.folder
    print(f"wrote {out / 'league.md'}, {out / 'league.json'}, {out / 'league.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
