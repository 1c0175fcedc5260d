"""A bot written as a function ``act(observation)`` is graded and plays in the league, sandboxed,
as a ``class Bot`` is; ``racko new-bot --function`` writes one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from racko_apps.grade.rubric import load_rubric
from racko_apps.grade.run import grade
from racko_apps.league.run import run_league
from racko_apps.league.submissions import league_entries
from racko_apps.new_bot.starter import main, write_bot

REPO = Path(__file__).resolve().parents[2]


def test_the_function_starter_earns_what_the_class_starter_earns(tmp_path, can_isolate, capsys):
    """The same policy as a function: the same 65 points on the quick rubric (docs/coursework.md),
    played from its sandbox; and its own test passes."""
    assert main(["fun", "--function", "--dir", str(tmp_path)]) == 0
    assert "racko grade fun:act" in capsys.readouterr().out
    assert "def act(observation" in (tmp_path / "fun.py").read_text()
    report = grade("fun:act", load_rubric("quick"), seed=0, folder=tmp_path, isolate=can_isolate)
    assert report["total"] == 65 and not report["failures"], report["criteria"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_fun.py"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_broken_function_forfeits_like_a_broken_class(tmp_path, can_isolate):
    (tmp_path / "crashy.py").write_text("def act(observation):\n    return 1 / 0\n")
    report = grade("crashy:act", load_rubric("quick"), seed=0, folder=tmp_path, isolate=can_isolate)
    points = {c["name"]: c["points"] for c in report["criteria"]}
    assert points["loads"] == 10 and points["legal moves"] == 0 and report["total"] == 10
    assert any("ZeroDivisionError" in line for line in report["failures"])


@pytest.mark.slow  # a whole league; quick: the grade tests above
def test_the_league_plays_a_function_beside_a_class(tmp_path, can_isolate):
    write_bot("klass", tmp_path)
    write_bot("fun", tmp_path, kind="function")
    (tmp_path / "helpers.py").write_text("def action(observation):\n    return 0\n")  # no act
    entries, skipped = league_entries(tmp_path, [])
    assert {e.label: e.spec for e in entries} == {"klass": "klass:Bot", "fun": "fun:act"}
    assert any("helpers.py" in line and "function act" in line for line in skipped)
    report = run_league(tmp_path, rounds=1, log=lambda _: None, isolate=can_isolate)
    assert {b["name"]: b["rounds"] for b in report["bots"]} == {"klass": 2, "fun": 2}
    assert all(b["forfeits"] == 0 for b in report["bots"]), report["bots"]
