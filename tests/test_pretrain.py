"""Batched teacher-data collection for the behaviour-cloning warm start (train/pretrain.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

import agents
from racko_env.gym_env import RackoGymEnv
from racko_env.observation import OPP_PRESENT
from train import pretrain
from train.pretrain import collect_teacher_data

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("teacher", ["heuristic", "expert"])
def test_batched_collection_records_the_teachers_own_decisions(teacher: str) -> None:
    obs, masks, actions = collect_teacher_data(
        teacher, 2, {}, 3000, seed=0, batched=True, n_envs=64
    )
    assert obs.shape == (3000, 177) and masks.shape == (3000, 14) and actions.shape == (3000,)
    assert masks[np.arange(3000), actions].all()
    assert len(np.unique(obs, axis=0)) > 2500  # many games, not one state repeated
    bot = agents.load(teacher, num_players=2)
    for i in np.random.default_rng(0).choice(3000, 200, replace=False):
        observation = {"observation": obs[i], "action_mask": masks[i].astype(np.int8)}
        assert bot.act(observation) == actions[i]


def test_batched_collection_is_deterministic_and_seeded() -> None:
    a = collect_teacher_data("expert", 2, {}, 1000, seed=3, batched=True, n_envs=32)
    b = collect_teacher_data("expert", 2, {}, 1000, seed=3, batched=True, n_envs=32)
    c = collect_teacher_data("expert", 2, {}, 1000, seed=4, batched=True, n_envs=32)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0], c[0])


def test_batched_collection_plays_the_requested_table() -> None:
    obs, masks, actions = collect_teacher_data(
        "expert", 3, {"bonus": True}, 500, seed=0, batched=True, n_envs=16
    )
    assert obs.shape == (500, 177) and masks[np.arange(500), actions].all()
    assert np.allclose(obs[:, OPP_PRESENT].sum(axis=1), 2)  # two opponents at every table


def test_batched_collection_refuses_a_teacher_without_a_vectorized_twin() -> None:
    with pytest.raises(ValueError, match="batched collection needs one of"):
        collect_teacher_data("agents.heuristic:HeuristicBot", 2, {}, 100, seed=0, batched=True)
    with pytest.raises(ValueError, match="decisions must be at least 1"):
        collect_teacher_data("expert", 2, {}, 0, seed=0, batched=True)


def test_on_policy_collection_labels_the_students_states_with_the_teacher() -> None:
    import torch
    from sb3_contrib import MaskablePPO

    from train.pretrain import collect_on_policy

    torch.manual_seed(0)
    model = MaskablePPO("MlpPolicy", RackoGymEnv(num_players=2), policy_kwargs={"net_arch": [16]})
    obs, masks, actions, agree = collect_on_policy(model, "heuristic", 2, {}, 600, seed=0, n_envs=8)
    assert obs.shape == (600, 177) and masks[np.arange(600), actions].all()
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
    assert (
        pretrain.main(
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
    with pytest.raises(ValueError, match="pretrain.decisions must be positive"):
        pretrain.main(
            ["--config", str(REPO / "configs" / "smoke.yaml"), "--out", str(tmp_path / "x")]
        )
