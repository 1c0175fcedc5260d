"""The structured policy: its features against a plain-Python reference, its export, its cache."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gymnasium import spaces  # noqa: E402

from racko_env.observation import (  # noqa: E402
    OBS_SIZE,
)
from train.common.onnx_export import sample_observations  # noqa: E402
from train.network.features import RackFeatures  # noqa: E402
from train.network.structured import PolicyGraph  # noqa: E402
from train.sb3.policy import StructuredPolicy  # noqa: E402


def test_draw_rows_only_gives_the_same_features():
    obs, _ = sample_observations(2, {}, 300, seed=5)
    o = torch.as_tensor(obs)
    full = RackFeatures(40)(o)
    rows = RackFeatures(40, draw_rows_only=True)(o)
    for a, b in zip(full, rows, strict=True):
        assert torch.equal(a, b)


def _policy(num_cards: int = 40, seed: int = 0) -> StructuredPolicy:
    torch.manual_seed(seed)
    space = spaces.Box(0, 1, (OBS_SIZE,), np.float32)
    return StructuredPolicy(space, spaces.Discrete(14), lambda _: 1e-3, num_cards=num_cards)


def test_graph_plays_the_policys_masked_argmax():
    policy = _policy()
    obs, masks = sample_observations(2, {}, 200, seed=1)
    action, logits = PolicyGraph(policy)(torch.as_tensor(obs), torch.as_tensor(masks))
    with torch.no_grad():
        dist = policy.get_distribution(torch.as_tensor(obs), action_masks=masks)
    expected = dist.distribution.probs.argmax(1)
    assert torch.equal(action, expected)
    assert masks[np.arange(200), action.numpy()].all()
    assert (logits[~torch.as_tensor(masks)] < -1e7).all()


def test_cached_features_give_the_same_policy():
    from train.sb3.feature_cache import FeatureCache
    from train.sb3.vec_env import RackoVecEnv

    env = FeatureCache(RackoVecEnv(8, num_players=2, opponents=["heuristic"], seed=3), 40)
    cached = env.reset()
    assert cached.shape == (8, env.observation_space.shape[0])
    policy = _policy()
    with torch.no_grad():
        a = policy.extract_features(torch.as_tensor(cached), policy.features_extractor)
        b = policy.extract_features(
            torch.as_tensor(cached[:, :OBS_SIZE]), policy.features_extractor
        )
    assert torch.equal(a, b)
    masks = env.action_masks()
    for _ in range(30):  # terminal observations are cached too (SB3 bootstraps from them)
        actions = np.array([np.flatnonzero(m)[0] for m in masks])
        cached, _, dones, infos = env.step(actions)
        masks = env.action_masks()
        for done, info in zip(dones, infos, strict=True):
            if done:
                assert info["terminal_observation"].shape == cached.shape[1:]


@pytest.mark.slow
def test_snapshot_fed_kernel_features_plays_what_the_exported_onnx_bot_plays(tmp_path):
    """Training's snapshots read the kernel's features; the exported graph computes its own."""
    pytest.importorskip("onnxruntime")
    from agents.features import flat_features, rack_features
    from train.common.onnx_export import export_module, onnx_actions
    from train.network.frozen import FrozenPolicy

    policy = _policy(seed=3)
    onnx_path, _ = export_module(PolicyGraph(policy), tmp_path, 2, {}, check=20)
    obs, masks = sample_observations(2, {}, 300, seed=11)
    snapshot = FrozenPolicy(policy, "snap")
    features = flat_features(*rack_features(obs, 40))
    owner = np.zeros(len(obs), dtype=np.intp)
    from_features = FrozenPolicy.act_group([snapshot], owner, features, masks)
    exported = onnx_actions(onnx_path.read_bytes(), obs, masks)
    assert np.array_equal(from_features, exported)
    assert np.array_equal(snapshot.act_batch(obs, masks), exported)
    # two snapshots in one call: each row is played by its own
    other = FrozenPolicy(_policy(seed=4), "other")
    owner[::2] = 1
    mixed = FrozenPolicy.act_group([snapshot, other], owner, features, masks)
    assert np.array_equal(mixed[1::2], exported[1::2])
    assert np.array_equal(mixed[::2], other.act_batch(obs[::2], masks[::2]))


def test_snapshots_in_one_stacked_call_play_what_each_plays_alone():
    """``act_group`` with several snapshots is one stacked forward over uneven, shuffled groups."""
    from agents.features import flat_features, rack_features
    from train.network.frozen import FrozenPolicy

    obs, masks = sample_observations(2, {}, 200, seed=5)
    features = flat_features(*rack_features(obs, 40))
    pool = [FrozenPolicy(_policy(seed=s), f"s{s}") for s in (1, 2, 3)]
    owner = np.random.default_rng(0).choice(3, size=len(obs), p=[0.6, 0.3, 0.1])
    together = FrozenPolicy.act_group(pool, owner, features, masks)
    for k, snap in enumerate(pool):
        rows = owner == k
        assert np.array_equal(together[rows], snap.act_batch(obs[rows], masks[rows]))
    assert masks[np.arange(len(obs)), together].all()


# (players, rack slots, deck): games beyond the rule book's, the larger ones in the full suite only
GAMES = [
    pytest.param((1, 3, 8), marks=pytest.mark.slow),
    (1, 4, 10),
    pytest.param((1, 4, 11), marks=pytest.mark.slow),
    pytest.param((1, 10, 40), marks=pytest.mark.slow),
    (2, 5, 20),
    pytest.param((3, 6, 30), marks=pytest.mark.slow),
    pytest.param((4, 10, 60), marks=pytest.mark.slow),
    (2, 10, 40),
]


def _game(game: tuple[int, int, int]) -> tuple[dict, object, StructuredPolicy]:
    """The rules options, layout and a seeded structured policy of a game."""
    from racko_env.config import RulesConfig
    from racko_env.observation import layout_for

    players, k, n = game
    rules = {"rack_size": k, "deck_size": n}
    lay = layout_for(RulesConfig(num_players=players, **rules))
    torch.manual_seed(sum(game))
    space = spaces.Box(0, 1, (lay.size,), np.float32)
    policy = StructuredPolicy(
        space, spaces.Discrete(14), lambda _: 1e-3, num_cards=n, num_players=players, rack_size=k
    )
    with torch.no_grad():  # sharpen the random init so argmax ties cannot hide disagreements
        for p in policy.parameters():
            p.mul_(3.0)
    return rules, lay, policy


@pytest.mark.parametrize("game", GAMES, ids=lambda g: f"{g[0]}p-k{g[1]}-N{g[2]}")
def test_features_twin_and_onnx_graph_agree_at_every_size(game, tmp_path):
    """At every size: the kernel's features, the torch twin's and the same twin as an ONNX
    graph agree; the exported bot (its graph computing its own features) plays the policy's masked
    argmax, as the snapshot fed the kernel's features does, and loads with ``agents.load``."""
    ort = pytest.importorskip("onnxruntime")
    import agents
    from agents.features import flat_features, rack_features
    from racko_env.rules import deck_size
    from train.common.onnx_export import export_module, onnx_actions
    from train.network.frozen import FrozenPolicy

    players, k, n = game
    rules, lay, policy = _game(game)
    obs, masks = sample_observations(players, rules, 150, seed=sum(game))
    assert obs.shape == (150, lay.size)
    kernel = flat_features(*rack_features(obs, n, lay))
    twin = policy.features_extractor.rack
    with torch.no_grad():
        torch_features = torch.cat([x.flatten(1) for x in twin(torch.as_tensor(obs))], 1)
    np.testing.assert_allclose(kernel, torch_features.numpy(), rtol=1e-5, atol=1e-5)
    graph = tmp_path / "features.onnx"
    torch.onnx.export(
        twin, (torch.as_tensor(obs[:2]),), graph, dynamo=False, input_names=["obs"],
        dynamic_axes={"obs": {0: "batch"}}, opset_version=17,
    )  # fmt: skip
    slots, glob = ort.InferenceSession(str(graph)).run(None, {"obs": obs})
    np.testing.assert_allclose(kernel, flat_features(slots, glob), rtol=1e-5, atol=1e-5)

    onnx_path, json_path = export_module(PolicyGraph(policy), tmp_path, players, rules, check=50)
    manifest = json.loads(json_path.read_text())
    assert manifest["observation_size"] == lay.size and manifest["num_players"] == players
    recorded = (manifest["rules"].get("rack_size"), manifest["rules"].get("deck_size"))
    assert recorded == ((None, None) if k == 10 and n == deck_size(players) else (k, n))
    exported = onnx_actions(onnx_path.read_bytes(), obs, masks)
    played, _ = PolicyGraph(policy)(torch.as_tensor(obs), torch.as_tensor(masks))
    assert np.array_equal(exported, played.numpy())
    assert np.array_equal(FrozenPolicy(policy, "snap").act_batch(obs, masks), exported)
    bot = agents.load(onnx_path, players, **rules)
    assert np.array_equal(bot.act_batch(obs, masks), exported)
