"""racko league: new bots play only their new pairings; a killed league loses no finished pairing."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from racko_apps.league.cli import main
from racko_apps.league.run import run_league
from racko_apps.league.submissions import league_entries
from racko_apps.new_bot.starter import write_bot

REPO = Path(__file__).resolve().parents[2]


def rows(db: Path) -> dict[tuple[str, str], str]:
    with sqlite3.connect(db) as conn:
        return {
            tuple(json.loads(labels)): t
            for labels, t in conn.execute("SELECT labels, finished_at FROM played")
        }


@pytest.mark.slow  # two leagues; quick: test_the_seed_is_secret_unless_given
def test_adding_a_bot_plays_only_its_new_pairings(tmp_path, can_isolate):
    write_bot("alpha", tmp_path)
    write_bot("beta", tmp_path)
    (tmp_path / "notes.py").write_text("x = 1\n")  # no class Bot: not a bot
    log: list[str] = []
    report = run_league(
        tmp_path, rounds=1, log=log.append, isolate=can_isolate, schedule="round-robin"
    )
    assert [b["name"] for b in report["bots"]] == sorted(["alpha", "beta"]) or len(
        report["bots"]
    ) == 2
    assert "1 to play" in log[0]
    first = rows(tmp_path / "league.sqlite")
    assert list(first) == [("alpha", "beta")]
    assert any("notes.py" in s for s in report["skipped"])
    time.sleep(1.1)  # finished_at has one-second resolution: a replay would show
    write_bot("gamma", tmp_path)
    log.clear()
    report = run_league(
        tmp_path,
        rounds=1,
        log=log.append,
        baselines=["heuristic"],
        isolate=can_isolate,
        schedule="round-robin",
    )
    assert "1 pairing(s) on record, 5 to play" in log[0]
    after = rows(tmp_path / "league.sqlite")
    assert len(after) == 6 and after[("alpha", "beta")] == first[("alpha", "beta")]
    assert {b["name"] for b in report["bots"]} == {"alpha", "beta", "gamma", "heuristic"}
    for b in report["bots"]:
        assert b["ci95"][0] < b["mu"] < b["ci95"][1] and b["rounds"] == 6
    page = (tmp_path / "league.html").read_text()
    assert "data:image/png;base64," in page and "<table>" in page
    assert "| rank | bot |" in (tmp_path / "league.md").read_text()


@pytest.mark.slow
def test_a_changed_bot_is_a_new_bot(tmp_path, can_isolate):
    write_bot("alpha", tmp_path)
    write_bot("beta", tmp_path)
    run_league(tmp_path, rounds=1, log=lambda _: None, isolate=can_isolate)
    path = tmp_path / "beta.py"
    path.write_text(path.read_text() + "\n# improved\n")
    log: list[str] = []
    run_league(tmp_path, rounds=1, log=log.append, isolate=can_isolate, schedule="round-robin")
    assert "0 pairing(s) on record, 1 to play" in log[0]


@pytest.mark.slow
def test_other_settings_need_another_db(tmp_path, capsys, can_isolate):
    write_bot("alpha", tmp_path)
    isolation = [] if can_isolate else ["--no-isolation"]
    assert main([str(tmp_path), "--rounds", "1", *isolation]) == 0
    capsys.readouterr()
    assert main([str(tmp_path), "--rounds", "2", *isolation]) == 2
    err = capsys.readouterr().err
    assert "played with rounds 1" in err and err.count("\n") == 1


SLOW = """
import json
import os
import time
from agents.obs import legal_actions

class Bot:
    def __init__(self):
        try:  # unisolated: the test checks these pids
            open(os.path.join("pids", str(os.getpid())), "w").close()
        except OSError:  # isolated (a read-only folder): a sleeper the test looks for in /proc
            if os.fork() == 0:
                os.execv("/bin/sleep", ["TOKEN", "300"])

    def act(self, obs):
        time.sleep(0.05)
        return legal_actions(obs)[0]
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
def test_kill_9_mid_run_loses_no_finished_pairing(tmp_path, can_isolate):
    write_bot("a_fast", tmp_path)
    write_bot("b_fast", tmp_path)
    token = f"racko-sleeper-{os.getpid()}-{tmp_path.name}"
    # its pairings take seconds: time to kill
    (tmp_path / "z_slow.py").write_text(SLOW.replace("TOKEN", token))
    (tmp_path / "pids").mkdir()
    db = tmp_path / "league.sqlite"
    code = "import sys; from racko_apps.league.cli import main; sys.exit(main())"
    isolation = [] if can_isolate else ["--no-isolation"]
    proc = subprocess.Popen(
        [sys.executable, "-P", "-c", code, str(tmp_path), "--rounds", "2", *isolation]
        + ["--schedule", "round-robin"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    if rows(db):
                        break
                except sqlite3.OperationalError:  # tables not created yet, or locked
                    pass
            time.sleep(0.02)
        assert proc.poll() is None, "the league finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    before = rows(db)
    assert 1 <= len(before) < 3
    # the sandboxed bots die with the league: none is left running (it may be mid-move), and
    # isolated, nothing they started either
    if can_isolate:
        assert not list((tmp_path / "pids").iterdir())
        deadline = time.monotonic() + 60
        while leftovers(token, tmp_path) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert leftovers(token, tmp_path) == []
    else:
        pids = [int(p.name) for p in (tmp_path / "pids").iterdir()]
        assert pids
        deadline = time.monotonic() + 60
        while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in pids)
    log: list[str] = []
    run_league(tmp_path, rounds=2, log=log.append, isolate=can_isolate, schedule="round-robin")
    assert f"{len(before)} pairing(s) on record, {3 - len(before)} to play" in log[0]
    after = rows(db)
    assert len(after) == 3 and all(after[k] == v for k, v in before.items())


@pytest.mark.slow
def test_ctrl_c_stops_with_one_line_and_keeps_the_record(tmp_path):
    write_bot("a_fast", tmp_path)
    write_bot("b_fast", tmp_path)
    (tmp_path / "z_slow.py").write_text(SLOW.replace("TOKEN", "racko-sleeper"))
    (tmp_path / "pids").mkdir()
    db = tmp_path / "league.sqlite"
    code = "import sys; from racko_apps.league.cli import main; sys.exit(main())"
    proc = subprocess.Popen(
        [sys.executable, "-P", "-c", code, str(tmp_path), "--rounds", "2", "--no-isolation"]
        + ["--schedule", "round-robin"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # a caller that ignores SIGINT (nohup, a background job) would pass that on to the child
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if db.exists() and rows(db):
                    break
            except sqlite3.OperationalError:  # tables not created yet, or locked
                pass
            time.sleep(0.02)
        assert proc.poll() is None, "the league finished before Ctrl-C"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("racko league: stopped;") and str(db) in err
    assert 1 <= len(rows(db)) < 3
    # the ranking so far, marked provisional (test_league_queue.py: SIGTERM, and the rerun)
    assert (
        (tmp_path / "league.md")
        .read_text()
        .startswith("**Provisional ranking: the league was stopped (Ctrl-C)")
    )
    assert json.loads((tmp_path / "league.json").read_text())["provisional"] is True


def leftovers(token: str, folder: Path) -> list[int]:
    """Live processes named ``token`` or whose command line names ``folder`` (bwrap's)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if entry.name.isdigit() and alive(int(entry.name)):
            if argv[0] == token.encode() or any(str(folder).encode() in a for a in argv):
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie (an orphan may wait a moment to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def test_what_counts_as_a_bot(tmp_path):
    write_bot("alpha", tmp_path)  # also writes test_alpha.py: a test, not a bot
    (tmp_path / "_private.py").write_text("class Bot: pass\n")
    (tmp_path / "broken_syntax.py").write_text("class Bot(:\n")
    (tmp_path / "lonely.onnx").write_bytes(b"")
    entries, skipped = league_entries(tmp_path, [])
    assert [e.label for e in entries] == ["alpha"]
    assert any("broken_syntax.py" in s for s in skipped)
    assert any("lonely.onnx: no manifest" in s for s in skipped)


def test_a_bad_budget_is_one_clear_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path), "--budget", "-5"])
    assert exit_info.value.code == 2
    assert "--budget must be a number of minutes >= 0" in capsys.readouterr().err


@pytest.mark.slow
def test_the_pool_waits_for_no_result_past_its_deadline():
    from racko_apps.league.pool import LocalPool

    pool = LocalPool(2)
    began = time.monotonic()
    try:
        for fn, job in [(abs, -3), (time.sleep, 300), (time.sleep, 300)]:
            pool.submit(fn, job)
        got = [pool.next(deadline=began + 20) for _ in range(3)]
    finally:
        pool.close()  # the sleepers end with their workers
    assert got == [3, None, None]  # abs(-3), and no sleeper's result
    assert time.monotonic() - began < 120


def test_the_seed_is_secret_unless_given(tmp_path, capsys):
    league = ["--rounds", "1", "--schedule", "round-robin", "--baselines", "random", "heuristic"]
    assert main([str(tmp_path), "--workers", "1", *league]) == 0
    printed = capsys.readouterr().out
    data = json.loads((tmp_path / "league.json").read_text())
    seed = data["config"]["seed"]
    assert data["config"]["seed_secret"] and seed >= 0
    shown = printed + (tmp_path / "league.md").read_text() + (tmp_path / "league.html").read_text()
    assert str(seed) not in shown and "secret deals" in shown
    # run again (a new bot), without --seed: the league goes on with its record's seed
    assert main([str(tmp_path), "--workers", "1", *league, "expert"]) == 0
    assert json.loads((tmp_path / "league.json").read_text())["config"]["seed"] == seed
    # another league, another secret seed; a given seed is practice, and shown
    other = tmp_path / "other"
    assert main([str(tmp_path), "--workers", "1", "--db", str(other / "x.sqlite"), *league]) == 0
    assert json.loads((tmp_path / "league.json").read_text())["config"]["seed"] != seed
    report = run_league(
        tmp_path,
        rounds=1,
        seed=7,
        db=tmp_path / "p.sqlite",
        baselines=["random", "heuristic"],
        schedule="round-robin",
        workers=1,
        out=tmp_path / "p",
        log=lambda _: None,
    )
    assert not report["config"]["seed_secret"]
    assert "seed 7" in (tmp_path / "p" / "league.md").read_text()
