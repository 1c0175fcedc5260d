"""The OpenSpiel game under the rules options ``rack_size``, ``deck_size`` and solitaire: fed the
env's chance, it plays the env's game move for move over random games of k = 3..10 and 1-4
players (the batched engine is held to the same env in ``test_options.py``)."""

from __future__ import annotations

import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import racko_env.openspiel as ro  # noqa: E402
from racko_env import racko_v1  # noqa: E402
from racko_env.actions import DRAW_PILE  # noqa: E402
from racko_env.config import RulesConfig  # noqa: E402
from racko_env.observation import layout_for  # noqa: E402


def _random_rules(k: int, players: int, rng: random.Random) -> dict:
    smallest = players * k + 2
    return {
        "rack_size": k,
        "deck_size": rng.randint(smallest, min(60, smallest + 12)),
        "empty_pile": rng.choice(["shuffle", "flip"]),
        "turn_limit": rng.randint(15, 60),
    }


def _feed_deal(state, game) -> None:
    """The env engine's fresh deal as chance outcomes: the racks in dealing order, then the
    face-up card."""
    n, k = game.num_players, game.rack_size
    deck = [game.racks[(game.dealer + 1 + i) % n][k - 1 - i // n] for i in range(k * n)]
    for card in [*deck, game.discard[0]]:
        assert state.is_chance_node() and card in dict(state.chance_outcomes())
        state.apply_action(card)


def _play_both(num_players: int, rules: dict, seed: int) -> int:
    """One env round and the OpenSpiel game fed its chance and the same random actions: every
    seat's tensors, strings and legal actions compared at every decision; the turns played."""
    env = racko_v1.raw_env(num_players=num_players, **rules)
    env.reset(seed=seed)
    game = env.game
    state = pyspiel.load_game("racko", {"players": num_players, **rules}).new_initial_state()
    for card in game.dealer_draw:
        state.apply_action(card)
    _feed_deal(state, game)
    layout = layout_for(RulesConfig(num_players=num_players, **rules))
    rng = random.Random(seed)
    while True:
        assert state.current_player() == game.current
        for q in range(num_players):
            obs = env.observe(f"player_{q}")
            tensor = np.array(state.observation_tensor(q), dtype=np.float32)
            assert tensor.tobytes() == obs["observation"].tobytes()
            text = ro.observation_text(obs["observation"], game.num_cards, layout)
            assert state.observation_string(q) == text
            assert state.legal_actions(q) == list(np.flatnonzero(obs["action_mask"]))
        action = rng.choice(state.legal_actions())
        env.step(action)
        state.apply_action(action)
        if action == DRAW_PILE and state.is_chance_node():  # the card the env's pile gave
            state.apply_action(game.held)
        if all(env.terminations.values()) or all(env.truncations.values()):
            break
    assert state.is_terminal()
    assert state.returns() == [env.rewards[a] for a in env.possible_agents]
    table = state.racko_game()
    assert table.racks == game.racks and table.discard == game.discard
    return game.turn


@pytest.mark.parametrize("players", [1, 2, 3, 4])
@pytest.mark.parametrize("k", range(3, 11))
def test_openspiel_plays_the_env_game(k: int, players: int) -> None:
    rng = random.Random(k * 10 + players)
    turns = 0
    for seed in range(2):
        turns += _play_both(players, _random_rules(k, players, rng), seed)
    assert turns > 0


def test_parameters_come_from_the_options() -> None:
    assert ro.DEFAULT_PARAMS["rack_size"] == 10 and ro.DEFAULT_PARAMS["deck_size"] == 0
    game = pyspiel.load_game("racko", {"players": 1, "rack_size": 3, "deck_size": 8})
    assert game.num_players() == 1 and game.max_chance_outcomes() == 9
    assert game.observation_tensor_shape() == [layout_for(game.rules).size]
    with pytest.raises((pyspiel.SpielError, ValueError), match="deck_size"):
        pyspiel.load_game("racko", {"players": 2, "rack_size": 5, "deck_size": 11})


SMALL_GAMES = [
    {"players": 1, "rack_size": 3, "deck_size": 5, "turn_limit": 30},
    {"players": 1, "rack_size": 4, "deck_size": 10, "turn_limit": 30, "empty_pile": "flip"},
    {"players": 1, "turn_limit": 30},
    {"players": 2, "rack_size": 3, "deck_size": 8, "turn_limit": 30},
    {"players": 2, "rack_size": 5, "deck_size": 20, "turn_limit": 30, "min_run": 3},
    {"players": 2, "deck_size": 30, "turn_limit": 30},
    {"players": 3, "rack_size": 4, "deck_size": 14, "turn_limit": 30, "empty_pile": "flip"},
    {"players": 4, "rack_size": 3, "deck_size": 14, "turn_limit": 30, "partners": True},
    {"players": 2, "rack_size": 4, "deck_size": 12, "turn_limit": 20, "episode": "game",
     "target_score": 60},
]  # fmt: skip


def _ids(params: dict) -> str:
    return "-".join(f"{k}={v}" for k, v in params.items())


@pytest.mark.parametrize("params", SMALL_GAMES, ids=_ids)
def test_openspiel_random_simulation_checks_pass_at_small_sizes(params: dict) -> None:
    """OpenSpiel's own checks (legal actions, chance outcomes, returns, serialisation through
    the observer's tensors) at every kind of size: solitaire, small racks, small decks."""
    game = pyspiel.load_game("racko", params)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def _decision_states(params: dict, seed: int, every: int = 3):
    """States at decisions of a seeded random playthrough (every ``every``-th one)."""
    state = pyspiel.load_game("racko", params).new_initial_state()
    rng = random.Random(seed)
    k = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice(state.chance_outcomes())[0])
            continue
        if k % every == 0:
            yield state
        state.apply_action(rng.choice(state.legal_actions()))
        k += 1


@pytest.mark.parametrize("params", SMALL_GAMES, ids=_ids)
def test_a_resampled_state_of_a_small_game_looks_the_same_and_keeps_every_card(params) -> None:
    sampler = pyspiel.UniformProbabilitySampler(5, 0.0, 1.0)
    checked = 0
    for state in _decision_states(params, seed=2):
        p = state.current_player()
        other = state.resample_from_infostate(p, sampler)
        assert other.information_state_string(p) == state.information_state_string(p)
        assert other.information_state_tensor(p) == state.information_state_tensor(p)
        assert other.legal_actions() == state.legal_actions()
        mine, theirs = state.racko_game(), other.racko_game()
        assert theirs.racks[p] == mine.racks[p] and theirs.public_slots == mine.public_slots
        held = [] if theirs.held is None else [theirs.held]
        every = [c for r in theirs.racks for c in r] + theirs.draw + theirs.discard + held
        assert sorted(every) == list(range(1, mine.num_cards + 1))  # every card, once
        other.apply_action(state.legal_actions()[0])  # the resample plays on
        checked += 1
    assert checked > 0


def test_a_state_from_a_small_games_observation_is_that_observation() -> None:
    params = {"players": 3, "rack_size": 4, "deck_size": 16, "turn_limit": 40}
    game = pyspiel.load_game("racko", params)
    for state in _decision_states(params, seed=3, every=4):
        p = state.current_player()
        obs = np.array(state.observation_tensor(p), dtype=np.float32)
        again = ro.state_from_observation(game, obs, seed=1)
        assert again.current_player() == 0
        assert np.array_equal(np.array(again.observation_tensor(0), dtype=np.float32), obs)
