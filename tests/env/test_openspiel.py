"""racko_env.openspiel: OpenSpiel's own checks pass, and the game plays the env's games move for move."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import racko_env.openspiel as ro  # noqa: E402
from agents import load  # noqa: E402
from racko_env import racko_v1  # noqa: E402
from racko_env.actions import DRAW_PILE  # noqa: E402
from racko_env.observation import OBS_SIZE  # noqa: E402
from racko_env.rules import RACK_SIZE  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- OpenSpiel's checks


@pytest.mark.parametrize(
    "params",
    [
        {"players": 2, "turn_limit": 60},
        {"players": 2, "turn_limit": 40, "min_run": 3, "bonus": True},
        {"players": 3, "turn_limit": 60, "empty_pile": "flip"},
        {"players": 4, "turn_limit": 40},
        pytest.param(
            {"players": 4, "turn_limit": 40, "partners": True, "empty_pile": "flip"},
            marks=pytest.mark.slow,
        ),
        pytest.param(
            {"players": 2, "turn_limit": 20, "episode": "game", "target_score": 60},
            marks=pytest.mark.slow,
        ),
    ],
)
def test_openspiel_random_simulation_checks_pass_with_serialisation(params: dict) -> None:
    game = pyspiel.load_game("racko", params)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


@pytest.mark.slow
def test_the_default_game_passes_the_checks_at_the_full_turn_limit() -> None:
    pyspiel.random_sim_test(pyspiel.load_game("racko"), num_sims=1, serialize=True, verbose=False)


def test_every_rules_option_is_a_game_parameter_and_the_type_is_zero_sum() -> None:
    game = pyspiel.load_game(
        "racko", {"players": 4, "partners": True, "bonus": True, "turn_limit": 50}
    )
    params = game.get_parameters()
    assert set(params) == {
        "players",
        "episode",
        "empty_pile",
        "turn_limit",
        "min_run",
        "bonus",
        "partners",
        "target_score",
        "rack_size",
        "deck_size",
    }
    assert params["partners"] is True and params["turn_limit"] == 50
    assert game.rules.partners and game.rules.bonus and game.rules.num_players == 4
    kind = game.get_type()
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert game.num_players() == 4 and game.num_distinct_actions() == 14
    assert game.information_state_tensor_size() == OBS_SIZE == game.observation_tensor_size()
    assert game.max_game_length() == 3 * 50
    game_mode = pyspiel.load_game("racko", {"episode": "game", "target_score": 100})
    assert game_mode.max_game_length() == 3 * 400 * (100 // 5 + ro.MAX_TIE_ROUNDS)
    assert str(pyspiel.load_game(str(game))) == str(game)  # the game string loads again


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"players": 5}, "'players' must be between 1 and 4"),
        ({"rack_size": 2}, "'rack_size' must be between 3 and 10"),
        ({"empty_pile": "burn"}, "'empty_pile' must be one of"),
        ({"partners": True}, "'partners' needs exactly 4 players"),
        ({"episode": "match"}, "'episode' must be one of"),
    ],
)
def test_a_bad_parameter_is_one_clear_error(params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game("racko", params)
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'colour'"):
        pyspiel.load_game("racko", {"colour": "red"})


def test_without_pyspiel_the_import_is_one_line_naming_the_extra() -> None:
    code = """
import sys
sys.modules["pyspiel"] = None  # as if not installed
try:
    import racko_env.openspiel
except ImportError as err:
    print(type(err).__name__, "|", err)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert "\n" not in line
    assert line.startswith("ImportError | racko_env.openspiel needs OpenSpiel (pyspiel)")
    assert 'pip install "racko[openspiel]"' in line


def test_importing_the_game_loads_no_layer_above_the_env() -> None:
    code = """
import json, sys
import racko_env.openspiel
above = ("agents", "racko_eval", "train", "racko_apps", "torch", "stable_baselines3", "ray")
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in above)))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- the differential test


def _feed_deal(state, game) -> None:
    """Apply the env engine's fresh deal as chance outcomes: the racks in dealing order, then the
    face-up card."""
    n = game.num_players
    deck = [game.racks[(game.dealer + 1 + k) % n][RACK_SIZE - 1 - k // n] for k in range(10 * n)]
    for card in [*deck, game.discard[0]]:
        assert state.is_chance_node()
        assert card in dict(state.chance_outcomes())
        state.apply_action(card)


def _play_both(num_players: int, episode: str, rules: dict, seed: int):
    """One env episode (the env's own chance) and the OpenSpiel game fed its chance outcomes and
    the same actions; everything the players see and may do is compared at every decision.
    Returns the env's engine at the end."""
    env = racko_v1.raw_env(num_players=num_players, episode=episode, **rules)
    env.reset(seed=seed)
    game = env.game
    osgame = pyspiel.load_game("racko", {"players": num_players, "episode": episode, **rules})
    state = osgame.new_initial_state()
    for card in game.dealer_draw:
        assert state.is_chance_node()
        state.apply_action(card)
    _feed_deal(state, game)
    heuristic = load("heuristic", num_players, **rules)
    rng = random.Random(seed)
    n_cards = game.num_cards
    while True:
        player = game.current
        assert state.current_player() == player
        assert env.agent_selection == f"player_{player}"
        table = state.racko_game()
        assert table.racks == game.racks and table.discard == game.discard
        assert sorted(table.draw) == sorted(game.draw) and table.totals == game.totals
        for q in range(num_players):
            obs = env.observe(f"player_{q}")
            np.testing.assert_array_equal(
                np.array(state.observation_tensor(q), dtype=np.float32), obs["observation"]
            )
            np.testing.assert_array_equal(state.information_state_tensor(q), obs["observation"])
            assert state.observation_string(q) == ro.observation_text(obs["observation"], n_cards)
            assert state.legal_actions(q) == list(np.flatnonzero(obs["action_mask"]))
        obs = env.observe(f"player_{player}")
        if rng.random() < 0.8:
            action = heuristic.act(obs)
        else:
            action = int(rng.choice(list(np.flatnonzero(obs["action_mask"]))))
        round_no = game.round_number
        env.step(action)
        state.apply_action(action)
        if action == DRAW_PILE and state.is_chance_node():  # the card the env's pile gave
            assert game.held in dict(state.chance_outcomes())
            state.apply_action(game.held)
        if all(env.terminations.values()) or all(env.truncations.values()):
            break
        assert not state.is_terminal()
        if game.round_number != round_no:  # the env dealt the next round
            _feed_deal(state, game)
    assert state.is_terminal()
    assert state.returns() == [env.rewards[a] for a in env.possible_agents]
    for q in range(num_players):
        np.testing.assert_array_equal(
            state.observation_tensor(q), env.observe(f"player_{q}")["observation"]
        )
    return game


@pytest.mark.parametrize(
    ("num_players", "episode", "rules", "covers"),
    [
        (2, "round", {}, "racko"),
        (2, "round", {"min_run": 3, "bonus": True, "turn_limit": 60}, "cut off, reshuffled"),
        (3, "round", {"turn_limit": 150}, "racko, reshuffled"),
        (4, "round", {"partners": True, "empty_pile": "flip", "turn_limit": 120}, "flipped"),
        (2, "game", {"target_score": 150, "turn_limit": 100}, "rounds"),
        (3, "game", {"target_score": 100, "turn_limit": 60, "empty_pile": "flip"}, "rounds"),
    ],
)
def test_the_game_plays_the_env_games_for_the_same_chance_outcomes(
    num_players: int, episode: str, rules: dict, covers: str
) -> None:
    ends = [_play_both(num_players, episode, rules, seed) for seed in (1, 2)]
    # what each case is there for did happen (seeded: these are facts about these seeds)
    if "racko" in covers:
        assert all(g.racko_player is not None for g in ends)
    if "cut off" in covers:
        assert all(g.truncated for g in ends)
    if "reshuffled" in covers:
        assert any(g.reshuffles for g in ends)
    if "flipped" in covers:
        assert any(g.draw_known for g in ends)
    if "rounds" in covers:
        assert all(g.round_number > 1 and g.game_over for g in ends)


# ----------------------------------------------------------------------------- resampling, strings


def _decision_states(params: dict, seed: int, every: int = 7):
    """States at decisions of a seeded random playthrough (every ``every``-th one)."""
    game = pyspiel.load_game("racko", params)
    state = game.new_initial_state()
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


@pytest.mark.parametrize(
    "params",
    [
        {"players": 2, "turn_limit": 120},
        {"players": 3, "turn_limit": 120, "empty_pile": "flip"},
        {"players": 4, "turn_limit": 80, "partners": True, "episode": "game", "target_score": 50},
    ],
)
def test_a_resampled_state_looks_the_same_to_the_player_and_keeps_every_card(params) -> None:
    sampler = pyspiel.UniformProbabilitySampler(3, 0.0, 1.0)
    changed = 0
    for state in _decision_states(params, seed=4):
        p = state.current_player()
        other = state.resample_from_infostate(p, sampler)
        assert other.information_state_string(p) == state.information_state_string(p)
        assert other.information_state_tensor(p) == state.information_state_tensor(p)
        assert other.legal_actions() == state.legal_actions()
        mine, theirs = state.racko_game(), other.racko_game()
        assert theirs.racks[p] == mine.racks[p] and theirs.public_slots == mine.public_slots
        held = [] if theirs.held is None else [theirs.held]
        every = [c for r in theirs.racks for c in r] + theirs.draw + theirs.discard + held
        assert sorted(every) == list(range(1, len(every) + 1))  # every card, once
        changed += theirs.racks != mine.racks
        action = state.legal_actions()[0]  # the resample plays on
        other.apply_action(action)
    assert changed > 0
    with pytest.raises(ValueError, match="for the player on turn"):
        state.resample_from_infostate((p + 1) % state.num_players(), sampler)


def test_the_observation_string_is_the_vector_and_the_infostate_adds_the_pile_orders() -> None:
    for state in _decision_states({"players": 2, "empty_pile": "flip", "turn_limit": 120}, 5, 3):
        p = state.current_player()
        obs = np.array(state.observation_tensor(p), dtype=np.float32)
        text = state.observation_string(p)
        assert text == ro.observation_text(obs, 40)
        assert state.information_state_string(p).startswith(text + " | discard order: ")
        table = state.racko_game()
        if table.draw_known:
            assert state.information_state_string(p).endswith(
                "draw order: " + " ".join(map(str, table.draw))
            )
    assert "rack: " in text and "unseen: " in text


def test_a_history_file_replays_and_a_bad_one_is_one_clear_error() -> None:
    *_, state = _decision_states({"players": 3, "turn_limit": 60}, 6)
    again = ro.state_from_history(ro.history_string(state))
    assert str(again) == str(state) and again.history() == state.history()
    for text in ("{}", "[1, 2]", "not json", '{"game": "racko", "params": [], "history": []}'):
        with pytest.raises(ValueError, match="not a racko history"):
            ro.state_from_history(text)
    with pytest.raises(ValueError, match="bad racko parameters in the history: .*'players'"):
        ro.state_from_history('{"game": "racko", "params": {"players": 9}, "history": []}')
    bad = ro.history_string(state).replace('"history": [', '"history": [99, ')
    with pytest.raises(ValueError, match=r"history entry 0 \(99\) is not a legal move"):
        ro.state_from_history(bad)


def test_an_impossible_chance_outcome_or_a_move_after_the_end_is_one_clear_error() -> None:
    game = pyspiel.load_game("racko", {"players": 2, "turn_limit": 10})
    state = game.new_initial_state()
    for card in (0, 41):  # the dealer draw: a card of the deck
        with pytest.raises(
            ValueError, match=rf"^{card} is not a chance outcome here \(dealer draw"
        ):
            state.clone().apply_action(card)
    state.apply_action(5)
    with pytest.raises(ValueError, match="1..40 not yet drawn"):
        state.apply_action(5)  # each player draws a card of their own
    state.apply_action(9)
    state.apply_action(7)  # the deal's first card
    with pytest.raises(
        ValueError, match=r"^7 is not a chance outcome here \(deal 7\).*not yet dealt"
    ):
        state.apply_action(7)
    rng = random.Random(0)
    while state.is_chance_node():
        state.apply_action(rng.choice(state.chance_outcomes())[0])
    state.apply_action(DRAW_PILE)
    on_rack = state.racko_game().racks[0][0]
    with pytest.raises(ValueError, match=rf"^{on_rack} is not a chance outcome here \(draw "):
        state.apply_action(on_rack)  # a card on a rack is not in the draw pile
    assert state.is_chance_node() and len(state.chance_outcomes()) == 40 - 21  # unchanged
    while not state.is_terminal():
        outcomes = state.chance_outcomes() if state.is_chance_node() else None
        state.apply_action(
            rng.choice(outcomes)[0] if outcomes else rng.choice(state.legal_actions())
        )
    with pytest.raises(ValueError, match="the game is over"):
        state.apply_action(3)


# ----------------------------------------------------------------------------- OpenSpiel's bots


def test_openspiel_ismcts_searches_from_the_state_and_from_observations_only() -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game("racko", {"players": 2, "turn_limit": 16})
    random_state = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(
        game,
        mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state),
        uct_c=2.0,
        max_simulations=4,
        random_state=random_state,
    )
    sampler = pyspiel.UniformProbabilitySampler(1, 0.0, 1.0)
    bot.set_resampler(lambda s, player: s.resample_from_infostate(player, sampler))
    state = game.new_initial_state()
    rng = random.Random(0)
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice(state.chance_outcomes())[0])
            continue
        if searched == 12:  # enough searches; random moves finish the round
            state.apply_action(rng.choice(state.legal_actions()))
            continue
        searched += 1
        p = state.current_player()
        # from the true state, and from one rebuilt from the observation alone (what a bot in
        # the env has): both search and answer a legal action
        seen = ro.state_from_observation(game, np.array(state.observation_tensor(p)), seed=p)
        assert seen.current_player() == 0
        assert seen.observation_tensor(0) == state.observation_tensor(p)
        assert bot.step(seen) in state.legal_actions()
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
    assert sorted(state.returns()) == [-1.0, 1.0] or state.returns() == [0.0, 0.0]


def test_openspiel_rl_environment_steps_the_game() -> None:
    from open_spiel.python import rl_environment

    env = rl_environment.Environment(pyspiel.load_game("racko", {"players": 3, "turn_limit": 30}))
    env.seed(0)
    step = env.reset()
    rng = random.Random(0)
    while not step.last():
        player = step.observations["current_player"]
        assert len(step.observations["info_state"][player]) == OBS_SIZE
        step = env.step([rng.choice(step.observations["legal_actions"][player])])
    assert abs(sum(step.rewards)) < 1e-9


def test_a_game_stopped_by_the_round_cap_is_shared_by_the_leaders() -> None:
    """OpenSpiel needs a finite game: past the cap (never reached in play) the leaders share."""
    game = pyspiel.load_game("racko", {"players": 3, "episode": "game", "turn_limit": 12})
    assert ro.max_rounds(game.rules, "game") == 500 // 5 + ro.MAX_TIE_ROUNDS
    state = game.new_initial_state()
    state._t.rounds_cap = 2  # as if 2 rounds were the bound
    rng = random.Random(7)
    while not state.is_terminal():
        outcomes = state.chance_outcomes() if state.is_chance_node() else None
        state.apply_action(
            rng.choice(outcomes)[0] if outcomes else rng.choice(state.legal_actions())
        )
    table = state.racko_game()
    assert table.round_number == 2 and not table.game_over  # nobody is near 500 after 2 rounds
    best = max(table.totals)
    leaders = {t for t, s in enumerate(table.totals) if s == best}
    assert state.returns() == racko_v1.win_rewards([0, 1, 2], leaders)
    assert abs(sum(state.returns())) < 1e-9
