"""The distillation trainer (train/distill.py, train/distillation/): config, labels, a smoke run
that trains, resumes, exports and whose bot file plays legal moves with numpy + onnxruntime."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.batched import BatchExpert, BatchRandom
from racko_env import racko_v1
from racko_env.observation import OBS_SIZE
from train import distill
from train.common.config import ConfigError, load_config, parse_config
from train.distillation.config import DistillConfig
from train.distillation.data import collect

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke_distill.yaml"

torch.set_num_threads(1)


def test_distill_config_names_bad_keys():
    with pytest.raises(ConfigError, match="states"):
        parse_config({"states": 0}, "x.yaml", DistillConfig)
    with pytest.raises(ConfigError, match="unknown key"):
        parse_config({"iteratons": 2}, "x.yaml", DistillConfig)
    with pytest.raises(ConfigError, match="teacher"):
        parse_config({"teacher": "search:wolds=3"}, "x.yaml", DistillConfig)
    with pytest.raises(ConfigError, match="warm_start.teacher"):
        parse_config({"warm_start": {"teacher": "search"}}, "x.yaml", DistillConfig)
    with pytest.raises(ConfigError, match="net.slot_hidden"):
        parse_config({"net": {"slot_hidden": []}}, "x.yaml", DistillConfig)
    with pytest.raises(ConfigError, match="states"):
        parse_config({"states": "100"}, "x.yaml", DistillConfig)  # strict: no coercion
    for name in ("distill_2p", "smoke_distill"):
        assert load_config(REPO / "configs" / f"{name}.yaml", DistillConfig).kind == "distill"


def test_collect_plays_the_player_and_records_the_teacher():
    """The player's moves are played, the teacher's recorded; one-move decisions are skipped."""
    obs, masks, labels, info = collect(BatchRandom(2, seed=1), BatchExpert(2), 200, 3, 2, {})
    assert obs.shape == (200, OBS_SIZE) and masks.shape == (200, 14) and labels.shape == (200,)
    assert (masks.sum(axis=1) > 1).all() and masks[np.arange(200), labels].all()
    assert (BatchExpert(2).act_batch(obs, masks) == labels).all()
    assert info["decisions"] == 200 and info["player_agreed"] < 200  # random is not expert
    again = collect(BatchRandom(2, seed=1), BatchExpert(2), 200, 3, 2, {})
    assert np.array_equal(again[0], obs) and np.array_equal(again[2], labels)


@pytest.mark.slow  # a training run; quick: the config and collection tests
def test_smoke_run_trains_exports_and_plays_legally(tmp_path):
    import agents
    from train.export import export_run

    run = tmp_path / "run"
    assert distill.main(["--config", str(SMOKE), "--out", str(run)]) == 0
    history = json.loads((run / "history.json").read_text())
    assert [row["iteration"] for row in history] == [0, 1] and history[1]["rows"] == 600
    curve = json.loads((run / "eval_history.json").read_text())
    assert [row["iteration"] for row in curve] == [1, 2] and curve[-1]["final"]
    assert (run / "data" / "iter_1.npz").is_file() and (run / "warmstart.json").is_file()
    assert "iteration 1: fitting: done" in (run / "train.log").read_text()

    manifest = json.loads((run / "bot.json").read_text())
    assert (
        manifest["training"]["command"] == f"python train/distill.py --config {SMOKE} --out {run}"
    )
    assert manifest["training"]["config"]["teacher"].startswith("search:")
    assert manifest["export_check"]["disagreements"] == 0
    again, _ = export_run(run, check=20)  # train/export.py knows kind: distill
    assert hashlib.sha256(again.read_bytes()).hexdigest() == manifest["onnx_sha256"]

    # the bot file alone (numpy + onnxruntime) plays whole rounds with legal moves only
    bot = agents.load(str(run / "bot.onnx"), num_players=2, turn_limit=50)
    env = racko_v1.env(num_players=2, turn_limit=50)
    for seed in range(2):
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            ob, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = bot.act(ob)
            assert ob["action_mask"][action]
            env.step(action)


@pytest.mark.slow
def test_a_resumed_run_ends_with_the_same_network(tmp_path):
    whole, part = tmp_path / "whole", tmp_path / "part"
    assert distill.main(["--config", str(SMOKE), "--out", str(whole)]) == 0
    assert distill.main(["--config", str(SMOKE), "--out", str(part), "--iterations", "1"]) == 0
    assert distill.main(["--config", str(SMOKE), "--out", str(part)]) == 2  # holds a run
    assert distill.main(["--resume", "--out", str(part), "--iterations", "2"]) == 0
    a = torch.load(whole / "policy.pt", weights_only=True)
    b = torch.load(part / "policy.pt", weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert json.loads((part / "history.json").read_text())[1]["rows"] == 600
