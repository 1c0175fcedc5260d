"""train/reference/linear_q_features.py and train/reference/dqn_features.py: tiny runs act legally and improve on
their untrained start; the pieces (per-action features, masking, the slot network, the buffer)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from agents.feature_obs import FEATURE_SIZE, columns
from racko_env import racko_v1
from racko_env.actions import NUM_ACTIONS
from racko_eval import quick_win_rate
from train.common import feature_runs
from train.reference import dqn_features, linear_q_features

# Tiny: a few thousand decisions against `random`, short evaluations.
DEALS = 40


def _win_rate(bot: object, seed: int = 7) -> float:
    """The bot against `random` over DEALS duplicate deals; an illegal action would raise."""
    return quick_win_rate(bot, "random", DEALS, seed, 2, {})["win_rate"]


def test_linear_q_phi_shares_slot_weights() -> None:
    feats = np.random.default_rng(0).random((3, FEATURE_SIZE)).astype(np.float32)
    phi = linear_q_features.action_features(feats)
    assert phi.shape == (3, NUM_ACTIONS, linear_q_features.NUM_WEIGHTS)
    w = np.zeros(linear_q_features.NUM_WEIGHTS)
    w[0] = 1.0  # the first slot column of every block: slot i's Q reads slot i's card
    q = phi @ w
    np.testing.assert_allclose(q[:, :10], feats[:, 0 : 10 * 35 : 35])
    assert np.all(q[:, 10:] == 0)
    masks = np.zeros((3, NUM_ACTIONS), dtype=bool)
    masks[:, [10, 11]] = True
    assert set(linear_q_features.greedy(q, masks).tolist()) <= {10, 11}


@pytest.mark.slow
def test_linear_q_learns_in_a_tiny_run(tmp_path) -> None:
    args = linear_q_features.parse_args(
        ["--total-steps", "2000", "--num-envs", "16", "--opponent", "random", "--alpha", "0.01"]
        + ["--eval-rounds", "0", "--quiet"]
    )
    bot, training = linear_q_features.train(args)
    untrained = linear_q_features.LinearQ(np.zeros_like(bot.w), bot.num_cards)
    assert _win_rate(bot) > _win_rate(untrained) + 0.2
    bot.save(tmp_path / "w.npz")
    again = linear_q_features.LinearQ.load(tmp_path / "w.npz")
    np.testing.assert_array_equal(again.w, bot.w)
    assert training["history"] and training["history"][-1]["step"] >= 2000


def test_linear_q_same_seed_same_weights() -> None:
    args = dataclasses.replace(
        linear_q_features.parse_args(["--total-steps", "300", "--eval-rounds", "0", "--quiet"]),
        num_envs=4,
    )
    a, _ = linear_q_features.train(args)
    b, _ = linear_q_features.train(args)
    np.testing.assert_array_equal(a.w, b.w)


def test_linear_q_main_writes_its_files(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    flags = ["--total-steps", "200", "--num-envs", "4", "--eval-rounds", "3"]
    assert linear_q_features.main([*flags, "--eval-opponents", "random", "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["evaluation"]["random"]["rounds"] == 3
    assert "against random: won" in capsys.readouterr().out


@pytest.mark.parametrize("bad", [["--num-players", "5"], ["--opponent", "nobody"]])
def test_bad_flags_are_refused_in_one_line(bad, capsys) -> None:
    for module in (linear_q_features, dqn_features):
        with pytest.raises(SystemExit):
            module.parse_args(bad)
        assert "error:" in capsys.readouterr().err


def test_slot_network_scores_each_slot_from_its_own_block() -> None:
    torch.manual_seed(0)
    net = dqn_features.SlotQNetwork(8)
    x = torch.rand(2, FEATURE_SIZE)
    q = net(x)
    assert q.shape == (2, NUM_ACTIONS)
    y = x.clone()
    y[:, 3 * 35 : 4 * 35] += 1.0  # slot 3's block only
    changed = (net(y) - q).abs().sum(dim=0) > 0
    assert changed.tolist() == [i == 3 for i in range(NUM_ACTIONS)]
    mask = torch.zeros(2, NUM_ACTIONS, dtype=torch.bool)
    mask[:, 12:] = True
    assert set(dqn_features.masked(q, mask).argmax(dim=1).tolist()) <= {12, 13}


def test_replay_buffer_wraps_around() -> None:
    buffer = dqn_features.ReplayBuffer(5)
    obs = np.arange(7, dtype=np.float32)[:, None].repeat(FEATURE_SIZE, axis=1)
    masks = np.ones((7, NUM_ACTIONS), dtype=bool)
    buffer.add(obs, np.arange(7), np.ones(7), obs, masks, np.zeros(7))
    assert buffer.count == 5
    assert sorted(buffer.obs[:, 0].tolist()) == [2, 3, 4, 5, 6]
    b_obs, b_act, *_ = buffer.sample(16, np.random.default_rng(0))
    assert torch.equal(b_obs[:, 0].long(), b_act)


@pytest.mark.slow
@pytest.mark.parametrize("network", ["slots", "flat"])
def test_dqn_tiny_run_plays_legally_and_slots_learn(network) -> None:
    """The slot network beats its untrained start after 3,000 decisions; the flat MLP, slower to
    learn, must at least play every evaluation decision legally (an illegal one would raise)."""
    args = dqn_features.parse_args(
        ["--total-steps", "3000", "--num-envs", "16", "--opponent", "random"]
        + ["--network", network, "--learning-starts", "500", "--eval-rounds", "0", "--quiet"]
    )
    bot, training = dqn_features.train(args)
    torch.manual_seed(1)
    untrained = dqn_features.DQNBot(dqn_features.make_network(network, args.hidden), 40)
    if network == "slots":
        assert _win_rate(bot) > _win_rate(untrained) + 0.2
    else:
        assert 0 <= _win_rate(bot) <= 1
    assert training["history"][-1]["step"] >= 3000
    assert np.isfinite(training["history"][-1]["loss"])
    env = racko_v1.env()  # the bot plays the AEC env's dicts too
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][bot.act(obs)] == 1


def test_cost_column_is_the_rack_plan_cost() -> None:
    cost = next(c for c in columns() if c.index == feature_runs.COST)
    assert cost.name == "cost"


def test_dqn_main_writes_weights_that_load_without_pickle(tmp_path) -> None:
    out = tmp_path / "run"
    flags = ["--total-steps", "300", "--num-envs", "4", "--learning-starts", "100"]
    flags += ["--batch-size", "32", "--eval-rounds", "2", "--eval-opponents", "random"]
    assert dqn_features.main([*flags, "--quiet", "--out", str(out)]) == 0
    state = torch.load(out / "dqn.pt", weights_only=True)
    net = dqn_features.make_network("slots", 64)
    net.load_state_dict(state)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["evaluation"]["random"]["rounds"] == 2
