"""A league's record and ratings: the SQLite file of finished pairings, and the standings from it.

The record holds the league's settings, one row per finished pairing with its rounds' ranks, and
each pairing round's plan, recorded before it is played, keyed by each bot's name and a hash of
its files: a rerun plays only what is missing. Ratings are OpenSkill (Plackett-Luce) over every
recorded round in a fixed order, so the same record always gives the same ratings.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from racko_apps.league.schedule import Z95, Rated
from racko_apps.league.submissions import Entry
from racko_apps.referee.book import MatchResult
from racko_eval.tournament import rating_model


def recorded_settings(path: Path) -> dict[str, Any] | None:
    """The settings a record was played with (None when there is no record there yet)."""
    if not path.is_file():
        return None
    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
    except sqlite3.OperationalError:  # no table yet
        return None
    finally:
        conn.close()
    return None if row is None else json.loads(row[0])


Keys = tuple[str, ...]  # a pairing: its bots' keys, in label order (two, or one per seat)


def round_ranks(result: MatchResult) -> list[tuple[float, ...]]:
    """Each round's rank score of each bot, in the pairing's order whatever their seats."""
    out = []
    for r in result.rounds:
        rank = dict.fromkeys(range(len(result.labels)), 0.0)
        for seat, bot in enumerate(r["seating"]):
            rank[bot] = r["rank"][seat]
        out.append(tuple(rank[i] for i in range(len(result.labels))))
    return out


_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS played (
    id TEXT PRIMARY KEY, keys TEXT NOT NULL, labels TEXT NOT NULL, rounds INTEGER NOT NULL,
    wins TEXT NOT NULL, forfeits TEXT NOT NULL, forfeit_lines TEXT NOT NULL,
    finished_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS played_rounds (
    id TEXT NOT NULL, idx INTEGER NOT NULL, ranks TEXT NOT NULL, PRIMARY KEY (id, idx));
"""


def _id(keys: Keys) -> str:
    return "\t".join(keys)


class Record:
    """The league's SQLite file: its settings, and one row per finished pairing with its rounds
    (``played``, ``played_rounds``)."""

    def __init__(self, path: Path, settings: dict[str, Any]) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path)
        path.chmod(0o600)  # it holds the deals' seed (a secret one): the teacher's alone
        with self.conn:
            self.conn.executescript(_TABLES)
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
        wanted = json.dumps(settings, sort_keys=True)
        if row is None:
            with self.conn:
                self.conn.execute("INSERT INTO meta VALUES ('settings', ?)", (wanted,))
        elif row[0] != wanted:
            self.conn.close()
            old = json.loads(row[0])
            names = [*settings, *(k for k in old if k not in settings)]
            diff = ", ".join(f"{k} {old.get(k)!r}" for k in names if old.get(k) != settings.get(k))
            raise ValueError(
                f"{path} holds a league played with {diff}; use the same settings or another --db"
            )

    def done(self) -> set[Keys]:
        return {tuple(json.loads(k)) for (k,) in self.conn.execute("SELECT keys FROM played")}

    def schedule(self) -> dict[Keys, int]:
        """Every planned pairing and its pairing round (kept in ``meta`` as ``round/NNNNN``)."""
        rows = self.conn.execute("SELECT key, value FROM meta WHERE key LIKE 'round/%'")
        return {
            tuple(keys): int(key.split("/")[1]) for key, value in rows for keys in json.loads(value)
        }

    def loaded(self) -> set[str]:
        """The bots (keys) that loaded in an earlier run (a failure is checked again)."""
        return {
            k[len("loads/") :]
            for (k,) in self.conn.execute("SELECT key FROM meta WHERE key LIKE 'loads/%'")
        }

    def mark_loaded(self, keys: list[str]) -> None:
        with self.conn:
            self.conn.executemany(
                "INSERT OR IGNORE INTO meta VALUES (?, '')", [(f"loads/{k}",) for k in keys]
            )

    def plan(self, pairs: list[Keys]) -> int:
        """Record the next pairing round's plan before it is played; its number."""
        rounds = set(self.schedule().values())
        number = max(rounds) + 1 if rounds else 0
        with self.conn:
            self.conn.execute(
                "INSERT INTO meta VALUES (?, ?)",
                (f"round/{number:05d}", json.dumps([list(p) for p in pairs])),
            )
        return number

    def add(self, bots: list[Entry], result: Any) -> None:
        """Record one finished pairing and its rounds in one transaction (all or nothing)."""
        keys = tuple(e.key for e in bots)
        with self.conn:
            self.conn.execute(
                "INSERT INTO played VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    _id(keys),
                    json.dumps(list(keys)),
                    json.dumps([e.label for e in bots]),
                    result.played[0],
                    json.dumps(list(result.wins)),
                    json.dumps(list(result.forfeits)),
                    json.dumps(result.forfeit_lines),
                    time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                ),
            )
            rows = [(_id(keys), i, json.dumps(r)) for i, r in enumerate(round_ranks(result))]
            self.conn.executemany("INSERT INTO played_rounds VALUES (?, ?, ?)", rows)

    def pairings(self, keys: set[str]) -> list[dict[str, Any]]:
        """The finished pairings among ``keys``, in the order they are rated: by pairing round
        (none: -1), then by key, whichever pairing of a round finished first."""
        cur = self.conn.execute(
            "SELECT keys, labels, rounds, wins, forfeits, forfeit_lines, finished_at FROM played"
        )
        rows = [
            {
                "keys": tuple(json.loads(k)),
                "labels": json.loads(labels),
                "rounds": n,
                "wins": json.loads(wins),
                "forfeits": json.loads(forfeits),
                "forfeit_lines": json.loads(lines),
                "finished_at": at,
            }
            for k, labels, n, wins, forfeits, lines, at in cur
        ]
        planned = self.schedule()
        rows = [r for r in rows if all(k in keys for k in r["keys"])]
        return sorted(rows, key=lambda r: (planned.get(r["keys"], -1), r["keys"]))

    def ranks(self, keys: Keys) -> list[tuple[float, ...]]:
        cur = self.conn.execute(
            "SELECT ranks FROM played_rounds WHERE id = ? ORDER BY idx", (_id(keys),)
        )
        return [tuple(json.loads(r)) for (r,) in cur]

    def close(self) -> None:
        self.conn.close()


class Ratings:
    """OpenSkill (Plackett-Luce) ratings of the current bots, one update per recorded round, with
    no dynamics (``racko_eval.tournament.rating_model``): a submission does not change."""

    def __init__(self, entries: list[Entry]) -> None:
        self.model = rating_model()
        self.labels = {e.key: e.label for e in entries}
        self.of = {e.key: self.model.rating(name=e.label) for e in entries}

    def add(self, keys: Keys, ranks: list[tuple[float, ...]]) -> None:
        """A pairing's rounds, in their order (each bot's rank score: higher is better)."""
        for scores in ranks:
            new = self.model.rate([[self.of[k]] for k in keys], scores=list(scores))
            for k, team in zip(keys, new, strict=True):
                self.of[k] = team[0]

    def rated(self) -> list[Rated]:
        return [Rated(k, self.labels[k], r.mu, r.sigma) for k, r in self.of.items()]


def rate(record: Record, entries: list[Entry]) -> tuple[Ratings, list[dict[str, Any]]]:
    """The ratings from every recorded pairing among ``entries``, and those pairings."""
    ratings = Ratings(entries)
    pairings = record.pairings({e.key for e in entries})
    for p in pairings:
        ratings.add(p["keys"], record.ranks(p["keys"]))
    return ratings, pairings


def _shown(p: dict[str, Any], seconds: dict[tuple[str, ...], float]) -> dict[str, Any]:
    """A pairing as the report shows it (two players: ``a``, ``b`` and their wins too)."""
    labels = tuple(p["labels"])
    shown: dict[str, Any] = {}
    if len(labels) == 2:
        shown = {"a": labels[0], "b": labels[1]}
    shown |= {"bots": list(labels), "rounds": p["rounds"]}
    if len(labels) == 2:
        shown |= {"a_wins": p["wins"][0], "b_wins": p["wins"][1]}
    shown |= {"wins": p["wins"], "forfeits": p["forfeit_lines"], "finished_at": p["finished_at"]}
    if labels in seconds:
        shown["seconds"] = seconds[labels]
    return shown


def standings(
    record: Record, entries: list[Entry], seconds: dict[tuple[str, ...], float] | None = None
) -> dict[str, Any]:
    """Ratings and totals of the current bots from every recorded pairing among them, with the
    wall time of those played in this run (``seconds``, by labels)."""
    seconds = seconds or {}
    keys = {e.key for e in entries}
    by_key = {e.key: e for e in entries}
    totals = {e.key: {"rounds": 0, "wins": 0.0, "forfeits": 0} for e in entries}
    rated_now, pairings = rate(record, entries)
    ratings = rated_now.of
    for p in pairings:
        for i, key in enumerate(p["keys"]):
            t = totals[key]
            t["rounds"] += p["rounds"]
            t["wins"] += p["wins"][i]
            t["forfeits"] += p["forfeits"][i]
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
        "pairings": [_shown(p, seconds) for p in pairings],
    }
