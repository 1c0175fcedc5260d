"""Gradescope: the kit an instructor uploads, and its run_autograder on a folder laid out like
Gradescope's (tmp_path/autograder/{source,submission,results}) for a good, a broken and a hostile
submission. Every results.json is checked against Gradescope's format
(racko_apps.gradescope.schema, which follows its specification)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from pydantic import ValidationError

from racko_apps.grade.cli import main
from racko_apps.grade.rubric import RubricError, load_rubric, parse_rubric
from racko_apps.grade.run import grade
from racko_apps.grade.secret import SECRET_FILE, read_secret
from racko_apps.gradescope import autograder
from racko_apps.gradescope.autograder import autograde, find_submission
from racko_apps.gradescope.kit import kit_main, write_kit
from racko_apps.gradescope.schema import Results
from racko_apps.new_bot.starter import write_bot
from racko_apps.sandbox.wire import IsolationUnavailableError

REPO = Path(__file__).resolve().parents[2]

# A small rubric (seconds per grade), with the visibilities Gradescope knows.
RUBRIC = """# a course's rubric: its comments travel into the kit
players: 2
seed: 0
positions: 2
rounds: 2
time_limit: 0.5
kill_after: 2.0
memory_mb: 1024
max_forfeits: 2
rules: {}
criteria:
  - {name: loads, check: loads, points: 10}
  - {name: legal moves, check: legal, points: 20, visibility: after_due_date}
  - {name: time limit, check: speed, points: 10}
  - name: against random
    check: win_rate
    opponent: random
    visibility: hidden
    thresholds:
      - {win_rate: 0.75, points: 60}
"""
VISIBILITY = {
    "loads": "visible",
    "legal moves": "after_due_date",
    "time limit": "visible",
    "against random": "hidden",
}

BROKEN_IMPORT = "import nonexistent_module_xyz\n\n\ndef act(observation):\n    return 10\n"
BROKEN_SYNTAX = "def act(observation)\n    return 10\n"
# Forges a perfect results.json wherever it might be, then kills its parent: none of it may work.
HOSTILE = """
import json, os, signal
from pathlib import Path

forged = json.dumps({"score": 100, "output": "forged"})
here = Path(__file__).resolve().parent
for target in (here.parent / "results" / "results.json", Path("/autograder/results/results.json"),
               here / "results.json"):
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(forged)
    except OSError:
        pass
os.kill(os.getppid(), signal.SIGKILL)


def act(observation):
    return 10
"""


@pytest.fixture
def rubric_file(tmp_path: Path) -> Path:
    path = tmp_path / "course.yaml"
    path.write_text(RUBRIC)
    return path


def valid(results: dict) -> Results:
    """The results, checked against Gradescope's format; and their score is their tests' sum."""
    model = Results.model_validate(results)
    assert model.tests is not None and model.score == sum(t.score or 0 for t in model.tests)
    assert {t.name: t.visibility for t in model.tests} == VISIBILITY
    assert [e.name for e in model.leaderboard or []] == ["against random (win rate)", "points"]
    return model


def isolation_for(can_isolate: bool) -> str:
    """The isolation a test's autograder asks for: the strongest here, or none."""
    return "auto" if can_isolate else "none"


def fake_wheel(tmp_path: Path) -> Path:
    """A file named like racko's wheel, for the kit's logic (the trial runs import the checkout);
    the real wheel has its own test."""
    wheel = tmp_path / "racko-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK wheel bytes")
    return wheel


def unpack(archive: Path, root: Path) -> None:
    """The zip unpacked into root/source (modes from the zip) as Gradescope does, run_autograder
    copied beside it, and an empty submission/ and results/."""
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            path = root / "source" / info.filename
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(z.read(info))
            path.chmod((info.external_attr >> 16) & 0o777)
    runner = root / "run_autograder"
    runner.write_bytes((root / "source" / "run_autograder").read_bytes())
    runner.chmod((root / "source" / "run_autograder").stat().st_mode)


def gradescope_folder(tmp_path: Path, rubric_file: Path, isolate: bool) -> Path:
    """tmp_path/autograder as Gradescope lays it out, from a kit of the rubric."""
    root = tmp_path / "autograder"
    isolation = "auto" if isolate else "none"
    archive = write_kit(
        rubric_file, tmp_path / "kit", isolation=isolation, wheel=fake_wheel(tmp_path)
    )
    unpack(archive, root)
    return root


def run_autograder(root: Path, python: str = sys.executable) -> tuple[dict, str]:
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "RACKO_PYTHON": python}
    env["PYTHONPATH"] = str(REPO)
    run = subprocess.run(
        [str(root / "run_autograder")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads((root / "results" / "results.json").read_text()), run.stdout


def test_a_good_submission_gets_its_points(tmp_path, rubric_file, can_isolate):
    root = gradescope_folder(tmp_path, rubric_file, can_isolate)
    write_bot("mine", root / "submission", kind="function")
    results, stdout = run_autograder(root)
    model = valid(results)
    points = {t.name: (t.score, t.max_score) for t in model.tests or []}
    assert points["loads"] == (10, 10) and points["legal moves"] == (20, 20)
    assert points["time limit"] == (10, 10) and points["against random"][1] == 60
    report = results["extra_data"]["racko_grade"]
    assert report["bot"] == "mine:act" and report["total"] == model.score
    assert "| **total** |" in stdout  # the grade's table, for the instructor
    board = {e.name: e.value for e in model.leaderboard or []}
    assert board["points"] == model.score
    win_rate = next(c for c in report["criteria"] if c["name"] == "against random")["win_rate"]
    assert board["against random (win rate)"] == win_rate
    assert model.execution_time is not None and model.output_format == "text"
    # a hidden criterion: the output, which students see, does not give the total away (an
    # unisolated kit's warning comes first)
    lines = (model.output or "").splitlines()
    headline = lines[0 if can_isolate else 1]
    assert headline.startswith("graded: mine:act on rubric ") and headline.endswith("(2 players)")


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            BROKEN_IMPORT,
            "bot:act does not load: cannot load bot: ValueError: cannot import module 'bot' "
            "of bot 'bot:act': No module named 'nonexistent_module_xyz'",
        ),
        (BROKEN_SYNTAX, "bot.py does not parse: expected ':' (line 1)"),
    ],
)
def test_a_broken_submission_gets_zero_and_the_reason(
    tmp_path, rubric_file, can_isolate, source, reason
):
    root = gradescope_folder(tmp_path, rubric_file, can_isolate)
    (root / "submission" / "bot.py").write_text(source)
    results, _ = run_autograder(root)
    model = valid(results)
    assert model.score == 0 and all(t.score == 0 for t in model.tests or [])
    assert any(reason in line for line in (model.output or "").splitlines()), model.output


def test_a_hostile_submission_gets_zero_and_forges_nothing(tmp_path, rubric_file, isolation):
    root = gradescope_folder(tmp_path, rubric_file, isolate=True)
    (root / "submission" / "bot.py").write_text(HOSTILE)
    results, _ = run_autograder(root)
    model = valid(results)
    assert model.score == 0 and "forged" not in json.dumps(results)
    assert "does not load" in (model.output or "")
    assert sorted(p.name for p in (root / "submission").iterdir()) == ["bot.py"]


def test_run_autograder_writes_results_even_when_racko_cannot_start(tmp_path, rubric_file):
    root = gradescope_folder(tmp_path, rubric_file, isolate=True)
    write_bot("mine", root / "submission")
    (root / "results" / "results.json").write_text('{"score": 100}')  # stale, or forged
    results, _ = run_autograder(root, python=str(tmp_path / "no-python"))
    assert Results.model_validate(results).score == 0
    assert results["output"].startswith("The autograder could not run (exit status 127)")


def test_an_unisolated_kit_says_so_in_run_autograder(tmp_path, rubric_file):
    write_kit(
        rubric_file,
        tmp_path / "kit",
        isolation="none",
        stdout_visibility="visible",
        wheel=fake_wheel(tmp_path),
    )
    script = (tmp_path / "kit" / "run_autograder").read_text()
    assert "--isolation none --stdout-visibility visible" in script


def test_the_kit_holds_its_files_at_the_zip_root(tmp_path, rubric_file, capsys):
    wheel = fake_wheel(tmp_path)
    assert kit_main([str(rubric_file), "--out", str(tmp_path / "kit"), "--wheel", str(wheel)]) == 0
    assert "autograder.zip" in capsys.readouterr().out
    archive = tmp_path / "kit" / "autograder.zip"
    with zipfile.ZipFile(archive) as z:
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in z.infolist()}
        assert modes == {
            "setup.sh": 0o755,
            "run_autograder": 0o755,
            "rubric.yaml": 0o644,
            SECRET_FILE: 0o600,
            wheel.name: 0o644,
        }
        assert z.read("rubric.yaml").decode() == RUBRIC  # the comments too
        setup = z.read("setup.sh").decode()
    assert "apt-get install -y --no-install-recommends bubblewrap" in setup
    assert f"RACKO='/autograder/source/{wheel.name}[eval]'" in setup
    for script in ("setup.sh", "run_autograder"):
        check = subprocess.run(["bash", "-n", str(tmp_path / "kit" / script)], capture_output=True)
        assert check.returncode == 0, check.stderr
    assert (tmp_path / "kit" / SECRET_FILE).stat().st_mode & 0o777 == 0o600
    first = archive.read_bytes()
    write_kit(rubric_file, tmp_path / "kit", wheel=wheel)
    assert archive.read_bytes() == first  # the same kit (its secret kept), the same bytes
    secret = read_secret(tmp_path / "kit" / SECRET_FILE)
    write_kit(rubric_file, tmp_path / "kit", wheel=wheel, new_secret=True)
    assert read_secret(tmp_path / "kit" / SECRET_FILE) != secret  # a regrade's new deals


def test_the_kit_can_ship_a_wheel(tmp_path, rubric_file):
    wheel = fake_wheel(tmp_path)
    archive = write_kit("quick", tmp_path / "kit", wheel=wheel)
    with zipfile.ZipFile(archive) as z:
        assert z.read(wheel.name) == wheel.read_bytes()
        setup = z.read("setup.sh").decode()
    assert f"RACKO='/autograder/source/{wheel.name}[eval]'" in setup


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["missing.yaml"], "rubric file 'missing.yaml' does not exist"),
        (["quick", "--wheel", "nowhere.whl"], "wheel 'nowhere.whl' does not exist"),
        (["quick", "--wheel", "{bad}"], "is not a racko wheel"),
    ],
)
def test_the_kit_refuses_bad_input_in_one_line(tmp_path, capsys, monkeypatch, args, error):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "other-1.0-py3-none-any.whl").write_bytes(b"PK")
    args = [a.replace("{bad}", "other-1.0-py3-none-any.whl") for a in args]
    assert kit_main([*args, "--out", str(tmp_path / "kit")]) == 2
    err = capsys.readouterr().err
    assert error in err and err.count("\n") == 1
    assert not (tmp_path / "kit").exists()


def test_racko_grade_writes_gradescope_results(tmp_path, rubric_file, capsys):
    out = tmp_path / "results.json"
    report_path = tmp_path / "grade.json"
    args = ["heuristic", "--rubric", str(rubric_file), "--json", str(report_path)]
    assert main([*args, "--gradescope", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    results = json.loads(out.read_text())
    model = valid(results)
    report = json.loads(report_path.read_text())
    assert model.score == report["total"] == 100
    assert [t.score for t in model.tests or []] == [c["points"] for c in report["criteria"]]


def test_no_bot_or_two_bots_are_reasons_not_crashes(tmp_path, rubric_file):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "submission" / "notes.py").write_text("x = 1\n")
    results = autograde(root, rubric_file, isolation="none")
    assert valid(results).score == 0
    assert "no bot in the submission (notes.py: defines no top-level class Bot" in results["output"]
    write_bot("one", root / "submission")
    write_bot("two", root / "submission", kind="function")
    results = autograde(root, rubric_file, isolation="none")
    assert "holds 2 bots (one, two)" in results["output"] and valid(results).score == 0
    assert json.loads((root / "results" / "results.json").read_text()) == results


def test_a_zipped_folder_is_looked_into(tmp_path):
    inner = tmp_path / "submission" / "my-project"
    inner.mkdir(parents=True)
    write_bot("mine", inner)
    assert find_submission(tmp_path / "submission") == ("mine:Bot", inner)


def test_the_graders_own_failures_still_write_results(tmp_path, rubric_file, monkeypatch):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    write_bot("mine", root / "submission")

    def no_bwrap(requested: str | None) -> None:
        raise IsolationUnavailableError("bubblewrap is not installed")

    monkeypatch.setattr("racko_apps.grade.run.choose_isolation", no_bwrap)
    results = autograde(root, rubric_file, isolation="bwrap")
    assert valid(results).score == 0
    assert results["output"].startswith("the autograder cannot isolate the bot: bubblewrap")
    assert all(t["output"].startswith("not graded: ") for t in results["tests"])

    def bug(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the grader")

    monkeypatch.setattr(autograder, "grade", bug)
    results = autograde(root, rubric_file, isolation="none")
    assert valid(results).score == 0
    assert results["output"] == "the autograder failed: RuntimeError: a bug in the grader"
    broken_rubric = tmp_path / "broken.yaml"
    broken_rubric.write_text("players: [\n")
    results = autograde(root, broken_rubric, isolation="none")
    assert Results.model_validate(results).score == 0 and "not valid YAML" in results["output"]


def test_a_criterions_visibility_is_checked():
    base = {
        "players": 2,
        "seed": 0,
        "positions": 1,
        "rounds": 1,
        "time_limit": 1,
        "kill_after": 1,
        "memory_mb": 512,
        "max_forfeits": 1,
    }
    crit = {"name": "loads", "check": "loads", "points": 1}
    assert parse_rubric({**base, "criteria": [crit]}, "r").criteria[0].visibility == "visible"
    with pytest.raises(RubricError, match="visibility must be one of visible, hidden"):
        parse_rubric({**base, "criteria": [{**crit, "visibility": "secret"}]}, "r")


@pytest.mark.parametrize(
    "bad",
    [
        {"tests": [{"name": "no score anywhere"}]},
        {"score": 1, "visibilty": "visible"},  # a misspelt key
        {"score": 1, "tests": [{"score": 1, "visibility": "sometimes"}]},
        {"score": 1, "leaderboard": [{"name": "x", "value": 1, "order": "up"}]},
        {"score": float("nan")},
        {"score": 1, "stdout_visibility": "always"},
    ],
)
def test_the_schema_refuses_what_gradescope_would_misread(bad):
    with pytest.raises(ValidationError):
        Results.model_validate(bad)


def test_grade_without_pydantic_names_the_extra_before_playing(tmp_path):
    code = (
        "import sys; sys.modules['pydantic'] = None\n"
        "from racko_apps.grade.cli import main\n"
        f"sys.exit(main(['heuristic', '--rubric', 'quick', '--gradescope', {str(tmp_path / 'r.json')!r}]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 2 and run.stdout == "", run.stdout
    assert run.stderr.count("\n") == 1 and "pip install 'racko[eval]'" in run.stderr
    assert not (tmp_path / "r.json").exists()


def test_the_output_shows_the_points_when_every_criterion_is_visible(tmp_path):
    visible = tmp_path / "visible.yaml"
    visible.write_text(
        RUBRIC.replace("visibility: hidden", "").replace(", visibility: after_due_date", "")
    )
    rubric = load_rubric(visible)
    results = autograder.results_from_report(grade("random", rubric), rubric)
    assert results["output"].startswith(f"{results['score']:g} / 100 points: random on rubric")
    assert {t["visibility"] for t in results["tests"]} == {"visible"}


# Fails on a third of the positions with what it sees in its message: were the failures shown as
# they are, a student would read the secret deals' racks in the output.
LEAKY = """
def act(observation):
    seen = observation["observation"]
    if int(seen.sum() * 1000) % 3 == 0:
        raise RuntimeError("LEAK " + ",".join(f"{v:.3f}" for v in seen[:12]))
    return int(next(a for a, ok in enumerate(observation["action_mask"]) if ok))
"""


def test_a_graded_run_shows_no_seed_and_the_teachers_report_reproduces_it(
    tmp_path, rubric_file, can_isolate, monkeypatch, capsys
):
    root = gradescope_folder(tmp_path, rubric_file, can_isolate)
    (root / "submission" / "leaky.py").write_text(LEAKY)
    results, stdout = run_autograder(root)
    model = valid(results)
    secret = read_secret(root / "source" / SECRET_FILE)
    assert read_secret(tmp_path / "kit" / SECRET_FILE) == secret  # the teacher's copy
    shown = json.dumps(results)
    assert str(secret) not in shown and "LEAK" not in shown and "seed" not in shown
    assert "failure(s): " in (model.output or "")  # counted, by kind
    assert f"seed {secret} (secret)" in stdout and "LEAK" in stdout  # the instructor's view
    monkeypatch.chdir(root / "submission")
    isolation = [] if can_isolate else ["--no-isolation"]
    capsys.readouterr()
    again = tmp_path / "again.json"
    args = ["leaky:act", "--rubric", str(rubric_file), "--json", str(again), *isolation]
    assert main([*args, "--seed", str(secret)]) == 0
    report = json.loads(again.read_text())
    assert report["total"] == model.score
    assert [c["points"] for c in report["criteria"]] == [t.score for t in model.tests or []]
    assert "practice" not in capsys.readouterr().out
    assert main([*args, "--secret", str(tmp_path / "kit" / SECRET_FILE)]) == 0
    secret_run = json.loads(again.read_text())
    assert [c["result"] for c in secret_run["criteria"] if c["check"] == "win_rate"] == [
        c["result"] for c in report["criteria"] if c["check"] == "win_rate"
    ]
    assert secret_run["total"] == report["total"] and secret_run["seed"] == secret


STAFF_RUBRIC = """players: 2
seed: 0
positions: 2
rounds: 2
time_limit: 0.5
kill_after: 5.0
memory_mb: 1024
max_forfeits: 2
criteria:
  - {name: loads, check: loads, points: 10}
  - name: against the staff's Python bot
    check: win_rate
    opponent: staffbot:Bot
    thresholds: [{win_rate: 0.0, points: 0}, {win_rate: 1.0, points: 45}]
    score: interpolate
  - name: against the staff's network
    check: win_rate
    opponent: staff/racko_2p.onnx
    thresholds: [{win_rate: 0.0, points: 0}, {win_rate: 1.0, points: 45}]
    score: interpolate
"""


def no_index_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a run that cannot reach a package index (and imports no checkout)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PIP_NO_INDEX="1", PIP_INDEX_URL="http://127.0.0.1:9/", PIP_RETRIES="0")
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


@pytest.mark.slow
def test_the_kit_built_here_installs_from_its_zip_alone(tmp_path, can_isolate):
    course = tmp_path / "course"
    (course / "staff").mkdir(parents=True)
    (course / "rubric.yaml").write_text(STAFF_RUBRIC)
    write_bot("staffbot", course)
    for suffix in (".onnx", ".json"):
        shipped = REPO / "agents" / "pretrained" / f"racko_2p{suffix}"
        (course / "staff" / f"racko_2p{suffix}").write_bytes(shipped.read_bytes())
    flags = [] if can_isolate else ["--no-isolation"]
    assert kit_main([str(course / "rubric.yaml"), "--out", str(tmp_path / "kit"), *flags]) == 0
    root = tmp_path / "autograder"
    unpack(tmp_path / "kit" / "autograder.zip", root)  # from the zip alone
    source = root / "source"
    for name in ("staffbot.py", "staff/racko_2p.onnx", "staff/racko_2p.json"):
        assert (source / name).is_file(), name
    setup = (source / "setup.sh").read_text()
    (install,) = [line for line in setup.splitlines() if line.startswith("RACKO=")]
    target = install.removeprefix("RACKO='").removesuffix("'")
    assert target.startswith("/autograder/source/racko-") and target.endswith(".whl[eval]")
    assert '-m pip install "$RACKO"' in setup and "racko[" not in setup.replace(target, "")
    wheel = source / Path(target.removesuffix("[eval]")).name
    venv = tmp_path / "venv"
    env = no_index_env(tmp_path)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q", "--no-index"]
    # racko from the zip's wheel; its third-party dependencies are already here (no index)
    subprocess.run([*pip, "--no-deps", "--force-reinstall", str(wheel)], env=env, check=True)
    subprocess.run([*pip, f"{wheel}[eval]"], env=env, check=True, timeout=600)
    where = subprocess.run(
        [python, "-P", "-c", "import racko_apps; print(racko_apps.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    write_bot("mine", root / "submission", kind="function")
    run = subprocess.run(
        [str(root / "run_autograder")],
        cwd=root,
        env={**env, "AUTOGRADER_ROOT": str(root), "RACKO_PYTHON": python},
        capture_output=True,
        text=True,
        timeout=900,
    )
    results = json.loads((root / "results" / "results.json").read_text())
    model = Results.model_validate(results)
    assert [t.name for t in model.tests or []][0] == "loads", run.stdout
    assert (model.tests or [])[0].score == 10, results
    report = results["extra_data"]["racko_grade"]
    opponents = [c.get("opponent") for c in report["criteria"]]
    assert opponents[1:] == ["staffbot:Bot", "staff/racko_2p.onnx"], report
    assert all(c["rounds"] == 4 for c in report["criteria"][1:]), report


def test_stdout_shown_to_students_holds_no_seed(tmp_path, rubric_file, can_isolate, capsys):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    write_bot("mine", root / "submission")
    secret = tmp_path / SECRET_FILE
    secret.write_text('{"seed": 123456789012345}\n')
    secret.chmod(0o644)  # an unzip that did not keep the kit's mode
    autograde(
        root,
        rubric_file,
        isolation=isolation_for(can_isolate),
        secret=secret,
        stdout_visibility="visible",
    )
    shown = capsys.readouterr().out
    assert "| **total** |" in shown and "123456789012345" not in shown and "seed" not in shown
    autograde(
        root, rubric_file, isolation=isolation_for(can_isolate), secret=secret
    )  # instructors only
    assert "seed 123456789012345 (secret)" in capsys.readouterr().out
    assert secret.stat().st_mode & 0o777 == 0o600  # closed to the bots' users


# A trained model handed in as a folder: a package and its weights, loaded as data only.
NETBOT = """from pathlib import Path

import numpy as np

_WEIGHTS = np.load(Path(__file__).with_name("weights.npz"), allow_pickle=False)


def act(observation):
    scores = observation["observation"] @ _WEIGHTS["w"] + _WEIGHTS["b"]
    scores[~observation["action_mask"].astype(bool)] = -np.inf
    return int(np.argmax(scores))
"""


def test_a_folder_submission_with_npz_weights_is_graded(tmp_path, rubric_file, can_isolate):
    import numpy as np

    from racko_env import racko_v1

    env = racko_v1.raw_env()
    env.reset(seed=0)
    first = env.observe(env.agent_selection)
    sizes = (first["observation"].shape[0], first["action_mask"].shape[0])
    root = tmp_path / "autograder"
    package = root / "submission" / "netbot"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(NETBOT)
    rng = np.random.default_rng(0)
    np.savez(package / "weights.npz", w=rng.normal(size=sizes), b=rng.normal(size=sizes[1]))
    results = autograde(root, rubric_file, isolation=isolation_for(can_isolate))
    model = valid(results)
    points = {t.name: t.score for t in model.tests or []}
    assert points["loads"] == 10 and points["legal moves"] == 20, results["output"]
    assert results["extra_data"]["racko_grade"]["bot"] == "netbot:act"
