"""racko grade: the documented points (docs/coursework.md) on the quick rubric, seed 0."""

from __future__ import annotations

import json

import pytest
import yaml
from test_sandbox import write_broken

from racko_apps.grade.cli import main
from racko_apps.grade.positions import sample_positions
from racko_apps.grade.report import format_report, student_view
from racko_apps.grade.rubric import Criterion, RubricError, load_rubric, parse_rubric
from racko_apps.grade.run import grade
from racko_apps.grade.scoring import win_rate_points
from racko_apps.sandbox.toolkit import DEFAULT_ALLOW
from racko_env.actions import Phase

# docs/coursework.md, "Points on the quick rubric": total points at seed 0.
DOCUMENTED = {"random": 40, "heuristic": 75, "expert": 100}
BROKEN = {"Illegal": 10, "Crash": 10, "Loop": 10, "Loud": 10}


@pytest.mark.parametrize("bot", sorted(DOCUMENTED))
def test_baselines_earn_the_documented_points(bot):
    report = grade(bot, load_rubric("quick"), seed=0)
    assert report["total"] == DOCUMENTED[bot], report["criteria"]
    assert report["max_total"] == 100 and not report["failures"]


@pytest.fixture
def quick_with_short_kill(tmp_path):
    """The quick rubric with a 2 s kill, so the endless loop costs seconds in CI."""
    data = yaml.safe_load(load_rubric_text())
    data["kill_after"] = 2.0
    path = tmp_path / "rubric.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_rubric(path)


def load_rubric_text() -> str:
    from importlib import resources

    return resources.files("racko_apps.grade.rubrics").joinpath("quick.yaml").read_text()


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_bots_earn_the_documented_points(tmp_path, quick_with_short_kill, name, can_isolate):
    write_broken(tmp_path)
    report = grade(
        f"broken:{name}", quick_with_short_kill, seed=0, folder=tmp_path, isolate=can_isolate
    )
    assert report["total"] == BROKEN[name], report["criteria"]
    points = {c["name"]: c["points"] for c in report["criteria"]}
    assert points["loads"] == 10 and points["legal moves"] == 0
    assert report["failures"] and all("\n" not in line for line in report["failures"])
    assert all(line.startswith(f"broken:{name}") for line in report["failures"])
    expected = {
        "Illegal": "illegal action 99",
        "Crash": "RuntimeError: boom",
        "Loop": "did not answer within 2 s",
        "Loud": "printed 1000001 characters",
    }[name]
    assert expected in report["failures"][0]


def test_a_bot_that_does_not_load_gets_nothing(tmp_path, capsys, monkeypatch, can_isolate):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text("import nonexistent_module_xyz\nclass Bot: pass\n")
    isolation = [] if can_isolate else ["--no-isolation"]
    assert main(["bad:Bot", "--rubric", "quick", "--json", "out/g.json", *isolation]) == 0
    report = json.loads((tmp_path / "out" / "g.json").read_text())
    assert report["total"] == 0
    assert "nonexistent_module_xyz" in report["criteria"][0]["result"]
    assert "does not load" in capsys.readouterr().out


def test_positions_cover_every_decision_and_follow_the_seed():
    a = sample_positions(2, {}, seed=0, per_phase=4)
    b = sample_positions(2, {}, seed=0, per_phase=4)
    c = sample_positions(2, {}, seed=1, per_phase=4)
    assert set(a) == {Phase.DRAW, Phase.KEEP_OR_DISCARD, Phase.PLACE}
    assert all(len(v) == 4 for v in a.values())
    same = all(
        (x["observation"] == y["observation"]).all()
        for p in a
        for x, y in zip(a[p], b[p], strict=True)
    )
    differ = any(
        (x["observation"] != y["observation"]).any()
        for p in a
        for x, y in zip(a[p], c[p], strict=True)
    )
    assert same and differ


def test_seed_flag_overrides_the_rubric(tmp_path):
    out = tmp_path / "g.json"
    assert main(["heuristic", "--rubric", "quick", "--seed", "7", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["seed"] == 7


GOOD = {
    "players": 2,
    "seed": 0,
    "positions": 1,
    "rounds": 1,
    "time_limit": 1,
    "kill_after": 5,
    "memory_mb": 512,
    "max_forfeits": 1,
    "criteria": [{"name": "loads", "check": "loads", "points": 1}],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rounds": 0}, "rounds must be positive"),
        ({"players": 7}, r"players must be from 1 \(solitaire\) to 4"),
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"allow": "agents.obs"}, "allow must be a list of module patterns"),
        ({"rules": {"turn_limit": -3}}, "rules:"),
        ({"criteria": []}, "criteria must be a non-empty list"),
        ({"criteria": [{"name": "x", "check": "magic", "points": 1}]}, "check must be one of"),
        (
            {"criteria": [{"name": "w", "check": "win_rate", "opponent": "random"}]},
            "thresholds must be a non-empty list",
        ),
        (
            {
                "criteria": [
                    {
                        "name": "w",
                        "check": "win_rate",
                        "opponent": "random",
                        "thresholds": [{"win_rate": 1.5, "points": 1}],
                    }
                ]
            },
            "win_rate must be from 0 to 1",
        ),
        (
            {
                "criteria": [
                    {
                        "name": "w",
                        "check": "win_rate",
                        "opponent": "random",
                        "score": "median",
                        "thresholds": [{"win_rate": 0.5, "points": 1}],
                    }
                ]
            },
            "score must be one of steps, interpolate, lower_bound",
        ),
    ],
)
def test_bad_rubrics_are_named_in_one_line(change, message):
    with pytest.raises(RubricError, match=message) as info:
        parse_rubric({**GOOD, **change}, "t.yaml")
    assert "\n" not in str(info.value) and "t.yaml" in str(info.value)


def test_rubric_file_errors_are_one_line_on_the_command_line(tmp_path, capsys):
    bad = tmp_path / "r.yaml"
    bad.write_text("players: [unclosed\n")
    assert main(["random", "--rubric", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("racko grade: error: rubric") and "not valid YAML" in err
    assert "\n" not in err
    assert main(["random", "--rubric", str(tmp_path / "missing.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_shipped_rubrics_are_valid():
    assert load_rubric().max_points == 100
    assert load_rubric("quick").max_points == 100


def test_a_practice_run_says_so_in_one_line(capsys):
    assert main(["random", "--rubric", "quick"]) == 0
    out = capsys.readouterr().out
    practice = [line for line in out.splitlines() if line.startswith("practice: ")]
    assert practice == [
        "practice: seed 0 is the rubric's public seed; the graded run deals from a secret one"
    ]


WRAPPER = """import agents

_shipped = agents.load("racko_2p")


def act(observation):
    return _shipped.act(observation)
"""


def test_a_submission_that_wraps_a_shipped_bot_is_flagged(tmp_path, can_isolate):
    (tmp_path / "wrapper.py").write_text(WRAPPER)
    data = yaml.safe_load(load_rubric_text())
    data["allow"] = ["*"]  # a rubric that lets submissions use the whole toolkit
    rubric = parse_rubric(data, "allow-all.yaml")
    report = grade("wrapper:act", rubric, folder=tmp_path, isolate=can_isolate)
    rows = {row["bot"]: row for row in report["agreement"]["bots"]}
    assert set(rows) == {"expert", "racko_2p"}
    assert rows["racko_2p"]["agreement"] == 1.0 and rows["racko_2p"]["flagged"]
    assert len(rows["racko_2p"]["sha256"]) == 64 and rows["racko_2p"]["file"] == "racko_2p.onnx"
    assert not rows["expert"]["flagged"]
    text = format_report(report)
    assert "agreement with the shipped bots" in text and "**FLAGGED**" in text
    assert "agreement" not in student_view(report)


@pytest.mark.parametrize(
    ("scoring", "rate", "points"),
    [
        ("steps", 0.6, 15.0),
        ("interpolate", 0.6, 17.5),
        ("interpolate", 0.2, 0.0),
        ("interpolate", 0.9, 20.0),
    ],
)
def test_win_rate_scoring_modes(scoring, rate, points):
    steps = ((0.3, 5.0), (0.5, 15.0), (0.7, 20.0))
    crit = Criterion("w", "win_rate", 20.0, "heuristic", steps, scoring=scoring)
    earned, _ = win_rate_points(crit, {"win_rate": rate, "wins": rate * 200, "rounds": 200})
    assert earned == pytest.approx(points)


def test_the_lower_bound_needs_the_rounds_to_show_it():
    steps = ((0.5, 10.0),)
    crit = Criterion("w", "win_rate", 10.0, "heuristic", steps, scoring="lower_bound")
    few, shown = win_rate_points(crit, {"win_rate": 0.6, "wins": 12, "rounds": 20})
    many, _ = win_rate_points(crit, {"win_rate": 0.6, "wins": 1200, "rounds": 2000})
    assert few == 0.0 and shown["interval_95"][0] < 0.5 < 0.6 < shown["interval_95"][1]
    assert many == 10.0


def test_a_missing_staff_opponent_is_named_before_any_game(tmp_path):
    data = yaml.safe_load(load_rubric_text())
    data["criteria"][-1]["opponent"] = "staff/strong.onnx"
    path = tmp_path / "course.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(RubricError, match="opponent 'staff/strong.onnx' needs staff/strong.onnx"):
        load_rubric(path)


def test_a_staff_python_opponent_plays_sandboxed_from_the_rubrics_folder(
    tmp_path, monkeypatch, can_isolate
):
    from racko_apps.new_bot.starter import write_bot

    course = tmp_path / "course"
    course.mkdir()
    write_bot("staffbot", course)
    data = yaml.safe_load(load_rubric_text())
    data["criteria"] = [
        {
            "name": "against the staff",
            "check": "win_rate",
            "opponent": "staffbot:Bot",
            "score": "interpolate",
            "thresholds": [{"win_rate": 0.0, "points": 0}, {"win_rate": 1.0, "points": 10}],
        }
    ]
    (course / "course.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.chdir(tmp_path)  # not the rubric's folder: the staff file is found beside it
    report = grade("heuristic", load_rubric(course / "course.yaml"), isolate=can_isolate)
    (row,) = report["criteria"]
    assert row["opponent"] == "staffbot:Bot" and row["rounds"] == 10 and not report["failures"]
    assert row["points"] == pytest.approx(10 * row["win_rate"])


def test_a_submission_that_wraps_a_shipped_bot_does_not_load_by_default(tmp_path, can_isolate):
    (tmp_path / "wrapper.py").write_text(WRAPPER)
    report = grade("wrapper:act", load_rubric("quick"), folder=tmp_path, isolate=can_isolate)
    assert report["total"] == 0 and report["allow"] == list(DEFAULT_ALLOW)
    (line,) = report["failures"]
    assert line.startswith("wrapper:act does not load: ") and "allow" in line, line
    assert "racko_2p" in line and "\n" not in line


def test_the_user_isolation_is_stated_or_refused_in_one_line(tmp_path, monkeypatch, capsys):
    from racko_apps.new_bot.starter import write_bot
    from racko_apps.sandbox.isolation import USER_WARNING, choose_isolation
    from racko_apps.sandbox.wire import IsolationUnavailableError

    write_bot("mine", tmp_path)
    monkeypatch.chdir(tmp_path)
    args = ["mine:Bot", "--rubric", "quick", "--isolation", "user", "--json", "g.json"]
    try:
        choose_isolation("user")
    except IsolationUnavailableError as err:  # not root, or a Python other users cannot run
        assert main(args) == 2
        printed = capsys.readouterr().err
        assert printed.count("\n") == 1 and str(err) in printed
        return
    assert main(args) == 0
    assert capsys.readouterr().out.startswith(f"**{USER_WARNING}**")
    report = json.loads((tmp_path / "g.json").read_text())
    assert report["isolation"] == "user" and report["warning"] == USER_WARNING
    assert report["total"] == 65
