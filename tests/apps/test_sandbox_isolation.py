"""racko_apps.sandbox under bubblewrap: hostile submissions in a league and a grade beside a decent
bot. The decent bot ranks first, every hostile one forfeits or is contained, the database and the
other submissions are unchanged, and no process of theirs outlives the command.

Each attack writes what it managed into its failure reason or tries to leave a trace the test
looks for; a sandbox that let one through would fail the test (these are not stubs).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from racko_apps.grade.rubric import parse_rubric
from racko_apps.grade.run import grade
from racko_apps.league.cli import main as league_main

DECENT = """
import agents

class Bot:
    def __init__(self, num_players=2, seed=None):
        self.inner = agents.load("heuristic", num_players, seed=seed)

    def reset(self):
        self.inner.reset()

    def act(self, obs):
        return self.inner.act(obs)
"""

# Every hostile bot plays this way when its attack "succeeds" quietly: legal and weak.
WEAK = """
from agents.obs import legal_actions

class Weak:
    def reset(self):
        pass

    def act(self, obs):
        return legal_actions(obs)[0]
"""

HOSTILE = {
    # reads every submission it can find: the import fails with what it saw
    "plagiarist": """
import glob, os

class Bot:
    pass

seen = sorted({os.path.basename(p) for p in glob.glob("*.py") + glob.glob("../**/*.py", recursive=True)})
raise RuntimeError(f"saw {seen}")
""",
    # opens every *.sqlite it can reach (here, one folder up, the home) and writes to it
    "dbwriter": WEAK
    + """
import glob, os, sqlite3
for pattern in ("*.sqlite", "../*.sqlite", "../../*.sqlite", os.path.expanduser("~/*.sqlite"),
                "/tmp/**/*.sqlite", "/root/**/*.sqlite"):
    for path in glob.glob(pattern, recursive=True):
        try:
            with sqlite3.connect(path) as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS pwned (x)")
                conn.execute("UPDATE played SET wins = '[999, 999]'")
        except Exception:
            pass
for path in ("pwned.sqlite", "../pwned.sqlite", os.path.expanduser("~/pwned.sqlite")):
    try:
        sqlite3.connect(path).execute("CREATE TABLE pwned (x)")
    except Exception:
        pass

class Bot(Weak):
    pass
""",
    # SIGKILL to its parent on its 5th decision (and to pid 1, and to every pid it can see)
    "parentkiller": WEAK
    + """
import os, signal

class Bot(Weak):
    n = 0
    def act(self, obs):
        self.n += 1
        if self.n == 5:
            for pid in {os.getppid(), 1, *(int(p) for p in os.listdir("/proc") if p.isdigit())}:
                if pid != os.getpid():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
        return super().act(obs)
""",
    # 20 sleeping grandchildren, each in its own session (named TOKEN, so the test can find them)
    "spawner": WEAK
    + """
import os

class Bot(Weak):
    def __init__(self):
        for _ in range(20):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execv("/bin/sleep", ["TOKEN", "300"])
                os._exit(0)
""",
    "hog": WEAK
    + """
class Bot(Weak):
    def act(self, obs):
        self.big = bytearray(6 * 1024**3)
        return super().act(obs)
""",
    # forged replies on fd 1 (and on every other fd it has), a move that is always illegal for
    # the seat that reads it: if one were taken as a reply, a game would break
    "forger": WEAK
    + """
import os

class Bot(Weak):
    def act(self, obs):
        for fd in (1, 2, 3, 4, 5, 6):
            try:
                os.write(fd, b'{"ok": true, "action": 0, "seconds": 0}\\n')
            except OSError:
                pass
        return super().act(obs)
""",
    # network: connects to the test's listener on the host's loopback
    "caller": WEAK
    + """
import socket

class Bot(Weak):
    def __init__(self):
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=2).sendall(b"pwned")
        except OSError:
            pass
""",
    # writes into its own folder, one folder up and the home; fills /tmp; reads the grader's /proc
    "vandal": WEAK
    + """
import os

class Bot(Weak):
    def __init__(self):
        for path in ("vandal.py", "decent.py", "../vandal_was_here", os.path.expanduser("~/vandal_was_here")):
            try:
                with open(path, "a") as f:
                    f.write("# vandal\\n")
            except OSError:
                pass
        for fill in ("/tmp/fill", "/dev/shm/fill", "/dev/fill"):
            try:
                with open(fill, "wb") as f:
                    while True:
                        f.write(b"x" * (1 << 24))
            except OSError:
                pass
            if os.path.exists(fill):
                size = os.path.getsize(fill)
                os.remove(fill)
                if size > 1024**3:
                    raise RuntimeError(f"wrote {size} bytes to {fill}")
        seen = [p for p in os.listdir("/proc") if p.isdigit()]
        if len(seen) > 3:
            raise RuntimeError(f"saw {len(seen)} processes: {seen[:8]}")
""",
    # a fork bomb, bounded so that a sandbox that failed to hold it would not sink the machine
    "forkbomb": WEAK
    + """
import os

class Bot(Weak):
    def __init__(self):
        made = 0
        for _ in range(600):
            try:
                pid = os.fork()
            except OSError as err:
                raise RuntimeError(f"fork failed after {made}: {err}")
            if pid == 0:
                os.execv("/bin/sleep", ["TOKEN", "300"])
            made += 1
""",
    "loud": WEAK
    + """
class Bot(Weak):
    def act(self, obs):
        print("x" * 5_000_000)
        return super().act(obs)
""",
}


def checksums(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def survivors(token: str, folder: Path) -> list[str]:
    """Processes named ``token`` (the spawner's grandchildren) or sandboxes of ``folder``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z":
            continue
        if argv[0] == token.encode() or any(str(folder).encode() in a for a in argv):
            found.append(f"{entry.name}: {b' '.join(argv)[:120]!r}")
    return found


@pytest.fixture
def arena(tmp_path, isolation):
    """A course folder: other.sqlite (another course) beside the class folder of submissions."""
    token = f"racko-test-{os.getpid()}-{tmp_path.name}"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            received.append(conn.recv(100) or b"(connected)")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    course = tmp_path / "class"
    course.mkdir()
    (course / "decent.py").write_text(DECENT)
    port = listener.getsockname()[1]
    for name, source in HOSTILE.items():
        text = source.replace("TOKEN", token).replace("PORT", str(port))
        (course / f"{name}.py").write_text(text)
    with sqlite3.connect(tmp_path / "other.sqlite") as conn:
        conn.execute("CREATE TABLE pairings (a_wins)")
        conn.execute("INSERT INTO pairings VALUES (1)")
    yield course, token, received
    stop.set()
    thread.join()
    listener.close()


def assert_contained(course: Path, token: str, received: list[bytes], before: dict) -> None:
    after = checksums(course.parent)
    assert {k: after.get(k) for k in before} == before  # submissions, other.sqlite unchanged
    own = {"league.sqlite", "reports/league.md", "reports/league.json", "reports/league.html"}
    assert set(after) - set(before) <= own  # nothing new but the league's own record
    assert received == [], "a bot reached the host's network"
    deadline = time.monotonic() + 10
    while survivors(token, course) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert survivors(token, course) == []


@pytest.mark.slow
def test_hostile_bots_in_a_league_forfeit_or_are_contained(arena, capsys):
    course, token, received = arena
    db, out = course.parent / "league.sqlite", course.parent / "reports"
    before = checksums(course.parent)
    (course / "loud.py").unlink()  # graded below: its forfeits would only slow the league
    before = checksums(course.parent)
    args = [str(course), "--rounds", "1", "--db", str(db), "--out", str(out), "--max-forfeits", "1"]
    assert league_main([*args, "--move-seconds", "5", "--memory-mb", "1024"]) == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "league.json").read_text())
    assert "isolated" not in report and "WARNING" not in printed
    names = [b["name"] for b in report["bots"]]
    assert names[0] == "decent", printed
    skipped = " | ".join(report["skipped"])
    # what the plagiarist and the vandal saw: only their own file, only their own processes
    assert "plagiarist: does not load: cannot load bot: RuntimeError: saw ['plagiarist.py']" in (
        skipped
    ), skipped
    assert "vandal" in names, skipped
    made = int(
        skipped.split("forkbomb: does not load: cannot load bot: RuntimeError: fork failed after ")[
            1
        ].split(":")[0]
    )
    assert made <= 256  # Limits.processes
    forfeits = {b["name"]: b["forfeits"] for b in report["bots"]}
    assert forfeits["hog"] > 0 and forfeits["forger"] > 0
    assert forfeits["decent"] == 0
    lines = [line for p in report["pairings"] for line in p["forfeits"]]
    assert any("hog forfeits" in x and "ran out of memory" in x for x in lines), lines
    assert all("\n" not in x for x in lines)
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        wins = [w for (r,) in conn.execute("SELECT wins FROM played") for w in json.loads(r)]
    assert tables == {"meta", "played", "played_rounds"} and max(wins) <= 2
    assert sorted(p.name for p in out.iterdir()) == ["league.html", "league.json", "league.md"]
    assert_contained(course, token, received, before)


RUBRIC = {
    "players": 2,
    "seed": 0,
    "positions": 2,
    "rounds": 2,
    "time_limit": 1.0,
    "kill_after": 5.0,
    "memory_mb": 1024,
    "max_forfeits": 2,
    "criteria": [
        {"name": "loads", "check": "loads", "points": 10},
        {"name": "legal", "check": "legal", "points": 10},
        {
            "name": "against random",
            "check": "win_rate",
            "opponent": "random",
            "thresholds": [{"win_rate": 0.5, "points": 10}],
        },
    ],
}


@pytest.mark.parametrize(
    "name", ["plagiarist", "dbwriter", "parentkiller", "spawner", "forkbomb", "loud"]
)
def test_hostile_bots_in_a_grade_forfeit_or_are_contained(arena, name, monkeypatch):
    course, token, received = arena
    rubric = parse_rubric(RUBRIC, "test")
    decent = grade("decent:Bot", rubric, folder=course)
    before = checksums(course.parent)
    report = grade(f"{name}:Bot", rubric, folder=course)
    assert report["total"] < decent["total"] == decent["max_total"]
    assert all("\n" not in line for line in report["failures"])
    if name == "plagiarist":
        assert "saw ['plagiarist.py']" in report["criteria"][0]["result"]
    if name == "loud":
        assert any("printed 5000001 characters" in line for line in report["failures"])
    assert_contained(course, token, received, before)


def test_the_commands_refuse_without_bubblewrap_unless_told(tmp_path, monkeypatch, capsys):
    from racko_apps.grade.cli import main as grade_main
    from racko_apps.sandbox import bwrap

    (tmp_path / "decent.py").write_text(DECENT)
    monkeypatch.setattr(bwrap, "_isolation_checked", None)
    monkeypatch.setattr(bwrap.shutil, "which", lambda name: None)
    monkeypatch.chdir(tmp_path)
    assert grade_main(["decent:Bot", "--rubric", "quick"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "apt-get install bubblewrap" in err and "--no-isolation" in err
    assert league_main([str(tmp_path), "--rounds", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "apt-get install bubblewrap" in err
    assert not (tmp_path / "league.sqlite").exists()
    # --no-isolation: it runs, and every report says at its top that the bots were not isolated
    args = [str(tmp_path), "--rounds", "1", "--baselines", "random", "--no-isolation"]
    assert league_main(args) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("**WARNING: the bots were not isolated")
    assert (tmp_path / "league.md").read_text().startswith("**WARNING: the bots were not isolated")
    page = (tmp_path / "league.html").read_text()
    assert page.index("not isolated") < page.index("<h1>")
    data = json.loads((tmp_path / "league.json").read_text())
    assert list(data)[:2] == ["isolated", "warning"] and data["isolated"] is False
    report = tmp_path / "grade.json"
    assert (
        grade_main(["decent:Bot", "--rubric", "quick", "--no-isolation", "--json", str(report)])
        == 0
    )
    assert capsys.readouterr().out.startswith("**WARNING: the bots were not isolated")
    assert list(json.loads(report.read_text()))[:2] == ["isolated", "warning"]


def test_a_bots_processes_end_with_its_game_and_the_bot_plays_on(arena):
    from racko_apps.sandbox.bot import SandboxedBot
    from racko_env import racko_v1

    course, token, _ = arena
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    with SandboxedBot("spawner:Bot", course, isolate=True) as bot:
        bot.start()

        def sleepers() -> list[str]:
            return [s for s in survivors(token, course) if "bwrap" not in s]

        deadline = time.monotonic() + 10
        while len(sleepers()) < 20 and time.monotonic() < deadline:
            bot.reset()  # its processes run (and fork) only during its requests
            time.sleep(0.05)
        assert len(sleepers()) == 20
        bot.end_game()
        assert sleepers() == []
        assert obs["action_mask"][bot.act(obs)] == 1
    assert survivors(token, course) == []


BURNER = (
    WEAK
    + """
import os

class Bot(Weak):
    started = False

    def act(self, obs):
        if not self.started:  # CPU burners left running for the other bot's turns
            self.started = True
            for _ in range(4):
                r, w = os.pipe()  # close-on-exec: EOF on r once the child has exec'd
                if os.fork() == 0:
                    os.close(r)
                    os.execv("/bin/sh", ["TOKEN", "-c", "while :; do :; done"])
                os.close(w)
                os.read(r, 1)  # answer only once every burner runs under its own name
                os.close(r)
        return super().act(obs)
"""
)


def cpu_ticks(pid: str) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def test_a_bot_runs_only_during_its_own_turn(arena):
    """What a bot leaves running is stopped between its requests: it cannot slow the bot whose
    turn it is (and so make it time out), nor compute on the other's time."""
    from racko_apps.sandbox.bot import SandboxedBot
    from racko_env import racko_v1

    course, token, _ = arena
    (course / "burner.py").write_text(BURNER.replace("TOKEN", token))
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    with SandboxedBot("burner:Bot", course, isolate=True) as bot:
        bot.act(obs)
        burners = [s.split(":")[0] for s in survivors(token, course) if "bwrap" not in s]
        assert len(burners) == 4

        def states() -> set[str]:
            return {
                Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0] for p in burners
            }

        deadline = time.monotonic() + 2.0  # SIGSTOP is delivered asynchronously: allow for that
        while states() != {"T"} and time.monotonic() < deadline:
            time.sleep(0.01)
        assert states() == {"T"}, states()  # stopped
        before = [cpu_ticks(p) for p in burners]
        time.sleep(0.5)
        assert [cpu_ticks(p) for p in burners] == before
        assert obs["action_mask"][bot.act(obs)] == 1  # they run again on its turn, and it plays
    assert survivors(token, course) == []
