"""The value-trained bots: the one-ply policy, the planner feature, training, resume and export."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from agents.batched import BatchExpert
from racko_env.rules import deck_size
from train.common.afterstate import (
    FEATURES,
    card_tables,
)
from train.common.config import ConfigError, ValueConfig, load_config, parse_config
from train.common.onnx_export import sample_observations
from train.common.snapshot import MASKED_LOGIT
from train.value.data import collect
from train.value.fit import fit
from train.value.network import OnePlyPolicy, RackValueNet, TorchOnePly

REPO = Path(__file__).resolve().parents[2]
PLAN = 3 * 10 + 2  # feature index of log1p(plan cost)

torch.set_num_threads(1)


class PlanValue(nn.Module):
    """A "value net" that reads back the expert planner's own cost from the features."""

    hidden = ()
    plans = ((2.0, 1.1),)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        return torch.expm1(feats[..., PLAN])


def expert_games(num_players: int, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks met by the learner seat when expert plays expert."""
    from train.sb3.vec_env import RackoVecEnv

    env = RackoVecEnv(32, num_players, opponents=["expert"], seed=seed)
    expert = BatchExpert(num_players)
    obs, seen, masks = env.reset(), [], []
    while len(seen) * 32 < count:
        m = env.action_masks()
        seen.append(obs.copy())
        masks.append(m)
        obs, *_ = env.step(expert.act_batch(obs, m))
    return np.concatenate(seen)[:count], np.concatenate(masks)[:count]


def test_one_ply_over_the_planner_cost_is_the_expert():
    """The policy structure adds nothing of its own: fed the expert's cost, it plays the expert
    (up to exact ties, which float32 sums may order either way)."""
    obs, masks = expert_games(2, 1500, seed=11)
    policy = OnePlyPolicy(PlanValue(), 40)
    with torch.no_grad():
        turns = policy.turns(torch.as_tensor(obs)).numpy()
        ours = policy(torch.as_tensor(obs), torch.as_tensor(masks))[0].numpy()
    theirs = BatchExpert(2).act_batch(obs, masks)
    phases = obs[:, 44:47].argmax(1)
    assert set(phases.tolist()) == {0, 1, 2}
    differ = np.flatnonzero(ours != theirs)
    assert len(differ) <= 3, differ
    rows = np.arange(len(obs))
    gap = np.abs(turns[rows, ours] - turns[rows, theirs])[differ]
    assert np.all(gap <= 1e-4 * np.abs(turns[rows, theirs][differ]) + 2e-3), gap


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_one_ply_actions_are_legal_and_batched_twin_agrees(num_players):
    torch.manual_seed(num_players)
    n = deck_size(num_players)
    policy = OnePlyPolicy(RackValueNet((8,)), n)
    obs, masks = sample_observations(num_players, {}, 200, seed=num_players)
    with torch.no_grad():
        action, logits = policy(torch.as_tensor(obs), torch.as_tensor(masks))
    action = action.numpy()
    assert masks[np.arange(len(obs)), action].all()
    assert np.all(logits.numpy()[~masks] == MASKED_LOGIT)
    np.testing.assert_array_equal(TorchOnePly(policy).act_batch(obs, masks), action)


def test_ascending_racks_are_worth_zero_turns():
    policy = OnePlyPolicy(RackValueNet((4,)), 40)
    obs, masks = sample_observations(2, {}, 20)
    o = torch.as_tensor(obs)
    cum_a, cum_u = card_tables(o, 40)
    racks = torch.arange(1, 11)[None, None, :].expand(len(obs), 1, 10) * 3
    values = policy._values(racks.contiguous(), cum_a, cum_u)
    assert torch.all(values == 0)


def test_collect_records_turns_left_until_the_learners_rack_o():
    x, t, info = collect(BatchExpert(2), 2000, seed=3, num_players=2, rules={}, n_envs=16)
    assert x.shape == (len(t), FEATURES) and len(t) >= 2000
    assert info["rounds"] > 0 and info["mean_turns"] > 1
    # every recorded round counts down to its last turn: k, k-1, ..., 1
    ends = np.flatnonzero(t == 1)
    starts = np.concatenate([[0], ends[:-1] + 1])
    for s, e in zip(starts, ends, strict=True):
        np.testing.assert_array_equal(t[s : e + 1], np.arange(e - s + 1, 0, -1))
    assert np.all((x[:, :10] > 0) & (x[:, :10] <= 1))  # the own rack, card / N
    assert not np.any(np.all(np.diff(x[:, :10], axis=1) > 0, axis=1))  # never a finished rack


def test_fit_lowers_the_loss_and_learns_the_mean():
    rng = np.random.default_rng(0)
    x = rng.random((4000, FEATURES), dtype=np.float32)
    t = (3 + 5 * x[:, 0]).astype(np.float32)
    torch.manual_seed(0)
    net = RackValueNet((32,))
    losses = fit(net, x, t, epochs=60, batch_size=256, lr=1e-2, seed=0)
    assert losses[-1] < losses[0] / 10
    with torch.no_grad():
        pred = net(torch.as_tensor(x)).numpy()
    assert np.abs(pred - t).mean() < 0.3


def test_value_config_names_bad_keys(tmp_path):
    with pytest.raises(ConfigError, match="states"):
        parse_config({"states": 0}, "x.yaml", ValueConfig)
    with pytest.raises(ConfigError, match="unknown key"):
        parse_config({"iteratons": 2}, "x.yaml", ValueConfig)
    with pytest.raises(ConfigError, match="net.plans"):
        parse_config({"net": {"plans": [[0, 1]]}}, "x.yaml", ValueConfig)
    with pytest.raises(ConfigError, match="teacher"):
        parse_config({"teacher": "oracle"}, "x.yaml", ValueConfig)
    with pytest.raises(ConfigError, match="rules"):
        parse_config({"num_players": 3, "rules": {"min_run": 5}}, "x.yaml", ValueConfig)
    for name in ("2p_value", "3p_value", "4p_value", "smoke_value"):
        cfg = load_config(REPO / "configs" / f"{name}.yaml", ValueConfig)
        assert cfg.iterations >= 1


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "train" / "value_iteration.py"), *args],
        cwd=cwd,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
        },  # the checkout under test, not another installed copy
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_smoke_run_resumes_to_the_same_network_and_exports_a_playable_bot(tmp_path):
    import agents

    config = str(REPO / "configs" / "smoke_value.yaml")
    whole = _run("--config", config, "--out", str(tmp_path / "whole"), cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    # progress of every stage, in the terminal output and in train.log alike
    log = (tmp_path / "whole" / "train.log").read_text()
    for stage in (
        "iteration 0: collecting: started (3,000 states)",
        "iteration 0: fitting: 1/2 epochs",
        "iteration 1: fitting: done, 2 epochs",
        "iteration 1: evaluating: done",
        "iteration 1: vs heuristic won",
        "exported",
    ):
        assert stage in log and stage in whole.stdout, stage
    assert "95% CI" in log and "ETA" in log
    part = _run(
        "--config", config, "--out", str(tmp_path / "part"), "--iterations", "1", cwd=tmp_path
    )
    assert part.returncode == 0, part.stderr
    again = _run("--config", config, "--out", str(tmp_path / "part"), cwd=tmp_path)
    assert again.returncode != 0 and "--resume" in again.stderr
    # a crash after the history row of iteration 1 was written but before its network was
    history_path = tmp_path / "part" / "history.json"
    rows = json.loads(history_path.read_text())
    history_path.write_text(json.dumps([*rows, {"iteration": 1, "orphan": True}]))
    resumed = _run("--resume", "--out", str(tmp_path / "part"), "--iterations", "2", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    a = torch.load(tmp_path / "whole" / "value_net.pt", weights_only=True)
    b = torch.load(tmp_path / "part" / "value_net.pt", weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    history = json.loads((tmp_path / "part" / "history.json").read_text())
    assert [row["iteration"] for row in history] == [0, 1]
    assert not any("orphan" in row for row in history)
    # the evaluation record every trainer writes (train/common/eval_record.py)
    curve = json.loads((tmp_path / "part" / "eval_history.json").read_text())
    assert [row["iteration"] for row in curve] == [1, 2] and curve[-1]["final"]
    assert {"minutes", "rounds", "heuristic", "heuristic_ci95"} <= set(curve[0])
    final = json.loads((tmp_path / "part" / "final_eval.json").read_text())
    assert (
        final["heuristic"]["win_rate"]
        == curve[-1]["heuristic"]
        == history[-1]["win_rate"]["heuristic"]
    )

    manifest = json.loads((tmp_path / "whole" / "bot.json").read_text())
    # train/export.py re-exports a value run to the same bytes
    from train.export import export_run

    again_path, _ = export_run(tmp_path / "whole", check=20)
    assert hashlib.sha256(again_path.read_bytes()).hexdigest() == manifest["onnx_sha256"]
    assert manifest["export_check"]["disagreements"] == 0
    assert "policy iteration" in manifest["training"]["algorithm"]
    bot = agents.load(str(tmp_path / "whole" / "bot.onnx"), num_players=2, turn_limit=50)
    obs, masks = sample_observations(2, {"turn_limit": 50}, 60, seed=5)
    for o, m in zip(obs, masks, strict=True):
        assert m[bot.act({"observation": o, "action_mask": m})]
    with pytest.raises(ValueError, match="player"):
        agents.load(str(tmp_path / "whole" / "bot.onnx"), num_players=3, turn_limit=50)


def _main(*args: str, capsys) -> subprocess.CompletedProcess:
    """The front door's ``main`` in this process (test_config starts the script's process for a
    bad config): its exit status and what it printed."""
    from train import value_iteration

    code = value_iteration.main(list(args))
    printed = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, printed.out, printed.err)


def test_resume_without_a_run_is_an_error(tmp_path, capsys):
    out = _main("--resume", "--out", str(tmp_path / "nothing"), capsys=capsys)
    assert out.returncode != 0 and "config.yaml" in out.stderr


def test_value_resume_refuses_a_different_config(tmp_path, capsys):
    config = REPO / "configs" / "smoke_value.yaml"
    run = tmp_path / "run"
    (run / "iterations").mkdir(parents=True)
    (run / "config.yaml").write_text(config.read_text())
    (run / "iterations" / "iter_0.pt").write_bytes(b"")
    other = tmp_path / "other.yaml"
    other.write_text(config.read_text().replace("states: 3000", "states: 4000"))
    out = _main("--resume", "--config", str(other), "--out", str(run), capsys=capsys)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "differs from the run's" in out.stderr and "states" in out.stderr
