"""The model layer (train/network/): the structured network in plain torch, the same network as the
SB3 trainer's policy, and importable by RLlib without stable-baselines3."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gymnasium import spaces  # noqa: E402

from racko_env.actions import NUM_ACTIONS  # noqa: E402
from racko_env.observation import OBS_SIZE  # noqa: E402
from train.common.onnx_export import sample_observations  # noqa: E402
from train.network.frozen import FrozenPolicy  # noqa: E402
from train.network.structured import PolicyGraph, StructuredNetwork  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SIZES = {"num_cards": 40, "slot_hidden": (16, 8), "trunk_hidden": (32, 16)}


def _sb3_policy():
    from train.sb3.policy import StructuredPolicy

    return StructuredPolicy(
        spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
        spaces.Discrete(NUM_ACTIONS),
        lambda _: 0.0,
        **SIZES,
    )


def test_one_seed_gives_the_sb3_policy_and_the_network_the_same_weights_and_rng() -> None:
    """Building either moves torch's generator alike: a trainer that freezes snapshots of one
    kind or the other draws the same numbers afterwards."""
    torch.manual_seed(3)
    policy = _sb3_policy()
    after_policy = torch.rand(4)
    torch.manual_seed(3)
    network = StructuredNetwork(**SIZES)
    after_network = torch.rand(4)
    ours, theirs = network.state_dict(), policy.state_dict()
    assert ours.keys() == theirs.keys()
    for key in ours:
        assert torch.equal(ours[key], theirs[key]), key
    assert torch.equal(after_policy, after_network)


def test_the_network_exports_the_sb3_policys_graph_byte_for_byte(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    from train.common.onnx_export import export_module

    torch.manual_seed(5)
    policy = _sb3_policy().eval()
    network = StructuredNetwork(**SIZES)
    network.load_state_dict(policy.state_dict())
    a, _ = export_module(PolicyGraph(policy), tmp_path / "sb3", 2, {}, check=20)
    b, _ = export_module(PolicyGraph(network.eval()), tmp_path / "net", 2, {}, check=20)
    assert a.read_bytes() == b.read_bytes()


def test_the_networks_forward_is_its_graphs_logits_and_its_value() -> None:
    torch.manual_seed(1)
    network = StructuredNetwork(**SIZES).eval()
    obs, masks = sample_observations(2, {}, 50, seed=2)
    with torch.no_grad():
        logits, values = network(torch.as_tensor(obs))
        action, masked = PolicyGraph(network)(torch.as_tensor(obs), torch.as_tensor(masks))
    assert values.shape == (50,)
    assert torch.equal(masked[torch.as_tensor(masks)], logits[torch.as_tensor(masks)])
    assert torch.equal(action, masked.argmax(1))


def test_a_frozen_network_saves_and_loads_as_plain_arrays() -> None:
    torch.manual_seed(2)
    frozen = FrozenPolicy(StructuredNetwork(**SIZES), "snap")
    again = FrozenPolicy.from_arrays(frozen.to_arrays(), "snap")
    obs, masks = sample_observations(2, {}, 100, seed=4)
    assert np.array_equal(frozen.act_batch(obs, masks), again.act_batch(obs, masks))
    assert isinstance(again.graph.policy, StructuredNetwork)


def test_a_frozen_network_of_a_smaller_game_keeps_its_sizes() -> None:
    """A snapshot of racks of 5 (2 players, cards 1-20) rebuilds for that game, plays only its
    slots, and computes its own features (the learner games' shared call reads the rule book's)."""
    torch.manual_seed(3)
    rules = {"rack_size": 5, "deck_size": 20}
    network = StructuredNetwork(20, (8,), (8,), num_players=2, rack_size=5)
    frozen = FrozenPolicy(network, "small")
    again = FrozenPolicy.from_arrays(frozen.to_arrays(), "small")
    obs, masks = sample_observations(2, rules, 100, seed=5)
    actions = again.act_batch(obs, masks)
    assert np.array_equal(frozen.act_batch(obs, masks), actions)
    assert masks[np.arange(100), actions].all() and not frozen.takes_features
    old = {k: v for k, v in frozen.to_arrays().items() if k not in ("num_players", "rack_size")}
    with pytest.raises(ValueError, match="'deck_size' must be at least"):  # read as 10 slots
        FrozenPolicy.from_arrays(old, "small")


@pytest.mark.slow  # a process that loads Ray
def test_rllib_needs_no_stable_baselines3() -> None:
    """With stable-baselines3 and sb3-contrib blocked, the RLlib trainer's parts import, and its
    structured module is built, frozen into a league snapshot and exported."""
    pytest.importorskip("ray")
    code = textwrap.dedent(
        """
        import sys
        for name in ("stable_baselines3", "sb3_contrib"):
            sys.modules[name] = None  # any import of them now raises ImportError
        import gymnasium as gym
        import torch
        from racko_env.observation import OBS_SIZE
        import train.rllib.finish, train.rllib.module
        import train.rllib_ppo
        from train.rllib.env import observation_space
        from train.rllib.module import MaskedActorCritic, export_graph
        from train.rllib.vector import SnapshotLeague

        module = MaskedActorCritic(
            observation_space=observation_space(features=True),
            action_space=gym.spaces.Discrete(14),
            model_config={"encoder": "structured", "hidden": [8], "slot_hidden": [8]},
        )
        league = SnapshotLeague(2, 0.5)
        league.add(module, "s0")
        obs = torch.zeros(3, OBS_SIZE)
        mask = torch.ones(3, 14, dtype=torch.bool)
        print(export_graph(module)(obs, mask)[0].shape[0], type(league.pool.snapshots[0]).__name__)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["3", "FrozenPolicy"]
