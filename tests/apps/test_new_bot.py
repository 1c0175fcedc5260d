"""racko new-bot writes a bot that plays at once; the racko commands work from any folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agents
from racko_apps.grade.rubric import load_rubric
from racko_apps.grade.run import grade
from racko_apps.new_bot.starter import main, write_bot

REPO = Path(__file__).resolve().parents[2]


def racko(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the ``racko`` command as its console script does: the current folder is NOT on
    sys.path (-P), the toolkit is this checkout (PYTHONPATH), whatever files ``cwd`` holds."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = "import sys; from racko_apps.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-P", "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_new_bot_writes_a_bot_and_a_test(tmp_path, capsys):
    assert main(["my_bot", "--dir", str(tmp_path)]) == 0
    assert (tmp_path / "my_bot.py").is_file() and (tmp_path / "test_my_bot.py").is_file()
    assert "racko grade my_bot:Bot" in capsys.readouterr().out
    before = (tmp_path / "my_bot.py").read_text()
    assert main(["my_bot", "--dir", str(tmp_path)]) == 2  # never overwrites
    assert "already exists" in capsys.readouterr().err
    assert (tmp_path / "my_bot.py").read_text() == before
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("9lives", "not a valid Python module name"),
        ("class", "not a valid Python module name"),
        ("my-bot", "not a valid Python module name"),
        ("test_x", "may not start with 'test_'"),
        ("numpy", "installed Python module"),
        ("random", "installed Python module"),
        ("agents", "installed Python module"),
    ],
)
def test_bad_names_are_refused(tmp_path, capsys, name, why):
    assert main([name, "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert why in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_new_bot_passes_grade_and_its_own_test(tmp_path, can_isolate):
    write_bot("starter", tmp_path)
    report = grade(
        "starter:Bot", load_rubric("quick"), seed=0, folder=tmp_path, isolate=can_isolate
    )
    points = {c["name"]: c["points"] for c in report["criteria"]}
    assert points["loads"] == 10 and points["legal moves"] == 20 and points["time limit"] == 10
    assert report["total"] == 65 and not report["failures"]  # docs/coursework.md
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_starter.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_agents_load_finds_the_new_bot_in_the_current_folder(tmp_path):
    write_bot("here_bot", tmp_path)
    code = (
        "import agents, sys; b = agents.load('here_bot:Bot', num_players=3); "
        "print(type(b).__module__, 'here_bot' in sys.modules, "
        "any(p in ('', '.') or p.endswith('here') for p in sys.path))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-P", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["here_bot", "True", "False"]  # the folder left sys.path again


def test_shipped_bots_load_by_name():
    for n in (2, 3, 4):
        bot = agents.load(f"racko_{n}p", num_players=n)
        assert bot.name == f"racko_{n}p"
    with pytest.raises(ValueError, match="trained for 3 players"):
        agents.load("racko_3p", num_players=2)
    with pytest.raises(ValueError, match="racko_2p"):
        agents.load("racko_9p")


@pytest.mark.slow  # four commands; quick: the installed script ignores a student's train.py
def test_racko_commands_work_from_a_folder_with_a_students_train_and_agents(tmp_path, can_isolate):
    """A student's own train.py and agents.py must not replace the toolkit's packages."""
    for name in ("train", "agents", "racko_env"):
        (tmp_path / f"{name}.py").write_text(f"raise SystemExit('student {name}.py imported')\n")
    new = racko(["new-bot", "mine"], tmp_path)
    assert new.returncode == 0, new.stderr
    ev = racko(
        ["evaluate", "--bots", "mine:Bot", "racko_2p", "--rounds", "2", "--no-progress"], tmp_path
    )
    assert ev.returncode == 0, ev.stderr
    assert "mine:Bot" in ev.stdout and "racko_2p" in ev.stdout
    isolation = [] if can_isolate else ["--no-isolation"]
    gr = racko(["grade", "mine:Bot", "--rubric", "quick", "--json", "g.json", *isolation], tmp_path)
    assert gr.returncode == 0, gr.stderr
    assert json.loads((tmp_path / "g.json").read_text())["total"] == 65
    tr = racko(["train", "--help"], tmp_path)
    assert tr.returncode == 0 and "--config" in tr.stdout, tr.stderr


@pytest.mark.slow  # three commands in fresh processes; the layer test checks the imports
def test_evaluate_grade_and_league_need_no_torch(tmp_path, can_isolate):
    """Coursework machines may have no torch: the front ends must not import it."""
    write_bot("solo", tmp_path)
    isolation = [] if can_isolate else ["--no-isolation"]
    block = "import sys; sys.modules['torch'] = None; from racko_apps.cli import main; "
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for args in (
        ["evaluate", "--bots", "solo:Bot", "heuristic", "--rounds", "1", "--no-progress"],
        ["grade", "solo:Bot", "--rubric", "quick", *isolation],
        ["league", ".", "--rounds", "1", "--baselines", "random", *isolation],
    ):
        run = subprocess.run(
            [sys.executable, "-P", "-c", block + f"sys.exit(main({args!r}))"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 0, (args, run.stderr[-2000:])


def test_the_installed_racko_script_ignores_a_students_train_py(tmp_path):
    """The real console script, when the installed racko is this checkout (as in CI)."""
    import shutil

    script = shutil.which("racko")
    where = subprocess.run(
        [sys.executable, "-P", "-c", "import racko_apps; print(racko_apps.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if script is None or Path(where).resolve() != (REPO / "racko_apps" / "__init__.py"):
        pytest.skip("the installed racko is another checkout; the -P tests above cover this one")
    (tmp_path / "train.py").write_text("raise SystemExit('student train.py imported')\n")
    (tmp_path / "agents.py").write_text("raise SystemExit('student agents.py imported')\n")
    write_bot("mine", tmp_path)
    run = subprocess.run(
        [script, "evaluate", "--bots", "mine:Bot", "random", "--rounds", "1", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "mine:Bot" in run.stdout
