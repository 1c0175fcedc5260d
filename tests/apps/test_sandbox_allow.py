"""racko_apps.sandbox.bot's ``allow``: a submission sees only the toolkit modules it may import."""

from __future__ import annotations

import pytest

from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.toolkit import ALLOW_ALL, DEFAULT_ALLOW, check_allow, stage, visible_modules
from racko_apps.sandbox.wire import BotFailureError
from racko_env import racko_v1

# A submission that plays the shipped bot instead of its own: the shortcut ``allow`` closes.
WRAPPER = """
import agents


class Bot:
    def __init__(self, num_players=2, seed=None):
        self.inner = agents.load("racko_{n}p", num_players)

    def act(self, obs):
        return self.inner.act(obs)
"""

EXPERT_IMPORT = """
from agents.expert import ExpertBot


class Bot(ExpertBot):
    pass
"""

# Looks for the hidden files beside the toolkit it imports; loads only where none is there.
SNOOP = """
import os

import agents
from agents.obs import legal_actions

HERE = os.path.dirname(agents.__file__)
HIDDEN = ["expert.py", "search.py", "features.py", "batched.py", "pretrained"]


class Bot:
    def __init__(self, num_players=2, seed=None):
        found = [name for name in HIDDEN if os.path.exists(os.path.join(HERE, name))]
        if found:
            raise RuntimeError(f"saw {found}")

    def act(self, obs):
        return legal_actions(obs)[0]
"""


@pytest.fixture
def obs():
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=1)
    return env.observe(env.agent_selection)


def backends(can_isolate: bool) -> list[bool]:
    return [False, True] if can_isolate else [False]


def test_a_wrapper_of_a_shipped_bot_fails_to_load_by_default(tmp_path, can_isolate):
    (tmp_path / "wrapper.py").write_text(WRAPPER.format(n=2))
    for isolate in backends(can_isolate):
        with pytest.raises(BotFailureError) as failed:
            SandboxedBot("wrapper:Bot", tmp_path, isolate=isolate).start()
        line = str(failed.value)
        assert "\n" not in line and failed.value.kind == "start", line
        assert line.startswith(
            "wrapper:Bot: loads racko_2p from agents.pretrained.racko_2p, which this rubric or "
            "league does not allow (allow: agents.base, agents.obs,"
        ), line


def test_the_same_wrapper_loads_and_plays_where_allowed(tmp_path, obs, require):
    import importlib.util

    require(
        importlib.util.find_spec("onnxruntime") is not None,
        "onnxruntime",
        "pip install onnxruntime",
    )
    (tmp_path / "wrapper.py").write_text(WRAPPER.format(n=2))
    with SandboxedBot("wrapper:Bot", tmp_path, allow=ALLOW_ALL) as bot:
        assert obs["action_mask"][bot.act(obs)]
    with SandboxedBot("wrapper:Bot", tmp_path, allow=("agents.pretrained",)) as bot:
        assert obs["action_mask"][bot.act(obs)]


def test_an_import_of_expert_names_the_rule(tmp_path, obs):
    (tmp_path / "uses_expert.py").write_text(EXPERT_IMPORT)
    with pytest.raises(BotFailureError, match=r"^uses_expert:Bot: imports agents\.expert, which"):
        SandboxedBot("uses_expert:Bot", tmp_path).start()
    # allowed, expert brings what it imports (the planner) along
    with SandboxedBot("uses_expert:Bot", tmp_path, allow=("agents.expert",)) as bot:
        assert obs["action_mask"][bot.act(obs)]


def test_the_hidden_files_are_not_there_to_read(tmp_path, obs, can_isolate):
    (tmp_path / "snoop.py").write_text(SNOOP)
    for isolate in backends(can_isolate):
        with SandboxedBot("snoop:Bot", tmp_path, isolate=isolate) as bot:
            assert obs["action_mask"][bot.act(obs)]


def test_visible_modules_follow_the_allow_list():
    default = visible_modules(DEFAULT_ALLOW)
    assert {"agents.obs", "agents.heuristic", "racko_env.rules", "agents.loader"} <= default
    hidden = {"agents.expert", "agents.search", "agents.features", "agents.batched"}
    assert not hidden & default
    assert not any(m.startswith(("train", "racko_eval")) for m in default)
    assert {"agents.expert", "agents.features"} <= visible_modules(("agents.expert",))
    folder = stage(DEFAULT_ALLOW)
    assert folder is not None and (folder / "agents" / "obs.py").is_file()
    assert not (folder / "agents" / "pretrained").exists()
    assert not (folder / "racko_apps" / "grade" / "rubrics").exists()
    assert stage(ALLOW_ALL) is None


@pytest.mark.parametrize("bad", ["agents..obs", "agents/obs", "", "agents."])
def test_a_bad_pattern_is_refused_in_one_line(bad):
    with pytest.raises(ValueError, match="is not a module pattern") as refused:
        check_allow((bad,))
    assert "\n" not in str(refused.value)
    with pytest.raises(ValueError, match="must be a list"):
        check_allow("agents.obs")
