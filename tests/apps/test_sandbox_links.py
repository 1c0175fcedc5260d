"""Links in a submission: one that leaves the submitted folder (to the grades, to another
student's folder) is refused in one line naming it, wherever a submission is read; one that
stays inside the folder plays, under every isolation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from racko_apps.gradescope.autograder import SubmissionError, find_submission
from racko_apps.league.submissions import scan
from racko_apps.referee.match import sandbox_for
from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.bwrap import isolation_available
from racko_apps.sandbox.submission import outside_link
from racko_apps.sandbox.user import user_available
from racko_apps.sandbox.wire import BotFailureError
from racko_env import racko_v1

BOT = """
from agents.obs import legal_actions


class Bot:
    def act(self, obs):
        return legal_actions(obs)[0]
"""

# Reads its data through a link that stays in its folder: it plays only where the link works.
INNER = """
from pathlib import Path

from agents.obs import legal_actions

DATA = Path(__file__).parent / "data"


class Bot:
    def __init__(self, num_players=2, seed=None):
        assert (DATA / "copy.txt").read_text() == "weights", "the inner link does not read"
        assert (Path(__file__).parent / "all" / "real.txt").read_text() == "weights"

    def act(self, obs):
        return legal_actions(obs)[0]
"""


def isolations() -> list[str]:
    """Every isolation that runs here."""
    out = ["none"]
    if isolation_available():
        out.append("bwrap")
    if user_available():
        out.append("user")
    return out


def package(folder: Path, name: str, source: str = BOT) -> Path:
    path = folder / name
    (path / "data").mkdir(parents=True)
    (path / "__init__.py").write_text(source)
    return path


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A league's folder: honest bots, and bots whose files link out of their submission."""
    folder = tmp_path / "submissions"
    folder.mkdir()
    (tmp_path / "grades.csv").write_text("alice,100\n")
    (folder / "alice.py").write_text(BOT)
    (folder / "bob.py").symlink_to(folder / "alice.py")  # another student's file
    carol = package(folder, "carol")
    (carol / "data" / "w.npz").symlink_to("../../../grades.csv")  # nested, relative, out
    dave = package(folder, "dave")
    (dave / "data" / "all").symlink_to(tmp_path, target_is_directory=True)  # a folder, out
    erin = package(folder, "erin", INNER)
    (erin / "data" / "real.txt").write_text("weights")
    (erin / "data" / "copy.txt").symlink_to("real.txt")  # inside: allowed
    (erin / "all").symlink_to(erin / "data", target_is_directory=True)  # absolute, inside
    (folder / "frank").symlink_to(erin, target_is_directory=True)  # a link as a package
    return folder


def test_a_link_out_of_a_submission_is_left_out_of_the_league_in_one_line(course):
    entries, skipped = scan(course)
    assert [e.label for e in entries] == ["alice", "erin"]
    assert all("\n" not in line for line in skipped)
    assert any(line.startswith("bob.py is a link to ") for line in skipped), skipped
    assert any(
        line.startswith(
            "carol/data/w.npz is a link to ../../../grades.csv, outside the submitted folder"
        )
        for line in skipped
    ), skipped
    assert any(line.startswith("dave/data/all is a link to ") for line in skipped), skipped
    assert any(line.startswith("frank is a link to ") for line in skipped), skipped


@pytest.mark.parametrize("isolation", isolations())
def test_every_sandbox_refuses_a_link_out_and_plays_one_inside(course, isolation):
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    for spec, link in [
        ("bob:Bot", "bob.py"),
        ("carol:Bot", "carol/data/w.npz"),
        ("dave:Bot", "dave/data/all"),
    ]:
        with pytest.raises(BotFailureError) as refused:
            SandboxedBot(spec, course, isolation=isolation).start()
        assert refused.value.kind == "start" and "\n" not in str(refused.value)
        assert refused.value.reason.startswith(f"{link} is a link to "), refused.value.reason
    with SandboxedBot("erin:Bot", course, isolation=isolation) as bot:
        assert obs["action_mask"][bot.act(obs)]


def test_a_bot_file_that_is_a_link_is_refused_before_it_is_followed(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "bot.onnx").write_bytes(b"not read")
    (other / "bot.json").write_text("{}")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "bot.onnx").symlink_to(other / "bot.onnx")
    (mine / "bot.json").symlink_to(other / "bot.json")
    pytest.importorskip("onnxruntime")
    with pytest.raises(BotFailureError, match=r"^bot\.onnx: bot\.onnx is a link to "):
        sandbox_for("bot.onnx", 2, {}, folder=mine).start()
    entries, skipped = scan(mine)
    assert not entries and skipped[0].startswith("bot.onnx is a link to ")


def test_a_gradescope_submission_that_links_to_another_folder_is_not_graded(tmp_path, course):
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "mine").symlink_to(course / "erin", target_is_directory=True)
    with pytest.raises(SubmissionError, match=r"^no bot in the submission: mine is a link to "):
        find_submission(submission)
    (submission / "mine").unlink()
    (submission / "bot.py").symlink_to(course / "alice.py")
    with pytest.raises(SubmissionError, match=r"bot\.py is a link to .*submit the files"):
        find_submission(submission)


def test_a_link_loop_or_a_dangling_link_is_named_not_followed(tmp_path):
    bot = package(tmp_path, "bot")
    (bot / "data" / "loop").symlink_to("loop")
    assert outside_link([bot]) is None  # a loop in its own folder reads nothing outside
    os.symlink("/nonexistent/grades.csv", bot / "data" / "gone")
    assert outside_link([bot]) == (
        "bot/data/gone is a link to /nonexistent/grades.csv, outside the submitted folder; "
        "submit the files themselves"
    )
