"""Experiments that left the front door still run (experiments/README.md)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

import agents
from racko_env.gym_env import RackoGymEnv
from racko_env.observation import OBS_SIZE
from train.sb3.pretrain import collect_teacher_data

REPO = Path(__file__).resolve().parents[2]


def _dagger():
    spec = importlib.util.spec_from_file_location("dagger", REPO / "experiments" / "dagger.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_on_policy_collection_labels_the_students_states_with_the_teacher() -> None:
    import torch
    from sb3_contrib import MaskablePPO

    collect_on_policy = _dagger().collect_on_policy

    torch.manual_seed(0)
    model = MaskablePPO("MlpPolicy", RackoGymEnv(num_players=2), policy_kwargs={"net_arch": [16]})
    obs, masks, actions, agree = collect_on_policy(model, "heuristic", 2, {}, 600, seed=0, n_envs=8)
    assert obs.shape == (600, OBS_SIZE) and masks[np.arange(600), actions].all()
    bot = agents.load("heuristic", num_players=2)
    labels = [
        bot.act({"observation": o, "action_mask": m.astype(np.int8)})
        for o, m in zip(obs, masks, strict=True)
    ]
    assert np.array_equal(labels, actions)
    pred, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert agree == pytest.approx(np.mean(pred == actions))
    assert agree < 0.9  # an untrained student disagrees often: the states are its own


def test_dagger_run_writes_an_exportable_run_folder(tmp_path: Path) -> None:
    cfg = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    cfg["pretrain"] = {"teacher": "heuristic", "decisions": 2000, "epochs": 3, "batch_size": 256}
    cfg["final_eval"] = {"rounds": 10, "opponents": ["heuristic"]}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    run = tmp_path / "run"
    dagger = _dagger()
    assert (
        dagger.main(
            [
                "--config",
                str(tmp_path / "c.yaml"),
                "--out",
                str(run),
                "--iterations",
                "2",
                "--iter-decisions",
                "500",
                "--iter-epochs",
                "2",
            ]
        )
        == 0
    )
    log = json.loads((run / "dagger.json").read_text())
    assert [s["kind"] for s in log["steps"]] == ["clone", "dagger", "dagger"]
    assert all(0 <= s["on_policy_agreement"] <= 1 for s in log["steps"][1:])
    assert json.loads((run / "final_eval.json").read_text())["heuristic"]["rounds"] == 10
    manifest = json.loads((run / "bot.json").read_text())
    assert manifest["export_check"]["disagreements"] == 0
    # the manifest says how the bot was made: cloning + DAgger, not PPO
    assert "DAgger" in manifest["training"]["algorithm"]
    assert [s["kind"] for s in manifest["training"]["dagger"]["steps"]] == [
        "clone",
        "dagger",
        "dagger",
    ]
    bot = agents.load(str(run / "bot.onnx"), num_players=2)
    obs, masks, actions = collect_teacher_data("heuristic", 2, {}, 50, seed=5)
    for o, m in zip(obs, masks, strict=True):
        assert m[bot.act({"observation": o, "action_mask": m.astype(np.int8)})]
    assert (
        dagger.main(
            ["--config", str(REPO / "configs" / "smoke.yaml"), "--out", str(tmp_path / "x")]
        )
        == 2
    )


def test_experiment_configs_name_the_experiment_commands() -> None:
    for name in ("2p_dagger", "2p_finetune"):
        text = (REPO / "experiments" / "configs" / f"{name}.yaml").read_text()
        assert "python -m experiments.dagger --config experiments/configs/2p_dagger.yaml" in text
    readme = (REPO / "experiments" / "README.md").read_text()
    for number in ("54.1%", "25.3%", "54.7%", "25.1%"):
        assert number in readme
