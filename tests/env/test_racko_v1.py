"""The PettingZoo AEC environment ``racko_v1``: the API contract, masks, rewards, episodes, rendering."""

from __future__ import annotations

import functools
import random

import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, render_test, seed_test

import racko_env
from racko_env import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, racko_v1
from racko_env.observation import OBS_SIZE, OBS_VERSION, encode

PLAYERS = [2, 3, 4]
EPISODES = ["round", "game"]
EVENS = [2, 4, 6, 8, 10, 12, 14, 16, 18]


def short(episode: str) -> dict:
    """Short rounds for game mode, so that several rounds fit in the PettingZoo test cycles."""
    return {"turn_limit": 20} if episode == "game" else {}


# ----------------------------------------------------------------- PettingZoo's own tests


@pytest.mark.parametrize("episode", EPISODES)
@pytest.mark.parametrize("n", PLAYERS, ids=[f"{n}p" for n in PLAYERS])
def test_pettingzoo_api_test(n: int, episode: str) -> None:
    api_test(racko_v1.env(num_players=n, episode=episode, **short(episode)), num_cycles=300)
    api_test(racko_v1.env(num_players=n, episode=episode), num_cycles=300)


@pytest.mark.parametrize("n", PLAYERS, ids=[f"{n}p" for n in PLAYERS])
def test_pettingzoo_api_test_whole_game(n: int) -> None:
    """Target 42 (no sum of 5s equals it) and 10-turn rounds: the game ends within the cycles."""
    api_test(racko_v1.env(num_players=n, episode="game", target_score=42, turn_limit=10))


@pytest.mark.parametrize("episode", EPISODES)
@pytest.mark.parametrize("n", PLAYERS, ids=[f"{n}p" for n in PLAYERS])
def test_pettingzoo_seed_test(n: int, episode: str) -> None:
    seed_test(functools.partial(racko_v1.env, num_players=n, episode=episode, **short(episode)))


@pytest.mark.parametrize("episode", EPISODES)
@pytest.mark.parametrize("n", PLAYERS, ids=[f"{n}p" for n in PLAYERS])
def test_pettingzoo_render_test(n: int, episode: str, capsys) -> None:
    render_test(
        functools.partial(racko_v1.env, num_players=n, episode=episode),
        custom_tests={"ansi": lambda text: "Discard top" in text and "player_" in text},
    )
    assert "Discard top" in capsys.readouterr().out  # "human" printed the table


# ----------------------------------------------------------------- identity and spaces


def test_registered_with_pettingzoo() -> None:
    env = pettingzoo.make("aec", "racko/racko-v1", num_players=3)
    assert isinstance(env.unwrapped, racko_v1.raw_env)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert "racko/racko-v1" in pettingzoo.aec_registry
    assert racko_env.racko_v1 is racko_v1


@pytest.mark.parametrize("n", PLAYERS, ids=[f"{n}p" for n in PLAYERS])
def test_metadata_agents_and_spaces(n: int) -> None:
    env = racko_v1.env(num_players=n)
    assert env.metadata["name"] == "racko_v1"
    assert set(env.metadata["render_modes"]) == {"human", "ansi"}
    env.reset(seed=0)
    assert env.possible_agents == env.agents == [f"player_{i}" for i in range(n)]
    for agent in env.agents:
        assert env.action_space(agent) == spaces.Discrete(14)
        space = env.observation_space(agent)
        assert (
            space["observation"].shape == (OBS_SIZE,) and space["observation"].dtype == np.float32
        )
        assert space["action_mask"].shape == (14,) and space["action_mask"].dtype == np.int8
    assert env.unwrapped.obs_version == OBS_VERSION


def test_observation_shows_own_rack() -> None:
    env = racko_v1.env(num_players=3)
    env.reset(seed=4)
    n_cards = env.unwrapped.game.num_cards
    for agent in env.agents:
        obs = env.observe(agent)["observation"]
        assert np.rint(obs[:10] * n_cards).astype(int).tolist() == list(env.unwrapped.rack(agent))


# ----------------------------------------------------------------- masks and illegal actions


def mask_of(env, agent: str) -> set[int]:
    return set(np.flatnonzero(env.observe(agent)["action_mask"]).tolist())


@pytest.mark.parametrize("n", PLAYERS, ids=[f"{n}p" for n in PLAYERS])
def test_masks_per_phase(n: int) -> None:
    env = racko_v1.env(num_players=n)
    env.reset(seed=3)

    def expect(on_turn: set[int]) -> None:
        agent = env.agent_selection
        assert mask_of(env, agent) == on_turn
        assert env.last()[0]["action_mask"].sum() == len(on_turn)
        for other in env.agents:
            if other != agent:
                assert mask_of(env, other) == set()  # all zeros off turn

    first = env.agent_selection
    expect({DRAW_PILE, TAKE_DISCARD})
    env.step(DRAW_PILE)
    assert env.agent_selection == first  # the turn goes on
    expect({KEEP, DISCARD})
    env.step(KEEP)
    expect(set(range(10)))
    env.step(4)
    assert env.agent_selection != first
    expect({DRAW_PILE, TAKE_DISCARD})
    env.step(TAKE_DISCARD)
    expect(set(range(10)))  # a taken discard must go into the rack
    env.step(0)
    expect({DRAW_PILE, TAKE_DISCARD})
    env.step(DRAW_PILE)
    env.step(DISCARD)
    expect({DRAW_PILE, TAKE_DISCARD})


@pytest.mark.parametrize(
    ("before", "bad", "match"),
    [
        pytest.param(
            (), KEEP, r"illegal action 12 \(keep\).*legal actions are \[10, 11\]", id="keep"
        ),
        pytest.param((), 3, r"illegal action 3 .*legal actions are \[10, 11\]", id="slot"),
        pytest.param(
            (DRAW_PILE,), 7, r"illegal action 7 .*legal actions are \[12, 13\]", id="slot-early"
        ),
        pytest.param(
            (TAKE_DISCARD,), DISCARD, r"illegal action 13 .*\[0, 1, 2, 3", id="discard-taken"
        ),
        pytest.param((), None, r"action None .*legal actions are \[10, 11\]", id="none-on-turn"),
    ],
)
def test_raw_env_illegal_action_raises(before, bad, match) -> None:
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=0)
    for a in before:
        env.step(a)
    agent, obs = env.agent_selection, env.observe(env.agent_selection)
    with pytest.raises(ValueError, match=match):
        env.step(bad)
    assert env.agent_selection == agent  # refused without a trace
    assert np.array_equal(env.observe(agent)["observation"], obs["observation"])


@pytest.mark.parametrize("n", PLAYERS, ids=[f"{n}p" for n in PLAYERS])
def test_wrapped_env_illegal_action_ends_the_episode(n: int) -> None:
    env = racko_v1.env(num_players=n)
    env.reset(seed=1)
    offender = env.agent_selection
    env.step(KEEP)  # illegal at the start of a turn: TerminateIllegalWrapper
    final = {}
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        assert terminated or truncated
        final[agent] = reward
        env.step(None)
    assert final == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}
    assert env.agents == []


# ----------------------------------------------------------------- scripted rounds


def deck_2p(mover: list[int], dealer: list[int | None], discard: int) -> list[int]:
    """Deck order for 2 players: the mover (left of the dealer) is dealt first, back slot first."""
    named = set(mover) | {c for c in dealer if c is not None} | {discard}
    spare = iter(sorted(set(range(1, 41)) - named))
    dealer = [next(spare) if c is None else c for c in dealer]
    deal = [c for pair in zip(mover[::-1], dealer[::-1], strict=True) for c in pair]
    return deal + [discard] + list(spare)


def scripted_env(**kwargs):
    """player_0 moves first and can go Rack-O by taking the 40 into slot 10; player_1's rack
    ascends for 3 cards (21, 22, 23, then 5)."""
    env = racko_v1.env(num_players=2, **kwargs)
    deck = deck_2p(EVENS + [1], [21, 22, 23, 5] + [None] * 6, 40)
    env.reset(seed=0, options={"first_dealer": 1, "deck_order": deck})
    assert env.agent_selection == "player_0"
    return env


def finish(env) -> dict[str, tuple[float, bool, bool]]:
    """Step every agent through the end; what each one saw in ``last()`` when it was done."""
    seen = {}
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        assert terminated or truncated, "finish() is for an episode that has ended"
        seen[agent] = (reward, terminated, truncated)
        env.step(None)
    return seen


@pytest.mark.parametrize(
    ("reward", "expected"),
    [
        pytest.param("score", {"player_0": 1.0, "player_1": 0.2}, id="score-docstring-example"),
        pytest.param("win", {"player_0": 1.0, "player_1": -1.0}, id="win"),
    ],
)
def test_racko_rewards_reach_every_agent(reward: str, expected: dict) -> None:
    env = scripted_env(reward=reward)
    env.step(TAKE_DISCARD)
    env.step(9)  # player_0 goes Rack-O: the episode ends
    assert env.unwrapped.game.racko_player == 0
    seen = finish(env)
    assert {a: r for a, (r, _, _) in seen.items()} == pytest.approx(expected)
    assert all(term and not trunc for _, term, trunc in seen.values())


def test_round_end_infos() -> None:
    env = scripted_env(reward="score")
    env.step(TAKE_DISCARD)
    env.step(9)
    raw = env.unwrapped
    assert raw.infos["player_0"] == {"round_points": 75, "went_racko": True}
    assert raw.infos["player_1"] == {"round_points": 15, "went_racko": False}


def test_turn_limit_sets_truncations_not_terminations() -> None:
    env = scripted_env(reward="win", turn_limit=2)
    env.step(DRAW_PILE)
    env.step(DISCARD)
    assert not any(env.truncations.values())
    env.step(DRAW_PILE)
    env.step(DISCARD)  # the second turn: the limit
    assert all(env.truncations.values()) and not any(env.terminations.values())
    seen = finish(env)
    # Truncated: both score their prefixes (45 for player_0, 15 for player_1); the best one wins.
    assert env.unwrapped.game.last_round_points == [45, 15]
    assert seen == {"player_0": (1.0, False, True), "player_1": (-1.0, False, True)}


def test_game_mode_scores_and_next_round() -> None:
    env = scripted_env(reward="score", episode="game")
    assert env.unwrapped.scores == {"player_0": 0, "player_1": 0}
    env.step(TAKE_DISCARD)
    env.step(9)  # Rack-O ends the round, not the game
    assert not any(env.terminations.values()) and not any(env.truncations.values())
    raw = env.unwrapped
    assert raw.scores == {"player_0": 75, "player_1": 15}
    assert raw.game.round_number == 2 and raw.game.dealer == 0
    assert env.agent_selection == "player_1"  # left of the new dealer
    assert env.last()[1] == pytest.approx(0.2)  # player_1's round reward arrives on its turn


# ----------------------------------------------------------------- observation contents


def obs_of(env, agent: str) -> np.ndarray:
    return env.observe(agent)["observation"]


def test_observation_shows_a_taken_discard_to_everyone() -> None:
    env = scripted_env()  # player_0: 2, 4, ..., 18, 1; the discard is 40
    env.step(TAKE_DISCARD)
    other = obs_of(env, "player_1")
    assert other[40] == 0.0 and other[41] == 0.0  # holds nothing; the discard pile is empty
    assert other[116 + 40] == 0.0  # the taken card is not unseen: everyone saw it
    env.step(0)  # 40 into the front slot, the 2 goes on the discard pile
    other, own = obs_of(env, "player_1"), obs_of(env, "player_0")
    assert other[10] == 1.0 and other[11:20].sum() == 0.0  # opponent slot 0 holds 40/40
    assert own[0] == 1.0 and own[10:40].sum() == 0.0  # player_0 knows nothing of player_1's rack
    for o in (other, own):
        assert o[41] == pytest.approx(2 / 40)  # discard top
        assert o[56 + 2] == 1.0 and o[116 + 2] == 0.0  # card 2: in the discard pile, not unseen


def test_observation_keeps_a_drawn_card_private() -> None:
    env = scripted_env()
    env.step(DRAW_PILE)
    held = env.unwrapped.held_card
    mover, other = obs_of(env, "player_0"), obs_of(env, "player_1")
    assert mover[40] == pytest.approx(held / 40) and other[40] == 0.0
    assert mover[116 + held] == 0.0 and other[116 + held] == 1.0  # still unseen for player_1
    assert mover[44:47].tolist() == [0.0, 1.0, 0.0]  # keep-or-discard asked
    assert other[44:47].tolist() == [0.0, 0.0, 0.0]  # nothing asked off turn
    env.step(KEEP)
    assert obs_of(env, "player_0")[44:47].tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize(
    ("n", "partners", "present", "flag"),
    [
        (2, False, [1, 0, 0], 0),
        (3, False, [1, 1, 0], 0),
        (4, False, [1, 1, 1], 0),
        (4, True, [1, 1, 1], 1),
    ],
    ids=["2p", "3p", "4p", "partners"],
)
def test_observation_table_shape(n: int, partners: bool, present: list[int], flag: int) -> None:
    env = racko_v1.env(num_players=n, partners=partners)
    env.reset(seed=0)
    for agent in env.agents:
        o = obs_of(env, agent)
        assert o[53:56].tolist() == present and o[56] == flag
        draw_pile = len(env.unwrapped.game.draw)
        assert o[43] == pytest.approx(draw_pile / env.unwrapped.game.num_cards)


def test_observation_flip_makes_the_draw_top_public() -> None:
    env = racko_v1.raw_env(num_players=2, empty_pile="flip", turn_limit=1000)
    game = env.unwrapped.game
    env.reset(seed=0, options={"first_dealer": 0, "deck_order": list(range(1, 41))})
    for _ in range(18):
        env.step(DRAW_PILE)
        env.step(DISCARD)
    assert all(obs_of(env, a)[42] == 0.0 for a in env.agents)  # face down: unknown
    env.step(DRAW_PILE)
    env.step(DISCARD)  # the pile runs out and the discards are turned over: 21 is on top
    assert game.draw[-1] == 21
    assert all(obs_of(env, a)[42] == pytest.approx(21 / 40) for a in env.agents)


# ----------------------------------------------------------------- random play to the end


def sorter(env) -> int:
    """Mostly sensible moves so that Rack-O happens: slot s wants a card from the s-th tenth."""
    game = env.unwrapped.game
    rack = game.racks[game.current]

    def slot_for(card: int) -> int:
        return (card - 1) * 10 // game.num_cards

    def wanted(card: int) -> bool:
        return slot_for(rack[slot_for(card)]) != slot_for(card)

    if game.phase == 0:
        return TAKE_DISCARD if game.discard_top and wanted(game.discard_top) else DRAW_PILE
    if game.phase == 1:
        return KEEP if wanted(game.held) else DISCARD
    return slot_for(game.held)


def play_out(env, seed: int, smart: float = 0.8) -> dict[str, list[float]]:
    """Play to the end; every reward each agent saw through ``last()``, in order."""
    env.reset(seed=seed)
    chooser = random.Random(seed)
    rewards: dict[str, list[float]] = {a: [] for a in env.possible_agents}
    for agent in env.agent_iter(100_000):
        obs, reward, terminated, truncated, _ = env.last()
        rewards[agent].append(reward)
        if terminated or truncated:
            env.step(None)
        elif chooser.random() < smart:
            env.step(sorter(env))
        else:
            env.step(chooser.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    assert env.agents == []
    return rewards


@pytest.mark.parametrize("n", PLAYERS, ids=[f"{n}p" for n in PLAYERS])
def test_win_rewards_zero_sum_and_delivered_to_losers(n: int) -> None:
    outcomes = set()
    for seed in range(12):
        env = racko_v1.env(num_players=n, turn_limit=8 if seed % 2 else 80)  # both endings
        rewards = play_out(env, seed)
        final = {a: r[-1] for a, r in rewards.items()}
        assert all(sum(r[:-1]) == 0 for r in rewards.values())  # nothing before the end
        assert sum(final.values()) == pytest.approx(0.0)
        game = env.unwrapped.game
        if game.racko_player is not None:
            winners = {game.racko_player}
            outcomes.add("rack-o")
        else:
            best = max(game.last_round_points)
            winners = {p for p, pts in enumerate(game.last_round_points) if pts == best}
            outcomes.add("truncated")
        k = len(winners)
        for p, agent in enumerate(env.possible_agents):
            if k == n:
                want = 0.0
            elif p in winners:
                want = (n - k) / (k * (n - 1))
            else:
                want = -1.0 / (n - 1)
            assert final[agent] == pytest.approx(want), (seed, game.last_round_points)
    assert outcomes == {"rack-o", "truncated"}  # both endings were exercised


def test_partners_win_rewards_per_team() -> None:
    outcomes = set()
    for seed in range(8):
        env = racko_v1.env(num_players=4, partners=True, turn_limit=8 if seed % 2 else 80)
        final = {a: r[-1] for a, r in play_out(env, seed).items()}
        game = env.unwrapped.game
        team = game.round_team_points
        outcomes.add(game.racko_player is None)
        if game.racko_player is None and team[0] == team[1]:
            assert set(final.values()) == {0.0}
            continue
        if game.racko_player is not None:
            win = game.racko_player % 2  # seats 0 + 2 are team 0, seats 1 + 3 team 1
        else:
            win = 0 if team[0] > team[1] else 1
        assert final == {f"player_{p}": (1.0 if p % 2 == win else -1.0) for p in range(4)}
    assert outcomes == {True, False}  # truncated and Rack-O rounds were both played


@pytest.mark.parametrize("n", PLAYERS, ids=[f"{n}p" for n in PLAYERS])
@pytest.mark.parametrize("reward", ["win", "score"])
def test_game_mode_plays_rounds_to_the_target(n: int, reward: str) -> None:
    env = racko_v1.env(
        num_players=n, episode="game", reward=reward, target_score=150, turn_limit=40
    )
    rewards = play_out(env, seed=n)
    raw = env.unwrapped
    game = raw.game
    assert game.game_over and game.round_number > 1
    assert all(raw.terminations.values()) and not any(raw.truncations.values())
    totals = raw.scores
    assert max(totals.values()) >= 150
    winner = f"player_{game.game_winner}"
    assert totals[winner] == max(totals.values())
    if reward == "win":
        assert rewards[winner][-1] == pytest.approx(1.0)
        assert sum(r[-1] for r in rewards.values()) == pytest.approx(0.0)
    else:  # every round's points / 75 reach each agent: they add up to its total
        for agent, seen in rewards.items():
            assert sum(seen) == pytest.approx(totals[agent] / 75)


def test_partners_score_mode_gives_team_points() -> None:
    env = racko_v1.env(
        num_players=4, partners=True, episode="game", reward="score", target_score=120
    )
    rewards = play_out(env, seed=2)
    scores = env.unwrapped.scores
    assert scores["player_0"] == scores["player_2"] and scores["player_1"] == scores["player_3"]
    for agent, seen in rewards.items():
        assert sum(seen) == pytest.approx(scores[agent] / 75)


# ----------------------------------------------------------------- accessors and rendering


def test_accessors() -> None:
    env = racko_v1.env(num_players=3, episode="game")
    env.reset(seed=9)
    raw = env.unwrapped
    game = raw.game
    for p, agent in enumerate(env.agents):
        rack = raw.rack(agent)
        assert isinstance(rack, tuple) and len(rack) == 10 and list(rack) == game.racks[p]
    assert raw.discard_top == game.discard[-1] and isinstance(raw.discard_top, int)
    assert raw.held_card is None
    assert raw.scores == {"player_0": 0, "player_1": 0, "player_2": 0}
    top = game.draw[-1]
    env.step(DRAW_PILE)
    assert raw.held_card == top
    env.step(KEEP)
    agent = env.agent_selection
    old = raw.rack(agent)[2]
    env.step(2)
    assert raw.rack(agent)[2] == top and raw.discard_top == old and raw.held_card is None


def test_render_ansi_table() -> None:
    env = racko_v1.env(num_players=3, render_mode="ansi")
    env.reset(seed=5)
    raw = env.unwrapped
    agent = env.agent_selection
    text = env.render()
    assert isinstance(text, str)
    assert f"On turn: {agent}" in text
    assert f"Discard top: {raw.discard_top:>3}" in text
    assert f"Draw pile: {len(raw.game.draw)} cards" in text
    rack_line = " ".join(f"{c:>3}" for c in raw.rack(agent))
    assert rack_line in text  # the viewer's rack (default: the player on turn)
    others = [a for a in env.agents if a != agent]
    assert all(" ".join(f"{c:>3}" for c in raw.rack(a)) not in text for a in others)
    env.step(DRAW_PILE)
    assert f"Held card: {raw.held_card}" in env.render()


def test_render_viewer_all_shows_every_rack() -> None:
    env = racko_v1.env(num_players=4, render_mode="ansi", viewer="all")
    env.reset(seed=6)
    text = env.render()
    for agent in env.agents:
        assert " ".join(f"{c:>3}" for c in env.unwrapped.rack(agent)) in text


def test_render_human_prints(capsys) -> None:
    env = racko_v1.env(num_players=2, render_mode="human")
    env.reset(seed=2)
    assert env.render() is None
    out = capsys.readouterr().out
    assert "Discard top" in out and "On turn: player_" in out
    env.step(DRAW_PILE)  # human mode also prints after each step
    assert "keep or discard" in capsys.readouterr().out


def test_render_without_mode_returns_none() -> None:
    env = racko_v1.env(num_players=2)
    env.reset(seed=2)
    assert env.render() is None


def test_reset_options_fix_the_first_deal():
    env = racko_v1.raw_env(num_players=2)
    deck = list(range(40, 0, -1))
    env.reset(seed=3, options={"first_dealer": 1, "deck_order": deck})
    # Dealer is seat 1, so seat 0 gets the first card (40) in its back slot, and moves first.
    assert env.rack("player_0") == (22, 24, 26, 28, 30, 32, 34, 36, 38, 40)
    assert env.rack("player_1") == (21, 23, 25, 27, 29, 31, 33, 35, 37, 39)
    assert env.discard_top == 20
    assert env.agent_selection == "player_0"
    np.testing.assert_array_equal(env.observe("player_0")["observation"], encode(env.game, 0))
    with pytest.raises(ValueError, match="deck_order"):
        env.reset(options={"deck_order": [1, 2, 3]})


@pytest.mark.parametrize(
    "action",
    [True, np.True_, 10.0, np.float64(10.0), float("inf"), float("nan"), "10", np.array([10])],
    ids=["True", "np.True_", "10.0", "np.float64", "inf", "nan", "str", "1-d array"],
)
def test_raw_env_refuses_actions_that_are_not_integers(action) -> None:
    """Checked, not coerced: True is not slot 1 and 10.0 is not a draw (inf no OverflowError)."""
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=0)
    before = (env.game.phase, env.game.held, env.agent_selection)
    with pytest.raises(ValueError, match=r"integer action id 0\.\.13 .*got"):
        env.step(action)
    assert (env.game.phase, env.game.held, env.agent_selection) == before
    assert not env.action_space(env.agent_selection).contains(action)


@pytest.mark.parametrize("action", [DRAW_PILE, np.int64(DRAW_PILE), np.uint8(DRAW_PILE)])
def test_raw_env_takes_python_and_numpy_integers(action) -> None:
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=0)
    env.step(action)
    assert env.game.held is not None and env.phase == racko_env.Phase.KEEP_OR_DISCARD
    env.step(np.array(KEEP))  # a 0-d integer array, as Gymnasium's Discrete accepts
    assert env.phase == racko_env.Phase.PLACE


def test_wrapped_env_asserts_a_bool_is_out_of_the_action_space() -> None:
    env = racko_v1.env(num_players=2)
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="action is not in action space"):
        env.step(True)


def test_raw_env_step_before_reset_and_after_the_end_say_so() -> None:
    env = racko_v1.raw_env(num_players=2)
    with pytest.raises(RuntimeError, match=r"before reset\(\)"):
        env.step(DRAW_PILE)
    env.reset(seed=1)
    rng = random.Random(1)
    while env.agents:
        agent = env.agent_selection
        done = env.terminations[agent] or env.truncations[agent]
        env.step(None if done else rng.choice(env.game.legal_actions()))
    for action in (None, DRAW_PILE):
        with pytest.raises(RuntimeError, match=r"every agent is done.*reset\(\)"):
            env.step(action)
    env.reset(seed=2)  # and the env plays again
    env.step(DRAW_PILE)
