"""Nothing a bot can read holds the secret seed: not its environment, its argv, the files it can
reach, the ``/proc`` of the processes it can see, nor the seeds it is dealt.

A hostile submission (``SPY``) searches all of these for the seed of a graded run (``racko
grade --secret``), a Gradescope kit's (``autograde``) and a league's (the secret one it draws),
under every isolation that runs here, and says what it found in every failure line. It finds
its own canary, planted in its folder (so the search is seen to read), and nothing else. Under
isolation ``none`` a bot can read anything the grader can (every report says so): there it
searches everything but the teacher's files.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml

from racko_apps.grade.cli import main as grade_main
from racko_apps.grade.secret import SECRET_FILE, secret_text
from racko_apps.gradescope.autograder import autograde
from racko_apps.league.cli import main as league_main
from racko_apps.sandbox.bwrap import isolation_available
from racko_apps.sandbox.seeds import told, told_seed
from racko_apps.sandbox.user import user_available

SECRET = 6_917_529_027_641_081_857  # a 63-bit seed that no other number of a run looks like
CANARY = "canary-5f2d9c"

# The seed is written in its source split in two, so that the file itself does not hold it.
SPY = '''
import os
import random
import sys
from pathlib import Path

from agents.base import Bot as Base

SECRET = int("%(head)s" + "%(tail)s")
NEEDLES = {"seed": str(SECRET), "canary": "%(canary_head)s" + "%(canary_tail)s"}
GUESSES = %(guesses)r  # the teacher's files, where the spy may guess they are
DEALS = set()
_rng = random.Random(SECRET)
for _ in range(256):
    DEALS.add(_rng.getrandbits(63))
INVERSE = pow(7919, -1, 2**63)


def places():
    """Every text this process can read that could hold the seed, by where it was read."""
    yield "environ", "\\n".join(f"{k}={v}" for k, v in os.environ.items())
    yield "argv", " ".join(sys.argv)
    home = Path(os.environ.get("HOME", "/nonexistent"))
    files = [*Path.cwd().rglob("*"), *(home.iterdir() if home.is_dir() else []), *map(Path, GUESSES)]
    for path in files if GUESSES else [Path(__file__).with_name("canary.txt")]:
        if path.is_file() and path.name != Path(__file__).name:
            try:
                yield str(path), path.read_bytes()[:1 << 22].decode("latin-1")
            except OSError:
                pass
    for pid in os.listdir("/proc"):
        for name in ("cmdline", "environ"):
            if pid.isdigit():
                try:
                    yield f"/proc/{pid}/{name}", open(f"/proc/{pid}/{name}", "rb").read().decode("latin-1")
                except OSError:
                    pass


def dealt(seed):
    """Whether a seed the bot is given tells the secret or a deal's seed."""
    if seed is None:
        return False
    if seed == SECRET or seed in DEALS:
        return True
    return any(
        (seed - salt * 104729 - s) * INVERSE %% 2**63 in DEALS for salt in range(24) for s in range(4)
    )


FOUND = sorted({f"{what}@{where}" for where, text in places() for what, needle in NEEDLES.items() if needle in text})


class Bot(Base):
    def __init__(self, num_players=2, seed=None):
        self.found = list(FOUND)
        self.seed(seed)

    def seed(self, seed):
        if dealt(seed):
            self.found.append("seed@its seed")

    def act(self, obs):
        raise RuntimeError("found " + ", ".join(self.found))
'''


def isolations() -> list[str]:
    out = ["none"]
    if isolation_available():
        out.append("bwrap")
    if user_available():
        out.append("user")
    return out


@pytest.fixture
def course():
    """A teacher's folder that other users may pass through (as a home or /srv is), with the
    submissions in it; removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix="racko-course-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def write_spy(folder: Path, isolation: str, guesses: list[Path]) -> None:
    """The spy as ``folder/spy/``, with its canary; it reads the files it can reach and guesses
    the teacher's, unless the isolation is none (then it reads only its canary)."""
    package = folder / "spy"
    package.mkdir(parents=True, mode=0o755)
    digits = str(SECRET)
    source = SPY % {
        "head": digits[:9],
        "tail": digits[9:],
        "canary_head": CANARY[:6],
        "canary_tail": CANARY[6:],
        "guesses": [] if isolation == "none" else [str(p) for p in guesses],
    }
    (package / "__init__.py").write_text(source)
    (package / "canary.txt").write_text(CANARY)
    for path in package.iterdir():
        os.chmod(path, 0o644)


def assert_found_only_its_canary(lines: list[str]) -> None:
    found = [line for line in lines if "found " in line]
    assert found, lines  # the spy played and spoke
    for line in found:
        assert "seed@" not in line, line
        assert "canary@" in line, line


def rubric(folder: Path) -> Path:
    """A rubric of a few deals against random, with forfeits enough for every deal to be dealt."""
    data = {
        "players": 2,
        "seed": 0,
        "positions": 2,
        "rounds": 3,
        "time_limit": 1.0,
        "kill_after": 10.0,
        "round_seconds": 60.0,
        "memory_mb": 1024,
        "max_forfeits": 1000,
        "rules": {},
        "criteria": [
            {"name": "loads", "check": "loads", "points": 10},
            {
                "name": "against random",
                "check": "win_rate",
                "opponent": "random",
                "thresholds": [{"win_rate": 0.5, "points": 10}],
            },
        ],
    }
    path = folder / "rubric.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_told_seed_is_the_same_for_the_same_seed_and_leads_back_to_none():
    deal = random.Random(SECRET).getrandbits(63)
    mixed = [(deal * 7919 + salt * 104729 + s) % 2**63 for salt in range(4) for s in range(2)]
    told_seeds = [told_seed(x) for x in mixed]
    assert told_seeds == [told_seed(x) for x in mixed] and len(set(told_seeds)) == 8
    inverse = pow(7919, -1, 2**63)
    for seed in told_seeds:
        assert 0 <= seed < 2**63 and seed not in (deal, SECRET)
        assert all(
            (seed - k * 104729 - s) * inverse % 2**63 != deal for k in range(4) for s in (0, 1)
        )
    assert told({"cmd": "tables", "items": [{"cmd": "seed", "seed": 5}]})["items"][0]["seed"] == (
        told_seed(5)
    )
    assert told_seed(None) is None


@pytest.mark.parametrize(
    "isolation",
    [pytest.param(i, marks=[pytest.mark.slow] * (i == "user")) for i in isolations()],
)
def test_a_graded_run_shows_no_bot_its_secret(course, isolation, monkeypatch, capsys):
    secret = course / "kit" / SECRET_FILE
    secret.parent.mkdir(mode=0o755)
    secret.write_text(secret_text(SECRET))
    os.chmod(secret, 0o644)  # as a copy or an unzip may leave it
    submissions = course / "submissions"
    write_spy(submissions, isolation, [secret])
    monkeypatch.chdir(submissions)
    out = course / "report.json"
    args = ["spy:Bot", "--rubric", str(rubric(course)), "--secret", str(secret)]
    assert grade_main([*args, "--isolation", isolation, "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["seed"] == SECRET  # the teacher's report keeps it
    assert_found_only_its_canary(report["failures"])


@pytest.mark.slow
@pytest.mark.parametrize("isolation", isolations())
def test_a_gradescope_kit_shows_no_bot_its_secret(course, isolation, capsys):
    (course / "source").mkdir(mode=0o755)
    secret = course / "source" / SECRET_FILE
    secret.write_text(secret_text(SECRET))
    os.chmod(secret, 0o644)
    write_spy(course / "submission", isolation, [secret])
    results = autograde(
        course,
        rubric(course / "source"),
        isolation=isolation,
        secret=secret,
        stdout_visibility=None,
    )
    assert results["tests"][0]["output"] == "loads"
    assert_found_only_its_canary(capsys.readouterr().out.splitlines())  # the teacher's report


@pytest.mark.slow
@pytest.mark.parametrize("isolation", isolations())
def test_a_league_shows_no_bot_its_secret(course, isolation, monkeypatch, capsys):
    monkeypatch.setattr("racko_apps.league.run.secrets.randbits", lambda bits: SECRET)
    folder = course / "league"
    folder.mkdir(mode=0o755)
    db, report = folder / "league.sqlite", folder / "league.json"
    write_spy(folder, isolation, [db, report])
    args = [str(folder), "--rounds", "2", "--schedule", "round-robin", "--workers", "1"]
    args += ["--baselines", "random", "--isolation", isolation, "--allow", "*"]
    assert league_main(args) == 0
    # a late submission: the rerun plays its pairings, with the first run's report there to read
    shutil.copytree(folder / "spy", folder / "late_spy")
    assert league_main(args) == 0
    data = json.loads(report.read_text())
    assert data["config"]["seed_secret"] is True and data["config"]["seed"] == SECRET
    assert_found_only_its_canary([line for p in data["pairings"] for line in p["forfeits"]])
