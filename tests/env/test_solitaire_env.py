"""racko/RackoSolitaire-v0: the env on the rules engine, its tabular numbering of the engine's
states, its vector twin on the solver's tables, and the optimum played out by Monte Carlo."""

from __future__ import annotations

import math

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import racko_env  # noqa: F401  (registers the ids)
from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase
from racko_env.observation import action_mask, encode
from racko_env.solitaire import evaluate, solve, space
from racko_env.solitaire_env import (
    RackoSolitaireEnv,
    observation_index,
    state_game,
    state_observations,
    tabular_index,
)


def _random_legal(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[rng.integers(mask.sum())])


def test_the_env_is_registered_and_passes_gymnasiums_checks() -> None:
    for tabular in (False, True):
        env = gymnasium.make("racko/RackoSolitaire-v0", rack_size=3, deck_size=8, tabular=tabular)
        check_env(env.unwrapped, skip_render_check=True)
        obs, info = env.reset(seed=3)
        assert env.observation_space.contains(obs)
        assert info["action_mask"].tolist() == [0] * 10 + [1, 1, 0, 0]
    full = gymnasium.make("racko/RackoSolitaire-v0")  # k=10, N=40: the full-size solitaire
    obs, _ = full.reset(seed=0)
    assert obs.shape == full.observation_space.shape and full.unwrapped.game.num_cards == 40


def test_rewards_count_turns_and_episodes_end_at_rack_o_or_the_limit() -> None:
    env = RackoSolitaireEnv(rack_size=3, deck_size=8, tabular=True)
    rng = np.random.default_rng(1)
    finished = cut = 0
    for episode in range(30):
        obs, info = env.reset(seed=episode)
        total, turns, done = 0.0, 0, False
        while not done:
            action = _random_legal(rng, info["action_mask"])
            obs, reward, terminated, truncated, info = env.step(action)
            turns += action in (DISCARD,) or action < 3
            assert reward == (-1.0 if (action == DISCARD or action < 3) else 0.0)
            total += reward
            done = terminated or truncated
        assert total == -turns == -env.game.turn
        finished += terminated
        cut += truncated
        assert terminated == (env.game.racko_player == 0) and truncated == env.game.truncated
    assert finished == 30 and cut == 0
    short = RackoSolitaireEnv(rack_size=3, deck_size=8, tabular=True, turn_limit=1)
    short.reset(seed=0)
    rack = short.game.racks[0]
    short.step(DRAW_PILE)
    _, _, terminated, truncated, _ = short.step(DISCARD)
    assert truncated == (rack != sorted(rack)) and terminated == (rack == sorted(rack))


def test_an_illegal_action_ends_the_episode_at_the_turn_limits_cost() -> None:
    env = RackoSolitaireEnv(rack_size=3, deck_size=8, turn_limit=50)
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(KEEP)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-50.0, True, False, KEEP)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(DRAW_PILE)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="integer action id"):
        env.step(1.0)


@pytest.mark.slow
def test_the_tabular_observation_follows_the_solvers_tables() -> None:
    """Each engine step lands where the tables say (draws: on a card of the draw pile)."""
    env = RackoSolitaireEnv(rack_size=3, deck_size=6, tabular=True)
    sp = env.space
    rng = np.random.default_rng(0)
    for episode in range(200):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            action = _random_legal(rng, info["action_mask"])
            prev, before = obs, sp.decode(obs)
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            if action == DRAW_PILE:
                after = sp.decode(obs)
                assert after.phase == Phase.KEEP_OR_DISCARD and after.rack == before.rack
                assert after.card in before.draw
                continue
            predicted, ended, racko = sp.step(prev, action, None)
            assert obs == predicted and racko == terminated and ended == (reward == -1.0)


def test_each_state_has_a_game_and_an_observation_that_number_back_to_it() -> None:
    sp = space(3, 5)
    for index in range(sp.num_observations):
        for from_discard in (False, True):
            game = state_game(sp, index, from_discard)
            assert tabular_index(game, sp) == index
            obs = {"observation": encode(game, 0), "action_mask": action_mask(game, 0)}
            assert observation_index(obs, 3, 5) == index
            assert set(np.flatnonzero(obs["action_mask"])) == set(game.legal_actions())


def test_the_vector_twin_plays_the_same_game() -> None:
    envs = gymnasium.make_vec(
        "racko/RackoSolitaire-v0",
        num_envs=64,
        vectorization_mode="vector_entry_point",
        rack_size=3,
        deck_size=8,
        tabular=True,
        turn_limit=5,
    )
    sp = envs.unwrapped.space
    obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(200):
        actions = np.array([_random_legal(rng, m) for m in info["action_mask"]])
        before = obs
        obs, reward, terminated, truncated, info = envs.step(actions)
        after = np.where(info["_final_obs"], info["final_obs"], obs) if "final_obs" in info else obs
        for i in np.flatnonzero(actions != DRAW_PILE):
            predicted, ended, racko = sp.step(int(before[i]), int(actions[i]), None)
            assert (after[i], ended, racko) == (predicted, reward[i] == -1.0, terminated[i])
        ends += int((terminated | truncated).sum())
    assert ends > 50 and (obs < sp.num_observations).all()
    with pytest.raises(ValueError, match="illegal action"):
        envs.step(np.full(64, TAKE_DISCARD if obs[0] >= sp.num_states else KEEP))


@pytest.mark.slow
def test_the_optimal_policys_monte_carlo_mean_lies_in_its_interval() -> None:
    """2,000 rounds of the engine under the optimal table: their mean turns lie within the 95%
    interval around the exact optimum (a 1-in-20 miss at a fixed seed would be chance, so the
    seed is fixed)."""
    solution = solve(3, 8)
    env = RackoSolitaireEnv(rack_size=3, deck_size=8, tabular=True)
    turns = []
    for episode in range(2000):
        obs, _ = env.reset(seed=10_000 + episode)
        done = False
        while not done:
            obs, _, terminated, truncated, _ = env.step(int(solution.policy[obs]))
            done = terminated or truncated
        turns.append(env.game.turn)
    mean, half = np.mean(turns), 1.96 * np.std(turns, ddof=1) / math.sqrt(len(turns))
    assert abs(mean - solution.expected_turns) < half


class _TableBot:
    """A bot that looks its action up in a policy table by the observation's tabular state."""

    def __init__(self, table: np.ndarray, k: int, n: int) -> None:
        self.table, self.k, self.n = table, k, n

    def reset(self) -> None:
        return None

    def act(self, observation: dict) -> int:
        return int(self.table[observation_index(observation, self.k, self.n)])


@pytest.mark.slow
def test_a_bot_is_evaluated_as_the_table_it_plays() -> None:
    solution = solve(3, 6)
    bot = _TableBot(solution.policy, 3, 6)
    assert evaluate(bot, 3, 6) == pytest.approx(solution.expected_turns, abs=1e-12)
    worse = solution.policy.copy()
    worse[: solution.space.num_states] = DRAW_PILE  # never take the discard top
    assert evaluate(_TableBot(worse, 3, 6), 3, 6) == pytest.approx(evaluate(worse, 3, 6))
    assert evaluate(worse, 3, 6) > solution.expected_turns


@pytest.mark.parametrize(("k", "n"), [(3, 5), (3, 8), (4, 10)])
def test_state_observations_are_the_encoders_at_state_game(k: int, n: int) -> None:
    sp = space(k, n)
    rng = np.random.default_rng(k * 100 + n)
    ids = np.concatenate(
        [
            rng.integers(sp.num_observations, size=400),
            np.arange(2 * sp.num_states - 50, 2 * sp.num_states + 50),
        ]
    )
    vec, masks = state_observations(sp, ids)
    for row, o in enumerate(ids.tolist()):
        game = state_game(sp, o)
        np.testing.assert_array_equal(vec[row], encode(game, 0), err_msg=str(sp.decode(o)))
        np.testing.assert_array_equal(masks[row], action_mask(game, 0).astype(bool))


def test_the_learner_seat_core_pays_solitaires_turn_rewards() -> None:
    """``reward="turns"`` with one player (the main job's solitaire) pays what
    racko/RackoSolitaire-v0 pays: -1 on each step that ends a turn, so a return is minus the
    turns the round took."""
    from racko_env.learner_games import LearnerGames

    games = LearnerGames(16, 1, seed=3, reward="turns", rack_size=4, deck_size=10)
    games._start(games._all)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(300):
        masks = games.action_masks()
        actions = np.array([_random_legal(rng, m) for m in masks])
        turns = games.games.game.turn.copy()
        rewards, terminated, truncated = games._play(actions, games._all)
        ends_turn = (actions == DISCARD) | (actions < 4)
        assert (rewards == np.where(ends_turn, -1.0, 0.0)).all()
        done = np.flatnonzero(terminated | truncated)
        assert (games._ep_return[done] == -(turns[done] + 1)).all()
        ended += len(done)
        games._start(done)
    assert ended > 20
