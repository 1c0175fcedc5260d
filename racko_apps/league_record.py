"""A league's record and ratings: the SQLite file of finished pairings, and the standings from it.

The record (``DIR/league.sqlite`` by default) holds the league's settings, one row per finished
pairing with its rounds' ranks, and each pairing round's plan, recorded before it is played. It is
written by the league's process alone, one transaction per finished pairing, keyed by each bot's
name and a hash of its file(s), so a rerun plays only what is missing and a league killed mid-run
loses only the pairings in flight. Ratings are OpenSkill (Plackett-Luce) over every recorded
round, in a fixed order (the same record always gives the same ratings), with 95% intervals
(mu ± 1.96 sigma).
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from racko_apps.league_schedule import Z95, Rated
from racko_apps.referee import MatchResult
from racko_apps.submissions import Entry


def recorded_settings(path: Path) -> dict[str, Any] | None:
    """The settings a record was played with (None when there is no record there yet): a league
    run again without ``--seed`` goes on with its record's secret seed."""
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
        path.parent.mkdir(parents=True, exist_ok=True)
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


def standings(
    record: Record, entries: list[Entry], seconds: dict[tuple[str, str], float] | None = None
) -> dict[str, Any]:
    """Ratings and totals of the current bots from every recorded pairing among them; each
    pairing played in this run with its wall time (``seconds``, by labels)."""
    seconds = seconds or {}
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
                **(
                    {"seconds": seconds[(p["a_label"], p["b_label"])]}
                    if (p["a_label"], p["b_label"]) in seconds
                    else {}
                ),
            }
            for p in pairings
        ],
    }
