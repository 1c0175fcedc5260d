"""The rules options ``rack_size``, ``deck_size`` and solitaire (``num_players=1``): known-answer
deals and turns on the rules engine, the observation layout sized to the game, the AEC env and the
Gymnasium view, and the batched engine in lockstep with the rules engine over k = 3..10 and 1-4
players."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import racko_env  # noqa: F401  (registers the Gymnasium ids)
from racko_env import racko_v1
from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase
from racko_env.config import RulesConfig
from racko_env.engine import RackoGame
from racko_env.observation import DEFAULT, OBS_SIZE, action_mask, encode, layout_for
from racko_env.rules import hand_score, is_racko, racko_score
from racko_env.vector import VectorRacko
from tests.env.test_gym_env import _play_both
from tests.env.test_vector_engine import RecordingChance, ScriptedRandom


def _game(deck: list[int], **options: object) -> RackoGame:
    game = RackoGame(**options)
    game.new_game(seed=0, first_dealer=0, deck_order=deck)
    return game


# ----------------------------------------------------------------- rules


def test_racko_score_and_small_racks() -> None:
    assert racko_score() == 75 and racko_score(3) == 40
    assert is_racko([1, 4, 7], rack_size=3) and not is_racko([1, 4, 7])
    assert not is_racko([4, 1, 7], rack_size=3)
    assert hand_score([2, 5, 8], True) == 40 and hand_score([2, 5, 1], False) == 10


# ----------------------------------------------------------------- known-answer deals


def test_solitaire_deal_and_a_known_game() -> None:
    game = _game(list(range(1, 9)), num_players=1, rack_size=3, deck_size=8)
    # The first card dealt goes to the back slot, the third to the front.
    assert game.racks == [[3, 2, 1]] and game.discard == [4] and game.draw == [8, 7, 6, 5]
    assert game.current == 0 and game.legal_actions() == (DRAW_PILE, TAKE_DISCARD)
    game.apply(DRAW_PILE)  # draws 5
    assert game.held == 5 and game.legal_actions() == (KEEP, DISCARD)
    game.apply(KEEP)
    assert game.legal_actions() == (0, 1, 2)
    with pytest.raises(ValueError, match="illegal action 3"):
        game.apply(3)
    game.apply(2)
    assert game.racks == [[3, 2, 5]] and game.discard == [4, 1] and game.turn == 1
    game.apply(TAKE_DISCARD)  # takes the 1
    game.apply(0)
    assert game.racks == [[1, 2, 5]] and game.round_over and game.racko_player == 0
    assert game.turn == 2 and game.last_round_points == [40] and game.totals == [40]


def test_solitaire_rack_dealt_ascending_still_takes_a_turn() -> None:
    game = _game([3, 2, 1, 4, 5, 6, 7, 8], num_players=1, rack_size=3, deck_size=8)
    assert game.racks == [[1, 2, 3]] and not game.round_over and game.phase == Phase.DRAW
    game.apply(DRAW_PILE)
    game.apply(DISCARD)
    assert game.round_over and game.racko_player == 0 and game.turn == 1


def test_solitaire_refills_at_the_end_of_the_turn_that_emptied_the_pile() -> None:
    # k=3, N=5: one card to draw. Drawing it empties the pile; the turn's end refills it with the
    # discard pile under its new top.
    game = _game([5, 1, 2, 3, 4], num_players=1, rack_size=3, deck_size=5)
    assert game.racks == [[2, 1, 5]] and game.discard == [3] and game.draw == [4]
    game.apply(DRAW_PILE)
    assert game.draw == []
    game.apply(DISCARD)
    assert game.draw == [3] and game.discard == [4] and game.reshuffles == 1


def test_two_player_small_deal() -> None:
    game = _game(list(range(1, 11)), num_players=2, rack_size=4, deck_size=10)
    # Dealt one at a time from the dealer's left (seat 1), back slot first.
    assert game.racks == [[8, 6, 4, 2], [7, 5, 3, 1]]
    assert game.discard == [9] and game.draw == [10] and game.current == 1
    assert game.num_cards == 10 and game.rack_size == 4


def test_custom_deck_with_full_racks() -> None:
    game = _game(list(range(1, 31)), num_players=2, deck_size=30)
    assert len(game.draw) == 30 - 20 - 1 and game.discard == [21]
    with pytest.raises(ValueError, match=r"permutation of the cards 1\.\.30"):
        game.new_game(deck_order=list(range(1, 41)))


@pytest.mark.parametrize("players", [1, 2, 3, 4])
@pytest.mark.parametrize("k", [3, 5, 10])
def test_random_games_keep_every_card(players: int, k: int) -> None:
    n = players * k + 2 + k  # a little more than the smallest deck
    game = RackoGame(num_players=players, rack_size=k, deck_size=n, turn_limit=200)
    rng = np.random.default_rng(k * 10 + players)
    for seed in range(5):
        game.new_game(seed=seed)
        while not game.round_over:
            game.apply(int(rng.choice(game.legal_actions())))
            held = [game.held] if game.held is not None else []
            cards = sorted(sum(game.racks, []) + game.discard + game.draw + held)
            assert cards == list(range(1, n + 1))
            assert all(len(rack) == k for rack in game.racks)


# ----------------------------------------------------------------- the layout


def test_layout_sizes_derive_from_the_game() -> None:
    assert layout_for(RulesConfig()) is DEFAULT and DEFAULT.size == OBS_SIZE == 270
    assert layout_for(RulesConfig(num_players=4, deck_size=50)) is DEFAULT
    tiny = layout_for(RulesConfig(num_players=1, rack_size=3, deck_size=8))
    assert (tiny.rack_size, tiny.opponents, tiny.cards) == (3, 0, 8)
    assert tiny.size == 30 and tiny.sizes == {1: 30, 2: 30}
    small = layout_for(RulesConfig(num_players=3, rack_size=5, deck_size=20))
    assert small.by_name["opp_slots"].size == 10 and small.by_name["unseen"].size == 20
    assert small.sizes[2] - small.sizes[1] == 3 * 10 + 2


def test_encode_known_answer_for_tiny_solitaire() -> None:
    game = _game(list(range(1, 9)), num_players=1, rack_size=3, deck_size=8)
    lay = layout_for(game.config)
    obs = encode(game, 0)
    assert obs.shape == (30,)
    assert obs[lay.RACK].tolist() == [np.float32(c / 8) for c in (3, 2, 1)]
    assert obs[lay.DISCARD_TOP] == np.float32(4 / 8) and obs[lay.DRAW_SIZE] == np.float32(4 / 8)
    assert obs[lay.PHASE].tolist() == [1.0, 0.0, 0.0]
    assert np.flatnonzero(obs[lay.UNSEEN]).tolist() == [4, 5, 6, 7]  # cards 5..8
    assert np.flatnonzero(obs[lay.IN_DISCARD]).tolist() == [3]  # card 4
    game.apply(DRAW_PILE)
    game.apply(KEEP)
    assert action_mask(game, 0).tolist() == [1, 1, 1] + [0] * 11


# ----------------------------------------------------------------- the AEC env and the view

SMALL = [
    dict(num_players=1, rack_size=3, deck_size=8),
    dict(num_players=1, rack_size=4, deck_size=10, empty_pile="flip"),
    dict(num_players=2, rack_size=3, deck_size=9, turn_limit=40),
    dict(num_players=3, rack_size=5, deck_size=20, bonus=True),
    dict(num_players=4, rack_size=3, deck_size=14, partners=True),
    dict(num_players=2, rack_size=6, deck_size=20, min_run=3),
    dict(num_players=2, deck_size=25, turn_limit=100),
    dict(num_players=1),
]


def _ids(cfg: dict) -> str:
    return "-".join(f"{k}={v}" for k, v in cfg.items())


@pytest.mark.parametrize("cfg", SMALL, ids=_ids)
def test_aec_env_plays_small_games(cfg: dict) -> None:
    env = racko_v1.env(**cfg)
    lay = layout_for(RulesConfig(**cfg))
    rng = np.random.default_rng(0)
    for seed in range(3):
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            assert obs["observation"].shape == (lay.size,)
            mask = obs["action_mask"]
            assert not mask[RulesConfig(**cfg).rack_size : 10].any()
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(mask))))
        game = env.unwrapped.game
        assert game.round_over and (game.truncated or game.racko_player is not None)


def test_aec_score_reward_is_one_for_a_small_racko() -> None:
    env = racko_v1.raw_env(num_players=1, rack_size=3, deck_size=8, reward="score")
    env.reset(options={"first_dealer": 0, "deck_order": [3, 2, 1, 4, 5, 6, 7, 8]})
    env.step(DRAW_PILE)
    env.step(DISCARD)
    assert env.rewards == {"player_0": 1.0} and env.terminations["player_0"]


@pytest.mark.parametrize("cfg", SMALL[:2] + SMALL[-1:], ids=_ids)
def test_gymnasium_view_plays_solitaire(cfg: dict) -> None:
    env = gymnasium.make("racko/Racko-v1", **cfg)
    size = layout_for(RulesConfig(**cfg)).size
    assert env.observation_space.shape == (size,)
    rng = np.random.default_rng(1)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            assert obs.shape == (size,)
            action = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        assert reward == 0.0  # nobody to win against


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_players": 2, "opponents": ["expert", "heuristic"], "rack_size": 4, "deck_size": 12},
        {"num_players": 3, "opponents": ["random"], "rack_size": 5, "deck_size": 25},
        {"num_players": 1, "rack_size": 3, "deck_size": 8, "reward": "score"},
        {"num_players": 2, "opponents": ["heuristic"], "deck_size": 30, "observation_version": 1},
    ],
    ids=_ids,
)
def test_gymnasium_view_equals_its_reference(kwargs: dict) -> None:
    """The view on the batched core gives the AEC-based reference's stream (tests/env)."""
    assert _play_both(kwargs, 3, steps=600, illegal_every=97) > 5


# ----------------------------------------------------------------- batched engine vs rules engine


def _lockstep(cfg: dict, num_games: int, steps: int, seed: int) -> dict[str, int]:
    """Each batched game against its own ``racko_v1.raw_env`` replaying the same chance: every
    seat's observation (bit for bit), mask, reward and episode end, after every step."""
    cfg = dict(cfg)
    episode, reward = cfg.pop("episode", "round"), cfg.pop("reward", "win")
    chance = RecordingChance(num_games, seed)
    vec = VectorRacko(num_games, episode=episode, reward=reward, chance=chance, **cfg)
    refs = []
    for b in range(num_games):
        env = racko_v1.raw_env(episode=episode, reward=reward, **cfg)
        env.game.rng = ScriptedRandom(chance.queues[b])
        env.reset(seed=b)
        refs.append(env)
    rng = np.random.default_rng(seed)
    games = np.arange(num_games)
    stats = {"episodes": 0, "racko": 0, "refills": 0}

    def compare() -> None:
        for p in range(vec.num_players):
            obs = vec.observe(games, np.full(num_games, p))
            masks = vec.action_masks(games, np.full(num_games, p))
            for b, env in enumerate(refs):
                ref = env.observe(env.possible_agents[p])
                assert obs[b].tobytes() == ref["observation"].tobytes(), (b, p)
                assert np.array_equal(masks[b], ref["action_mask"].astype(bool)), (b, p)

    compare()
    for _ in range(steps):
        cur = vec.game.current.copy()
        masks = vec.action_masks(games, cur)
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        result = vec.step(actions)
        for b, env in enumerate(refs):
            env.step(int(actions[b]))
            for p, agent in enumerate(env.possible_agents):
                assert env.rewards[agent] == result.rewards[b, p]
                assert env.terminations[agent] == result.terminated[b]
                assert env.truncations[agent] == result.truncated[b]
        stats["refills"] += int((vec.game.reshuffles > 0).sum())
        done = np.flatnonzero(result.done)
        if done.size:
            stats["episodes"] += done.size
            stats["racko"] += int((vec.game.racko_player[done] >= 0).sum())
            vec.reset(done)
            for b in done:
                refs[b].reset()
        compare()
    return stats


LOCKSTEP = [
    dict(num_players=1, rack_size=3, deck_size=5),
    dict(num_players=1, rack_size=4, deck_size=10, empty_pile="flip", reward="score"),
    dict(num_players=1, rack_size=7, deck_size=20, episode="game", target_score=10, turn_limit=20),
    dict(num_players=2, rack_size=3, deck_size=8, turn_limit=30),
    dict(num_players=2, rack_size=5, deck_size=14, min_run=3, bonus=True, turn_limit=40),
    dict(num_players=3, rack_size=4, deck_size=16, empty_pile="flip", reward="score"),
    dict(num_players=3, rack_size=8, deck_size=40, turn_limit=60),
    dict(num_players=4, rack_size=3, deck_size=14, partners=True, episode="game", target_score=60),
    dict(num_players=4, rack_size=6, deck_size=30, turn_limit=50),
    dict(num_players=2, rack_size=10, deck_size=24, turn_limit=60),
    dict(num_players=1, rack_size=10, deck_size=16, turn_limit=30),
]


@pytest.mark.parametrize("cfg", LOCKSTEP, ids=_ids)
def test_batched_engine_matches_the_rules_engine(cfg: dict) -> None:
    stats = _lockstep(cfg, num_games=12, steps=150, seed=len(_ids(cfg)))
    assert stats["episodes"] > 0 and stats["refills"] > 0


@pytest.mark.parametrize("players", [1, 2, 3, 4])
@pytest.mark.parametrize("k", range(3, 11))
def test_batched_engine_matches_on_random_sizes(k: int, players: int) -> None:
    """Random decks, refill modes and turn limits for every rack size and player count."""
    rng = np.random.default_rng(k * 10 + players)
    smallest = players * k + 2
    cfg = {
        "num_players": players,
        "rack_size": k,
        "deck_size": int(rng.integers(smallest, min(60, smallest + 12) + 1)),
        "empty_pile": str(rng.choice(["shuffle", "flip"])),
        "turn_limit": int(rng.integers(8, 20)),
    }
    stats = _lockstep(cfg, num_games=4, steps=80, seed=k * 10 + players)
    assert stats["episodes"] > 0
