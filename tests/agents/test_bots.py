"""Bots: the interface, the loader, legal play everywhere, and the known strength order."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agents
from agents.base import Bot
from agents.obs import card_zone, decode, zone_range
from racko_env import racko_v1


def play_round(bots, seed, **options):
    """Play one round of the raw env with the given bots by seat; return (env, steps)."""
    env = racko_v1.raw_env(num_players=len(bots), **options)
    env.reset(seed=seed)
    for bot in bots:
        bot.reset()
    steps = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.agent_name_mapping[agent]
        action = bots[seat].act(obs)
        assert obs["action_mask"][action] == 1, (bots[seat].name, action, obs["action_mask"])
        env.step(action)
        steps += 1
    return env, steps


def test_decode_matches_the_engine():
    env = racko_v1.raw_env(num_players=3)
    env.reset(seed=5)
    game = env.unwrapped.game
    agent = env.agent_selection
    seat = env.agent_name_mapping[agent]
    view = decode(env.observe(agent))
    assert view.num_players == 3 and view.num_cards == 50
    assert view.rack == tuple(game.racks[seat])
    assert view.discard_top == game.discard[-1]
    assert view.draw_size == len(game.draw)
    assert view.legal == (10, 11)
    assert view.unseen == set(range(1, 51)) - set(game.racks[seat]) - set(game.discard)


def test_zones():
    assert [card_zone(c, 40) for c in (1, 4, 5, 40)] == [0, 0, 1, 9]
    assert zone_range(0, 40) == (1, 4) and zone_range(9, 60) == (55, 60)


@st.composite
def tables(draw):
    """A player count and a valid mix of rules options for it."""
    players = draw(st.sampled_from([2, 3, 4]))
    options = {
        "empty_pile": draw(st.sampled_from(["shuffle", "flip"])),
        "bonus": draw(st.booleans()),
        "turn_limit": draw(st.sampled_from([60, 150])),
    }
    if players == 2:
        options["min_run"] = draw(st.sampled_from([0, 0, 3, 4]))
    if players == 4:
        options["partners"] = draw(st.booleans())
    return players, options


@pytest.mark.parametrize("name", ["random", "heuristic", "expert"])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), table=tables())
def test_bots_play_only_legal_actions(name, seed, table):
    players, options = table
    bots = [
        agents.load(name, num_players=players, seed=seed + i, **options) for i in range(players)
    ]
    env, steps = play_round(bots, seed, **options)
    assert env.game.round_over and steps > 0


def test_expert_plays_legally_once_the_flipped_draw_pile_is_public():
    """Four players: the 20-card draw pile runs out before the expert can finish."""
    names = ("random", "expert", "random", "random")
    bots = [agents.load(name, 4, seed=3, empty_pile="flip") for name in names]
    env, _ = play_round(bots, 3, empty_pile="flip")
    assert env.game.reshuffles > 0 and env.game.draw_known


@pytest.mark.parametrize("name", ["random", "heuristic", "expert"])
def test_explain_is_one_line(name):
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=1)
    text = agents.load(name, seed=0).explain(env.observe(env.agent_selection))
    assert text and "\n" not in text


def test_heuristic_explains_zone():
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=2)
    bot = agents.load("heuristic")
    obs = env.observe(env.agent_selection)
    text = bot.explain(obs)
    assert ("zone" in text) or ("draw from the draw pile" in text)


def test_random_is_reproducible():
    def log(seed):
        bots = [agents.load("random", seed=seed), agents.load("random", seed=seed + 1)]
        return play_round(bots, 3, turn_limit=60)[0].game.log

    assert log(7) == log(7)
    assert log(7) != log(8)


def test_heuristic_beats_random_nearly_always():
    wins = 0
    for seed in range(30):
        bots = [agents.load("heuristic"), agents.load("random", seed=seed)]
        if seed % 2:
            bots.reverse()
        env, _ = play_round(bots, seed)
        hero = bots.index(next(b for b in bots if b.name == "heuristic"))
        wins += env.game.racko_player == hero
    assert wins >= 28


@pytest.mark.slow  # 200 rounds: strength needs many deals, so only the full suite checks it
def test_expert_beats_heuristic():
    """Duplicate deals, both seats: about 80% expected; 62% of 200 rounds is far above a coin."""
    wins = 0.0
    for seed in range(100):
        for hero in (0, 1):
            bots = [agents.load("heuristic"), agents.load("heuristic")]
            bots[hero] = agents.load("expert")
            env, _ = play_round(bots, 10_000 + seed)
            wins += env.game.racko_player == hero
    assert wins / 200 >= 0.62


def test_expert_explains_its_plan():
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=11)
    text = agents.load("expert").explain(env.observe(env.agent_selection))
    assert "plan cost" in text  # its planner's number, named for what it is (not "turns")


def test_load_errors(tmp_path):
    with pytest.raises(ValueError, match="known bots are"):
        agents.load("nosuchbot")
    with pytest.raises(FileNotFoundError, match="missing.onnx"):
        agents.load(str(tmp_path / "missing.onnx"))
    with pytest.raises(ValueError, match="num_players"):
        agents.load("heuristic", num_players=5)
    with pytest.raises(ValueError, match="num_players"):
        agents.load("heuristic", num_players="2")
    with pytest.raises(ValueError, match="unknown rules option"):
        agents.load("heuristic", colour="red")
    with pytest.raises(ValueError, match="cannot import module"):
        agents.load("no_such_module_xyz:Bot")
    with pytest.raises(ValueError, match="has no attribute"):
        agents.load("agents.heuristic:Nope")
    text = tmp_path / "bot.txt"
    text.write_text("x")
    with pytest.raises(ValueError, match="not a supported bot file"):
        agents.load(str(text))


def test_user_bot_from_module_class(tmp_path, monkeypatch):
    (tmp_path / "my_first_bot.py").write_text(
        textwrap.dedent(
            """
            from agents import Bot

            class AlwaysDraw(Bot):
                name = "always-draw"

                def __init__(self, num_players=2):
                    self.num_players = num_players

                def act(self, observation):
                    legal = [a for a, ok in enumerate(observation["action_mask"]) if ok]
                    return 10 if 10 in legal else legal[-1]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    bot = agents.load("my_first_bot:AlwaysDraw", num_players=3, bonus=True)
    assert isinstance(bot, Bot) and bot.num_players == 3
    play_round([bot, agents.load("heuristic", 3), agents.load("random", 3, seed=1)], 4)


def test_bot_instance_passes_through():
    bot = agents.load("heuristic")
    assert agents.load(bot) is bot


def test_bots_refuse_off_turn_observation():
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=0)
    other = [a for a in env.agents if a != env.agent_selection][0]
    obs = env.observe(other)
    assert not np.any(obs["action_mask"])
    for name in ("random", "heuristic", "expert"):
        with pytest.raises(ValueError, match="not on turn"):
            agents.load(name).act(obs)
