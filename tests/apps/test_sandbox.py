"""racko_apps.sandbox: a student's bot runs in its own process and every way it breaks is caught."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.wire import BotFailureError, Limits
from racko_env import racko_v1

# Deliberately broken bots, one per way a student's bot goes wrong (also used by test_grade).
BROKEN_BOTS = """
import numpy as np
from agents.obs import legal_actions


class Good:
    def __init__(self, num_players=2, seed=None):
        self.resets = 0

    def reset(self):
        self.resets += 1

    def act(self, obs):
        # sees only its observation: the two arrays, with the env's dtypes
        assert set(obs) == {"observation", "action_mask"}, sorted(obs)
        assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
        print("thinking...")  # a little output is fine
        return legal_actions(obs)[0]


class Illegal(Good):
    def act(self, obs):
        return 99


class Crash(Good):
    def act(self, obs):
        raise RuntimeError("boom")


class Loop(Good):
    def act(self, obs):
        while True:
            pass


class Loud(Good):
    def act(self, obs):
        print("x" * 1_000_000)
        return legal_actions(obs)[0]


class Hog(Good):
    def act(self, obs):
        self.big = bytearray(4 * 1024**3)
        return legal_actions(obs)[0]


class Word(Good):
    def act(self, obs):
        return "slot 3"


class Quit(Good):
    def act(self, obs):
        raise SystemExit(0)


class Garbage(Good):
    def act(self, obs):
        import os
        os.write(3, b"not json at all\\n")  # the protocol's private copy of stdout
        return legal_actions(obs)[0]
"""


def write_broken(folder: Path) -> Path:
    (folder / "broken.py").write_text(BROKEN_BOTS)
    return folder


@pytest.fixture
def obs():
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=1)
    return env.observe(env.agent_selection)


def test_a_good_bot_plays_from_its_own_process(tmp_path, obs):
    write_broken(tmp_path)
    # a student's agents.py beside the bot must not replace the toolkit in the child
    (tmp_path / "agents.py").write_text("raise SystemExit('student agents.py imported')\n")
    with SandboxedBot("broken:Good", tmp_path, limits=Limits(move_seconds=30)) as bot:
        bot.reset()
        action = bot.act(obs)
        assert obs["action_mask"][action] == 1
        assert 0 <= bot.last_seconds < 30
        assert bot.act(obs) == action  # the same process answers again


@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        ("Crash", "crash", "RuntimeError: boom"),
        ("Loop", "timeout", "did not answer within 2 s"),
        ("Loud", "output", "printed 1000001 characters"),
        pytest.param(
            "Hog",
            "memory",
            "ran out of memory (limit 512 MB)",
            marks=pytest.mark.skipif(
                not sys.platform.startswith("linux"), reason="RLIMIT_AS holds on Linux only"
            ),
        ),
        ("Word", "illegal", "'slot 3', not an action id"),
        ("Quit", "crash", "SystemExit"),
        ("Missing", "start", "has no attribute 'Missing'"),
    ],
)
def test_every_way_of_breaking_is_one_clear_line(tmp_path, obs, name, kind, words):
    write_broken(tmp_path)
    bot = SandboxedBot(f"broken:{name}", tmp_path, limits=Limits(move_seconds=2, memory_mb=512))
    with pytest.raises(BotFailureError) as info:
        bot.act(obs)
    assert info.value.kind == kind
    assert words in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith(f"broken:{name}: ")
    assert bot._proc is None  # the broken child is gone; the next request starts a fresh one


def test_garbage_on_the_protocol_channel_is_caught(tmp_path, obs):
    write_broken(tmp_path)
    bot = SandboxedBot("broken:Garbage", tmp_path, limits=Limits(move_seconds=30))
    with pytest.raises(BotFailureError) as info:
        bot.act(obs)
    assert info.value.kind == "garbage"
    assert "wrote 'not json at all' where a reply was expected" in str(info.value)


def test_an_illegal_action_id_comes_back_for_the_referee_to_judge(tmp_path, obs):
    write_broken(tmp_path)
    with SandboxedBot("broken:Illegal", tmp_path) as bot:
        assert bot.act(obs) == 99


def test_a_fresh_process_after_a_failure(tmp_path, obs):
    write_broken(tmp_path)
    (tmp_path / "flaky.py").write_text(
        "import os\n"
        "from agents.obs import legal_actions\n"
        "class Bot:\n"
        "    def act(self, obs):\n"
        "        if not os.path.exists('crashed'):\n"
        "            open('crashed', 'w').close()\n"
        "            raise ValueError('first time')\n"
        "        return legal_actions(obs)[0]\n"
    )
    bot = SandboxedBot("flaky:Bot", tmp_path)
    with pytest.raises(BotFailureError):
        bot.act(obs)
    assert obs["action_mask"][bot.act(obs)] == 1
    bot.close()


def test_limits_are_checked():
    with pytest.raises(ValueError, match="move_seconds"):
        Limits(move_seconds=0)
    with pytest.raises(ValueError, match="memory_mb"):
        Limits(memory_mb=1.5)


PLANNER_USER = """
import importlib.util, os, sys

import agents


class Bot:
    \"\"\"Built on ``expert`` (the compiled planner). Its first move answers what it finds: was the
    planner loaded before that move (from the league's cache, where there is one), and is that
    cache read-only?\"\"\"

    def __init__(self, num_players=2, seed=None):
        self.inner = agents.load("expert", num_players)

    def act(self, obs):
        features = sys.modules.get("agents.features")
        if features is None:
            raise RuntimeError("the planner was not loaded before the first move")
        stats = features._plan_rows.stats
        if not stats.cache_hits and not stats.cache_misses:
            raise RuntimeError("the planner was not called before the first move")
        if "scipy" in sys.modules and sys.modules["scipy"] is None:
            raise RuntimeError("scipy is still hidden after the planner's warm-up")
        if importlib.util.find_spec("scipy") is not None:  # numba's BLAS calls find it again
            import numba
            import numpy as np

            dot = numba.njit(lambda a: np.dot(a, a))
            if dot(np.ones(3)) != 3.0:
                raise RuntimeError("numba's np.dot after the warm-up")
        seed = os.environ.get("RACKO_JIT_SEED")
        if seed is None:
            return self.inner.act(obs)
        if stats.cache_misses:
            raise RuntimeError(f"the planner was compiled in the sandbox: {stats}")
        try:
            open(os.path.join(seed, "poison"), "w").close()
        except OSError:
            return self.inner.act(obs)
        raise RuntimeError("wrote into the compiled planner every sandbox copies")
"""


@pytest.mark.parametrize("cache", ["league", "none"])
def test_a_bot_on_the_planner_has_it_ready_before_its_first_move(
    tmp_path, obs, isolation, cache, monkeypatch
):
    # each sandbox's /tmp starts empty: without the league's shared, read-only cache every
    # sandbox compiled the planner inside its bot's first move (seconds of CPU: a forfeit on a
    # busy machine); a grade's one sandbox compiles it while the bot starts
    from racko_apps.sandbox import jit

    (tmp_path / "planner_user.py").write_text(PLANNER_USER)
    if cache == "league":
        assert jit.jit_cache() is not None
    else:
        monkeypatch.setattr(jit, "_jit", {"dir": None})
    limits = Limits(move_seconds=60)
    with SandboxedBot(
        "planner_user:Bot", tmp_path, limits=limits, isolate=True, allow=("*",)
    ) as bot:
        assert obs["action_mask"][bot.act(obs)]
