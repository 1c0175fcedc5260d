"""racko league's work queue: a stalled pairing holds up no other, and a league stopped midway
(SIGTERM, Ctrl-C, its time budget) writes the ranking so far, marked provisional, and a rerun
goes on from the record without replaying a finished pairing."""

from __future__ import annotations

import functools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import agents
from racko_apps.league import run as league_run
from racko_apps.league import workqueue as league_queue
from racko_apps.league.pool import Contestant, LocalPool
from racko_apps.league.run import run_league
from racko_apps.new_bot.starter import write_bot
from tests.apps.test_league import SLOW, rows
from tests.apps.test_league_scale import NoisyExpert

REPO = Path(__file__).resolve().parents[2]


def labels(job: Any) -> tuple[str, ...]:
    """The bots of a pairing job (none for a bot's load check)."""
    return tuple(c.label for c in getattr(job, "bots", ()))


class StallingPool:
    """A pool of two workers, played here, where a pairing of ``stalled`` is held in flight as
    long as any other pairing is: the other worker plays on. ``finished`` lists the pairings'
    labels in the order they finished."""

    stalled = "slowpoke"

    def __init__(self, workers: int) -> None:
        self.capacity = 2
        self.pending: list[tuple[Callable[[Any], Any], Any]] = []
        self.finished: list[tuple[str, ...]] = []
        type(self).last = self

    def contestant(self, label: str, spec: str, kind: str, folder: Path, files: list[str]):
        return Contestant(label, spec, kind, str(folder), tuple(files))

    def submit(self, fn: Callable[[Any], Any], job: Any) -> None:
        assert len(self.pending) < self.capacity, "more pairings submitted than workers"
        self.pending.append((fn, job))

    def next(self, deadline: float = 0, clock: Any = None) -> Any:
        if not self.pending:
            return None
        free = [p for p in self.pending if self.stalled not in labels(p[1])]
        fn, job = (free or self.pending)[0]
        self.pending.remove((fn, job))
        if labels(job):  # a pairing, not a bot's load check
            self.finished.append(labels(job))
        return fn(job)

    def close(self) -> None:
        self.pending.clear()


def test_a_stalled_pairing_holds_up_no_other(tmp_path, monkeypatch):
    names = []
    for i in range(8):  # built-in bots of graded strength, played in this process
        name = f"noisy_{i}"
        monkeypatch.setitem(agents.BUILTIN_BOTS, name, functools.partial(NoisyExpert, i / 8))
        names.append(name)
    monkeypatch.setitem(agents.BUILTIN_BOTS, "slowpoke", functools.partial(NoisyExpert, 1.0))
    monkeypatch.setattr(league_run, "LocalPool", StallingPool)
    report = run_league(
        tmp_path,
        rounds=1,
        seed=0,
        baselines=[*names, "slowpoke"],
        target=8.0,
        max_pairings=3,
        log=lambda _: None,
    )
    finished = StallingPool.last.finished
    assert len(finished) == len(report["pairings"]) > 9
    # the pairing round of each pairing, as recorded before it was played
    with sqlite3.connect(tmp_path / "league.sqlite") as conn:
        planned = {
            tuple(sorted(keys)): int(key.split("/")[1])
            for key, value in conn.execute("SELECT key, value FROM meta WHERE key LIKE 'round/%'")
            for keys in json.loads(value)
        }
    by_label = {b["key"]: b["name"] for b in report["bots"]}
    round_of = {tuple(sorted(by_label[k] for k in keys)): n for keys, n in planned.items()}
    first_slow = next(i for i, p in enumerate(finished) if "slowpoke" in p)
    slow_round = round_of[tuple(sorted(finished[first_slow]))]
    # while the stalled pairing was in flight, the other worker played the rest of its round
    # and pairings of later rounds, planned without waiting for it
    later = [p for p in finished[:first_slow] if round_of[tuple(sorted(p))] > slow_round]
    assert later, (finished, round_of)
    assert all("slowpoke" not in p for p in finished[:first_slow])


def test_the_pool_plays_on_while_one_job_is_stalled():
    pool = LocalPool(2)
    try:
        pool.submit(time.sleep, 300)
        pool.submit(abs, -3)
        assert pool.next(deadline=time.monotonic() + 120) == 3  # not held up by the sleeper
        pool.submit(abs, -4)
        assert pool.next(deadline=time.monotonic() + 120) == 4
        assert pool.next(deadline=time.monotonic() - 1) is None  # past the deadline: no wait
    finally:
        pool.close()  # the sleeper ends with its worker
    assert pool.next() is None  # nothing pending


def start_league(folder: Path, *flags: str) -> subprocess.Popen:
    """``racko league`` on ``folder`` as a child process with the default Ctrl-C and SIGTERM
    (a caller that ignores SIGINT, such as a CI runner or nohup, would pass that on)."""
    code = "import sys; from racko_apps.league.cli import main; sys.exit(main())"
    return subprocess.Popen(
        [sys.executable, "-P", "-c", code, str(folder), "--rounds", "2", "--no-isolation"]
        + ["--workers", "1", *flags],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for_a_pairing(proc: subprocess.Popen, db: Path) -> None:
    """Until the league has recorded a pairing (it is still playing the others)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if db.exists() and rows(db):
                return
        except sqlite3.OperationalError:  # tables not created yet, or locked
            pass
        time.sleep(0.02)


@pytest.mark.slow  # quick: test_league.py's Ctrl-C, which checks the provisional ranking
def test_sigterm_writes_a_provisional_ranking_and_a_rerun_goes_on(tmp_path):
    write_bot("a_fast", tmp_path)
    write_bot("b_fast", tmp_path)
    (tmp_path / "z_slow.py").write_text(SLOW.replace("TOKEN", "racko-sleeper"))
    (tmp_path / "pids").mkdir()
    db = tmp_path / "league.sqlite"
    proc = start_league(tmp_path, "--schedule", "round-robin")
    try:
        wait_for_a_pairing(proc, db)
        assert proc.poll() is None, "the league finished before SIGTERM"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 143
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("racko league: stopped;") and str(db) in err
    assert f"provisional: {tmp_path / 'league.md'}" in err
    before = rows(db)
    assert 1 <= len(before) < 3
    page = (tmp_path / "league.md").read_text()
    assert page.startswith(
        "**Provisional ranking: the league was stopped (SIGTERM) before the schedule was done; "
        "run the same command again to go on from the record.**\n"
    ), page
    data = json.loads((tmp_path / "league.json").read_text())
    assert data["provisional"] is True and len(data["pairings"]) == len(before)
    assert data["provisional_reason"] == "the league was stopped (SIGTERM)"
    assert "Provisional ranking" in (tmp_path / "league.html").read_text()
    # the same command again: only the pairings not on record are played
    log: list[str] = []
    report = run_league(
        tmp_path, rounds=2, log=log.append, isolate=False, workers=1, schedule="round-robin"
    )
    assert f"{len(before)} pairing(s) on record, {3 - len(before)} to play" in log[0]
    after = rows(db)
    assert len(after) == 3 and all(after[k] == v for k, v in before.items())
    assert report["provisional"] is False and "provisional_reason" not in report
    assert not (tmp_path / "league.md").read_text().startswith("**Provisional")
    assert json.loads((tmp_path / "league.json").read_text())["provisional"] is False


def test_a_spent_budget_marks_the_ranking_provisional(tmp_path, monkeypatch):
    for i in range(4):
        monkeypatch.setitem(
            agents.BUILTIN_BOTS, f"noisy_{i}", functools.partial(NoisyExpert, i / 4)
        )
    now = {"t": 0.0}
    play = league_queue.play_pairing

    def timed(job):  # the budget's clock: 60 s a pairing
        now["t"] += 60.0
        return play(job)

    monkeypatch.setattr(league_queue, "play_pairing", timed)
    monkeypatch.setattr(league_queue, "_clock", lambda: now["t"])
    settings = dict(rounds=1, seed=0, baselines=[f"noisy_{i}" for i in range(4)], workers=1)
    report = run_league(tmp_path, budget_minutes=1, target=0.5, log=lambda _: None, **settings)
    assert report["provisional"] is True and len(report["pairings"]) == 1
    assert report["provisional_reason"] == "the time budget of 1 min was spent"
    assert (
        (tmp_path / "league.md")
        .read_text()
        .startswith(
            "**Provisional ranking: the time budget of 1 min was spent before the schedule was done"
        )
    )
    # every pair met: nothing is left to play, so the ranking is final
    report = run_league(tmp_path, budget_minutes=0, max_pairings=3, log=lambda _: None, **settings)
    assert report["provisional"] is False and len(report["pairings"]) == 6
    assert "no pairing left to ask for" in report["sure"]["stopped"]
