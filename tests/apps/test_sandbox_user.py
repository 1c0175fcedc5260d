"""racko_apps.sandbox's ``user`` isolation: each bot runs as an unprivileged user of its own.

Run as root (CI runs this file with sudo); skipped otherwise, and failed instead under
``RACKO_REQUIRE_ALL=1``. A Python in a private home (pyenv's under ``/root``) is no reason to
skip: the backend lets other users pass through (never read) the folders above it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.isolation import NO_ISOLATION_WARNING, USER_WARNING, choose_isolation
from racko_apps.sandbox.proc import process_tree
from racko_apps.sandbox.wire import BotFailureError, IsolationUnavailableError, Limits
from racko_env import racko_v1

HOSTILE = """
import os
import subprocess
import sys
import tempfile

from agents.obs import legal_actions

SECRETS, CLOSED, RESULTS = {secrets!r}, {closed!r}, {results!r}


class Bot:
    def __init__(self, num_players=2, seed=None):
        found = []
        for secret in SECRETS:
            try:
                found.append("read the grader's secret: " + open(secret).read())
            except OSError:
                pass
        for folder in CLOSED:
            try:
                found.append("listed the grader's folder: " + str(os.listdir(folder)))
            except OSError:
                pass
        try:
            open(os.path.join(RESULTS, "forged.json"), "w").write("{{}}")
            found.append("wrote into the results")
        except OSError:
            pass
        tmp = tempfile.gettempdir()
        st = os.stat(tmp)
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            found.append(f"its temporary folder {{tmp}} is not its own")
        with open(os.path.join(tmp, "scratch"), "w") as f:  # but it may write there
            f.write("ok")
        if os.getuid() == 0 or os.getgid() == 0 or os.getgroups():
            found.append("runs as root or in a group")
        if "RACKO_GRADER_TOKEN" in os.environ:
            found.append("sees the grader's environment")
        self.found = found

    def act(self, obs):
        if self.found:
            raise RuntimeError("; ".join(self.found))
        # leaves a process behind, in a session of its own (out of its process group)
        code = "import time; time.sleep(600)"
        subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        return legal_actions(obs)[0]
"""

FORK_BOMB = """
import os

from agents.obs import legal_actions


class Bot:
    def act(self, obs):
        for _ in range(10_000):
            if os.fork() == 0:
                import time

                time.sleep(600)
                os._exit(0)
        return legal_actions(obs)[0]
"""


@pytest.fixture
def as_root(require):
    """Bots can run as users of their own here: this is root (else skip, or fail in CI), and
    the backend then works, even with Python in a private home (else the test fails)."""
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    require(is_root, "root (the user isolation)", "sudo -E python -m pytest " + __file__)
    picked, warning = choose_isolation("user")
    assert picked == "user" and warning is not None and warning.startswith(USER_WARNING)
    assert "\n" not in warning


@pytest.fixture
def grader():
    """A grader's folder other users may pass through, with a 0600 secret, a results folder and
    the submissions."""
    folder = Path(tempfile.mkdtemp(prefix="racko-grader-"))
    os.chmod(folder, 0o755)
    secret = folder / "secret.txt"
    secret.write_text("the teacher's seed")
    os.chmod(secret, 0o600)
    (folder / "results").mkdir(mode=0o755)
    (folder / "submissions").mkdir(mode=0o755)
    private = folder / "private"  # a folder of the grader's closed to others, as /root is
    private.mkdir(mode=0o700)
    (private / "key.txt").write_text("the teacher's key")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def obs():
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=1)
    return env.observe(env.agent_selection)


@pytest.fixture
def root_secret():
    """A 0600 file in root's home (where pyenv's Python may live, so the backend may have let
    other users pass through that home)."""
    fd, name = tempfile.mkstemp(prefix="racko-secret-", dir=os.path.expanduser("~root"))
    os.write(fd, b"root's own")
    os.close(fd)
    os.chmod(name, 0o600)
    yield name
    os.unlink(name)


def test_a_bot_of_its_own_user_is_kept_out_and_leaves_nothing(
    as_root, grader, root_secret, obs, monkeypatch
):
    monkeypatch.setenv("RACKO_GRADER_TOKEN", "secret")
    secrets = [str(grader / "secret.txt"), str(grader / "private" / "key.txt"), root_secret]
    closed = [str(grader / "private"), os.path.dirname(root_secret)]  # 0700, 0700 or 0701
    source = HOSTILE.format(secrets=secrets, closed=closed, results=str(grader / "results"))
    (grader / "submissions" / "hostile.py").write_text(source)
    bot = SandboxedBot("hostile:Bot", grader / "submissions", isolation="user")
    try:
        assert obs["action_mask"][bot.act(obs)]  # it raises what it could do that it must not
        assert bot._user is not None
        uid, home = bot._user.uid, bot._user.home
        assert len(process_tree(uid).started) == 2  # the bot and what it left running
        bot.end_game()  # between games: what it started goes, the bot plays on
        assert list(process_tree(uid).started) == [bot._proc.pid]
        assert obs["action_mask"][bot.act(obs)]
    finally:
        bot.close()
    assert not process_tree(uid).started
    assert not home.exists()
    assert not (grader / "results" / "forged.json").exists()


def test_a_fork_bomb_meets_its_process_limit(as_root, grader, obs):
    (grader / "submissions" / "bomb.py").write_text(FORK_BOMB)
    limits = Limits(processes=32, move_seconds=20)
    bot = SandboxedBot("bomb:Bot", grader / "submissions", isolation="user", limits=limits)
    try:
        with pytest.raises(BotFailureError, match="raised BlockingIOError"):
            bot.act(obs)
    finally:
        uid = bot._user.uid if bot._user is not None else None
        bot.close()
    assert uid is None or not process_tree(uid).started


def test_choose_isolation_names_what_it_picked_and_why(monkeypatch):
    assert choose_isolation("none") == ("none", NO_ISOLATION_WARNING)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(IsolationUnavailableError, match="needs root") as refused:
        choose_isolation("user")
    assert "\n" not in str(refused.value)
    with pytest.raises(ValueError, match="isolation must be one of bwrap, user, none or auto"):
        choose_isolation("docker")
    picked, warning = choose_isolation(None)
    assert picked in ("bwrap", "none") and warning in (None, NO_ISOLATION_WARNING)
    assert "weaker than bubblewrap" in USER_WARNING


def test_a_package_with_weights_plays_as_its_own_user(as_root, grader, obs):
    from racko_apps.new_bot.starter import write_bot

    write_bot("net_bot", grader / "submissions", "weights")
    with SandboxedBot("net_bot:Bot", grader / "submissions", isolation="user") as bot:
        assert obs["action_mask"][bot.act(obs)]
        assert (
            bot._user is not None and (bot._user.submission / "net_bot" / "weights.npz").is_file()
        )
