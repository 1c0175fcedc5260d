"""The main trainer with the structured policy: warm start, PPO, checkpoint, resume, export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agents
from train.common.runs import FINAL_MODEL
from train.sb3 import run as ppo
from train.sb3.checkpoint import load_weights

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke_structured.yaml"


@pytest.mark.slow
def test_structured_smoke_trains_resumes_exports_and_plays(
    tmp_path: Path, assert_plays_legally, eval_rows
):
    full, split = tmp_path / "full", tmp_path / "split"
    assert ppo.main(["--config", str(SMOKE), "--out", str(full), "--no-progress"]) == 0

    warm = json.loads((full / "warmstart.json").read_text())
    assert warm["teacher"] == "expert" and warm["decisions"] == 2000
    assert warm["critic"]["value_loss_after"] < warm["critic"]["value_loss_before"]
    history = json.loads((full / "eval_history.json").read_text())
    assert history[0]["timesteps"] == 0  # the warm start's strength, before PPO
    assert {"heuristic", "expert", "expert_ci95"} <= set(history[0])
    final = json.loads((full / "final_eval.json").read_text())
    assert set(final) == {"heuristic", "expert"} and final["expert"]["rounds"] == 20
    log = (full / "train.log").read_text()
    for line in ("teacher decisions", "cloned expert", "critic warm-up", "PPO: done", "exported"):
        assert line in log

    manifest = json.loads((full / "bot.json").read_text())
    assert manifest["training"]["policy"].startswith("structured")
    assert manifest["export_check"] == {"observations": 300, "disagreements": 0}
    bot = agents.load(str(full / "bot.onnx"), num_players=2)
    assert_plays_legally(bot, 2, ["expert"], steps=300, seed=0)

    # stopped half way and resumed: the same weights and history as the straight run
    ppo.main(["--config", str(SMOKE), "--out", str(split), "--total-steps", "512", "--no-progress"])
    ppo.main(["--resume", "--out", str(split), "--total-steps", "1024", "--no-progress"])
    a, b = (load_weights(run / FINAL_MODEL, "final model")["policy"] for run in (full, split))
    assert a.keys() == b.keys() and all(bool((a[k] == b[k]).all()) for k in a)

    assert eval_rows(full) == eval_rows(split)
