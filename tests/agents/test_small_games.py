"""The bots under the rules options ``rack_size``, ``deck_size`` and solitaire: ``expert``,
``heuristic`` and ``random`` play them (per game and batched, the same decisions), the structured
policy's features and training take them, the planner stays finite on tiny decks, and every
component that does not play them refuses in one line naming the option and what does."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.batched import load_batch
from agents.features import Planner, exact_costs, feature_shape, racks_with_sentinels
from agents.obs import card_zone, decode, rules_config, zone_range
from racko_env import racko_v1
from racko_env.config import RulesConfig
from racko_env.observation import layout_for
from racko_env.rules import RACK_SIZE

SMALL = [
    dict(num_players=1, rack_size=3, deck_size=5),
    dict(num_players=1, rack_size=3, deck_size=8),
    dict(num_players=1, rack_size=4, deck_size=10),
    dict(num_players=2, rack_size=3, deck_size=8),
    dict(num_players=3, rack_size=5, deck_size=20, empty_pile="flip"),
    dict(num_players=4, rack_size=4, deck_size=18, partners=True),
    dict(num_players=2, deck_size=24),
    dict(num_players=1),
    dict(num_players=2, rack_size=5, deck_size=20),
    dict(num_players=3, rack_size=6, deck_size=30),
]


def _ids(cfg: dict) -> str:
    return "-".join(f"{k}={v}" for k, v in cfg.items())


def _play(cfg: dict, name: str, episodes: int, turn_limit: int = 300) -> list[int]:
    """Rounds of ``name`` in every seat; checks each per-game decision against the batched
    twin's on the same observation. The turns of each round."""
    n = cfg["num_players"]
    options = {k: v for k, v in cfg.items() if k != "num_players"}
    bot = agents.load(name, n, seed=0, **options)
    twin = load_batch(name, n, seed=0, **options)
    turns = []
    for seed in range(episodes):
        env = racko_v1.raw_env(turn_limit=turn_limit, **cfg)
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = bot.act(obs)
            assert obs["action_mask"][action]
            if name != "random":
                batch = twin.act_batch(obs["observation"][None], obs["action_mask"][None] > 0)
                assert int(batch[0]) == action
            env.step(action)
        turns.append(env.game.turn)
    return turns


@pytest.mark.parametrize("cfg", SMALL, ids=_ids)
@pytest.mark.parametrize("name", ["random", "heuristic", "expert"])
def test_bots_play_small_games(cfg: dict, name: str) -> None:
    turns = _play(cfg, name, episodes=4)
    assert len(turns) == 4


@pytest.mark.parametrize("deck", [5, 6, 7, 8])
def test_expert_goes_racko_in_tiny_solitaire(deck: int) -> None:
    """Every tiny deal reaches Rack-O well before the turn limit: no plan is stuck at no plan."""
    turns = _play(dict(num_players=1, rack_size=3, deck_size=deck), "expert", episodes=40)
    assert max(turns) < 60


def test_expert_exact_turns_are_finite_on_the_smallest_solitaire() -> None:
    """With 5 cards, a rack's replaced cards must come back for any plan to be finite: counted
    as cards that may come, expert goes Rack-O from every deal (exactly, by the solver)."""
    from racko_env import solitaire

    bot = agents.load("expert", 1, rack_size=3, deck_size=5)
    turns = solitaire.evaluate(bot, 3, 5)
    assert np.isfinite(turns) and turns >= solitaire.solve(3, 5).expected_turns - 1e-9


def test_expert_beats_heuristic_in_solitaire_turns() -> None:
    cfg = dict(num_players=1, rack_size=5, deck_size=12)
    assert np.mean(_play(cfg, "expert", 30)) < np.mean(_play(cfg, "heuristic", 30))


def test_planner_is_finite_on_tiny_decks() -> None:
    """k = 3 with 5..8 cards: the plan tables hold no NaN, and a rack always has a finite plan
    when every card may come."""
    for n in range(5, 9):
        racks = np.array([[a, b, c] for a in range(1, n + 1) for b in range(1, n + 1)
                          for c in range(1, n + 1) if len({a, b, c}) == 3])  # fmt: skip
        avail = np.ones((len(racks), n), dtype=np.int64)
        prefix = np.zeros((len(racks), n + 2), dtype=np.int64)
        np.cumsum(avail, axis=1, out=prefix[:, 1 : n + 1])
        prefix[:, n + 1] = prefix[:, n]
        plan = Planner(racks_with_sentinels(racks, n), prefix, exact_costs(n), prefix[:, n])
        assert np.isfinite(plan.base).all() and not np.isnan(plan.fwd).any()
        cards = np.tile(np.arange(n + 1), (len(racks), 1))
        costs = plan.placements(cards)
        assert costs.shape == (len(racks), n + 1, 3) and not np.isnan(costs).any()


def test_zones_of_small_racks() -> None:
    assert [card_zone(c, 8, 3) for c in range(1, 9)] == [0, 0, 0, 1, 1, 1, 2, 2]
    assert [zone_range(s, 8, 3) for s in range(3)] == [(1, 3), (4, 6), (7, 8)]
    assert [zone_range(s, 40) for s in (0, 9)] == [(1, 4), (37, 40)]  # the rule book's zones


def test_decode_reads_the_game_sizes() -> None:
    env = racko_v1.raw_env(num_players=2, rack_size=4, deck_size=12)
    env.reset(options={"first_dealer": 0, "deck_order": list(range(1, 13))})
    config = rules_config(2, {"rack_size": 4, "deck_size": 12})
    view = decode(env.observe("player_1"), config)
    assert view.rack == (7, 5, 3, 1) and view.num_cards == 12 and view.discard_top == 9
    assert view.opponents == ((0, 0, 0, 0),) and view.unseen == frozenset({2, 4, 6, 8, 10, 11, 12})
    assert rules_config(3, {"seed": 1}) is None  # the rule book's sizes: read from the vector
    with pytest.raises(ValueError, match="observation vector must have shape"):
        decode(env.observe("player_1"))


# ----------------------------------------------------------------- one-line refusals

REFUSALS = [
    ({"rack_size": 5, "deck_size": 20}, "rack_size=5"),
    ({"deck_size": 30}, "deck_size=30"),
    ({"num_players": 1}, "num_players=1"),
]


@pytest.mark.parametrize(("options", "option"), REFUSALS)
def test_search_refuses_other_sizes(options: dict, option: str) -> None:
    options = dict(options)
    n = options.pop("num_players", 2)
    with pytest.raises(ValueError, match=rf"^{option}: search \(its world sampler\) supports"):
        agents.load("search", n, **options)


def test_structured_policy_is_sized_to_the_game() -> None:
    """The structured policy trains at every size: its features read the game's own layout."""
    pytest.importorskip("torch")
    from train.common.config import parse_config
    from train.sb3.model import policy_spec

    cfg = parse_config(
        {
            "num_players": 2,
            "rules": {"rack_size": 4, "deck_size": 12},
            "ppo": {"policy": "structured"},
        },
        "test",
    )
    _, kwargs = policy_spec(cfg)
    assert (kwargs["num_cards"], kwargs["num_players"], kwargs["rack_size"]) == (12, 2, 4)


@pytest.mark.parametrize(
    "cfg",
    [dict(num_players=2, rack_size=4, deck_size=12), dict(num_players=1, rack_size=3, deck_size=8)],
    ids=_ids,
)
def test_vector_env_plays_small_games(cfg: dict) -> None:
    from agents.vector_env import RackoVectorEnv

    env = RackoVectorEnv(3, opponents="expert", seed=0, **cfg)
    size = layout_for(RulesConfig(**cfg)).size
    obs, _ = env.reset(seed=0)
    assert obs.shape == (3, size) and env.single_observation_space.shape == (size,)
    rng, ended = np.random.default_rng(0), 0
    for _ in range(120):
        masks = env.action_masks()
        actions = [int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in masks]
        obs, _, terminated, truncated, _ = env.step(np.array(actions))
        ended += int((terminated | truncated).sum())
    assert obs.shape == (3, size) and ended > 0


def test_vector_env_features_at_other_sizes() -> None:
    """``features=True`` appends the features of the game's own layout."""
    from agents.features import flat_features, rack_features
    from agents.vector_env import RackoVectorEnv

    env = RackoVectorEnv(2, opponents="expert", seed=0, rack_size=4, deck_size=12, features=True)
    lay = layout_for(RulesConfig(rack_size=4, deck_size=12))
    obs, _ = env.reset(seed=0)
    assert obs.shape == (2, lay.size + feature_shape(lay).size)
    want = flat_features(*rack_features(obs[:, : lay.size], 12, lay))
    assert np.array_equal(obs[:, lay.size :], want)


def test_shipped_bot_files_refuse_other_sizes() -> None:
    pytest.importorskip("onnxruntime")
    with pytest.raises(ValueError, match=r"rack_size: trained 10, asked 4"):
        agents.load("racko_2p", 2, rack_size=4, deck_size=12)


def test_rule_book_size_is_unchanged() -> None:
    assert RACK_SIZE == 10 and rules_config(2, {}) is None
