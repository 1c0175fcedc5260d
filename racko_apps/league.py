"""``racko league DIR``: a round-robin of duplicate matches over every bot in a folder.

    racko league bots/                              # every pairing not played yet
    racko league bots/ --rounds 100 --baselines random heuristic expert

What counts as a bot in DIR (nothing else is touched):

* ``NAME.onnx`` with its manifest ``NAME.json`` beside it (an exported bot, docs/bot-format.md);
* ``NAME.py`` whose source defines a top-level ``class Bot`` (what ``racko new-bot`` writes),
  or else a top-level function ``act(observation)`` (a bot as a function, agents.function_bot),
  where NAME is a Python identifier not starting with ``test_`` or ``_``. The file is inspected,
  never imported, by the league itself: the bot plays sandboxed in its own process, isolated
  under bubblewrap where it sees only its own file (``--no-isolation`` to skip, said in every
  report; racko_apps.sandbox).

Every pair of bots plays ``--rounds`` duplicate deals (each in both seatings, 2 players); a bot
that breaks forfeits the round (racko_apps.referee). Results live in a SQLite file
(``DIR/league.sqlite`` by default), one transaction per finished pairing, keyed by each bot's
name and a hash of its file(s): a rerun plays only pairings not recorded yet (a new or changed
bot), and a league killed mid-run loses only the pairing in progress. Ratings are OpenSkill
(Plackett-Luce) over every recorded round, in a fixed order, with 95% intervals (mu ± 1.96
sigma); the standings are written as Markdown, JSON and a self-contained HTML page with a plot.
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
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents import BUILTIN_BOTS
from agents.base import Bot
from racko_apps.referee import Strikes, play_match, seat_bot
from racko_apps.sandbox import (
    NOT_ISOLATED,
    BotFailureError,
    IsolationUnavailableError,
    Limits,
    SandboxedBot,
    check_isolation,
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
            rows = []
            for i, r in enumerate(result.rounds):
                rank = {0: 0.0, 1: 0.0}
                for seat, bot in enumerate(r["seating"]):
                    rank[bot] = r["rank"][seat]
                rows.append((a.key, b.key, i, rank[0], rank[1]))
            self.conn.executemany("INSERT INTO rounds VALUES (?, ?, ?, ?, ?)", rows)

    def pairings(self, keys: set[str]) -> list[dict[str, Any]]:
        cur = self.conn.execute("SELECT * FROM pairings ORDER BY a, b")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, row, strict=True)) for row in cur]
        return [r for r in rows if r["a"] in keys and r["b"] in keys]

    def ranks(self, a: str, b: str) -> list[tuple[float, float]]:
        cur = self.conn.execute(
            "SELECT a_rank, b_rank FROM rounds WHERE a = ? AND b = ? ORDER BY idx", (a, b)
        )
        return list(cur)

    def close(self) -> None:
        self.conn.close()


# ----------------------------------------------------------------------------- standings


def standings(record: Record, entries: list[Entry]) -> dict[str, Any]:
    """Ratings and totals of the current bots from every recorded pairing among them."""
    from openskill.models import PlackettLuce

    keys = {e.key for e in entries}
    by_key = {e.key: e for e in entries}
    model = PlackettLuce()
    ratings = {e.key: model.rating(name=e.label) for e in entries}
    totals = {e.key: {"rounds": 0, "wins": 0.0, "forfeits": 0} for e in entries}
    pairings = record.pairings(keys)
    for p in pairings:
        for side in ("a", "b"):
            t = totals[p[side]]
            t["rounds"] += p["rounds"]
            t["wins"] += p[f"{side}_wins"]
            t["forfeits"] += p[f"{side}_forfeits"]
        for a_rank, b_rank in record.ranks(p["a"], p["b"]):
            new = model.rate([[ratings[p["a"]]], [ratings[p["b"]]]], scores=[a_rank, b_rank])
            ratings[p["a"]], ratings[p["b"]] = new[0][0], new[1][0]
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
) -> dict[str, Any]:
    """Play every pairing not yet in the record, then write league.md/.json/.html to ``out``.

    ``isolate``: Python bots run under bubblewrap, each seeing only its own file
    (racko_apps.sandbox); IsolationUnavailableError when it cannot. Without it every report says
    so at its top."""
    if not folder.is_dir():
        raise FileNotFoundError(f"folder {str(folder)!r} does not exist")
    entries, skipped = find_bots(folder, list(baselines or []))
    if isolate and any(e.kind == "python" for e in entries):
        check_isolation()
    settings = {"players": PLAYERS, "rounds": rounds, "seed": seed}
    record = Record(db or folder / "league.sqlite", settings)
    seated: dict[str, str | Bot] = {}
    records: list[dict[str, Any]] = []
    try:
        playing = []
        for e in entries:
            try:
                seated[e.key] = seat_bot(
                    e.spec,
                    PLAYERS,
                    {},
                    folder=folder,
                    label=e.label,
                    limits=limits,
                    isolate=isolate,
                )
                playing.append(e)
            except BotFailureError as err:
                skipped.append(f"{e.label}: does not load: {err.reason}")
            except (ValueError, TypeError, FileNotFoundError, ImportError) as err:
                skipped.append(f"{e.label}: does not load: {' '.join(str(err).split())}")
        done = record.done()
        todo = [
            (a, b)
            for i, a in enumerate(playing)
            for b in playing[i + 1 :]
            if (a.key, b.key) not in done
        ]
        kept = len(playing) * (len(playing) - 1) // 2 - len(todo)
        log(f"league: {len(playing)} bots, {kept} pairing(s) on record, {len(todo)} to play")
        for n, (a, b) in enumerate(todo, 1):
            result = play_match(
                [seated[a.key], seated[b.key]],
                [a.label, b.label],
                num_players=PLAYERS,
                deals=rounds,
                seed=seed,
                strikes=[Strikes(max_forfeits), Strikes(max_forfeits)],
                record_dir=(
                    None
                    if record_dir is None
                    else record_dir / safe_name(f"{a.label}-vs-{b.label}")
                ),
            )
            if record_dir is not None:
                records.append({"a": a.label, "b": b.label, "bots": _links(result)})
            record.add(a, b, result)
            for e in (a, b):  # the pairing is over: every process a bot started ends with it
                if isinstance(seated[e.key], SandboxedBot):
                    seated[e.key].end_game()
            log(
                f"[{n}/{len(todo)}] {a.label} {result.win_rate(0):.0%} - "
                f"{result.win_rate(1):.0%} {b.label}"
                + (f" ({sum(result.forfeits)} forfeited)" if sum(result.forfeits) else "")
            )
        report = {
            **({} if isolate else {"isolated": False, "warning": NOT_ISOLATED}),
            "schema": SCHEMA,
            "config": {**settings, "folder": str(folder), "db": str(record.path)},
            "skipped": skipped,
            **standings(record, playing),
            **({} if record_dir is None else {"records": records}),
        }
    finally:
        for bot in seated.values():
            if isinstance(bot, SandboxedBot):
                bot.close()
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="racko league",
        description="Round-robin of duplicate matches over every bot in a folder (NAME.onnx with "
        "its NAME.json; NAME.py defining class Bot), with OpenSkill ratings; results kept in "
        "SQLite so a rerun plays only new pairings.",
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
        "--move-seconds", type=float, default=5.0, help="a move's hard time limit (default 5)"
    )
    parser.add_argument(
        "--memory-mb", type=int, default=1024, help="a Python bot's memory limit (default 1024)"
    )
    parser.add_argument(
        "--max-forfeits",
        type=int,
        default=3,
        help="forfeits after which a bot's other rounds of a pairing are forfeited (default 3)",
    )
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="run Python bots without bubblewrap (only bots you trust; every report says so)",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.max_forfeits < 1:
        parser.error("--rounds and --max-forfeits must be positive")
    if args.no_isolation:
        print(f"**{NOT_ISOLATED}**", flush=True)
    try:
        limits = Limits(move_seconds=args.move_seconds, memory_mb=args.memory_mb)
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
        )
    except (
        ValueError,
        FileNotFoundError,
        sqlite3.DatabaseError,
        IsolationUnavailableError,
    ) as err:
        print(f"racko league: error: {err}", file=sys.stderr)
        return 2
    print(format_markdown({**report}), end="")
    out = args.out or args.folder
    print(f"wrote {out / 'league.md'}, {out / 'league.json'}, {out / 'league.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
