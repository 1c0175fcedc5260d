"""agents.load("module:act"): a bot written as a function (Kaggle's style) is a bot like a class."""

from __future__ import annotations

import pytest

import agents
from agents.function_bot import FunctionBot, is_act_function

BOTS = """
import numpy as np
from agents.obs import legal_actions

seen = []


def act(observation):
    return np.int64(legal_actions(observation)[0])  # a numpy integer is an action id too


def act_with_configuration(observation, configuration):
    seen.append(dict(configuration))
    return legal_actions(observation)[-1]


def make_bot(num_players=2, seed=None):  # a factory: called once, returns a bot
    return __import__("agents").load("random", num_players, seed=seed)


def needs_players(num_players):  # a factory too: its first argument is a constructor argument
    return __import__("agents").load("heuristic", num_players)


def lazy(observation):
    return "draw"
"""


@pytest.fixture
def bot_module(tmp_path, monkeypatch):
    (tmp_path / "fn_bots.py").write_text(BOTS)
    monkeypatch.chdir(tmp_path)
    yield "fn_bots"
    import sys

    sys.modules.pop("fn_bots", None)


def test_an_act_function_plays_legally(bot_module, assert_plays_legally):
    bot = agents.load(f"{bot_module}:act", num_players=3)
    assert isinstance(bot, FunctionBot) and bot.name == f"{bot_module}:act"
    assert_plays_legally(bot, 3, ["heuristic", "random"], steps=200, seed=1)
    bot.reset()
    bot.seed(3)  # a function has neither: both are harmless no-ops


def test_a_second_argument_gets_the_configuration(bot_module, assert_plays_legally):
    bot = agents.load(f"{bot_module}:act_with_configuration", num_players=2, turn_limit=50)
    assert_plays_legally(bot, 2, ["heuristic"], steps=20, seed=0)
    import fn_bots

    config = fn_bots.seen[0]
    assert config["num_players"] == 2 and config["turn_limit"] == 50
    assert config["empty_pile"] == "shuffle"  # every rules option, defaults included
    with pytest.raises(TypeError):
        bot.configuration["num_players"] = 3  # read-only


def test_actions_come_back_as_ints_or_as_given(bot_module):
    from racko_env import racko_v1

    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    action = agents.load(f"{bot_module}:act").act(obs)
    assert type(action) is int and obs["action_mask"][action]
    assert agents.load(f"{bot_module}:lazy").act(obs) == "draw"  # for the referee to refuse


def test_factories_stay_factories(bot_module):
    assert type(agents.load(f"{bot_module}:make_bot", seed=1)).__name__ == "RandomBot"
    assert type(agents.load(f"{bot_module}:needs_players", 3)).__name__ == "HeuristicBot"


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (lambda observation: 0, True),
        (lambda obs, configuration: 0, True),
        (lambda num_players=2: None, False),
        (lambda num_players: None, False),
        (lambda seed: None, False),
        (lambda observation=None: 0, False),  # a default: a factory's argument, not a decision
        (lambda: None, False),
        (lambda *, observation: 0, False),
        (FunctionBot, False),  # a class
        (len, False),  # a builtin: not a def
    ],
)
def test_what_counts_as_an_act_function(target, expected):
    assert is_act_function(target) is expected


def test_a_bad_function_is_refused_in_one_line():
    with pytest.raises(ValueError, match="not a function taking the observation"):
        FunctionBot(lambda num_players=2: None, "m:f")
