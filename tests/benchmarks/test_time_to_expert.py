"""benchmarks/time_to_expert.py runs a recipe and reads its evaluations and its time split."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location(
        "time_to_expert", REPO / "benchmarks" / "time_to_expert.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_first_reaching_skips_the_final_row():
    history = [
        {"timesteps": 1, "minutes": 0.1, "expert": 0.30},
        {"timesteps": 2, "minutes": 0.2, "expert": 0.46},
        {"timesteps": 3, "minutes": 0.3, "expert": 0.50, "final": True},
    ]
    m = _module()
    assert m.first_reaching(history, "expert", 0.45)["timesteps"] == 2
    assert m.first_reaching(history, "expert", 0.48) is None


@pytest.mark.slow
def test_time_to_expert_on_the_smoke_recipe(tmp_path):
    out = tmp_path / "run"
    result = _module().main(
        [
            "--config",
            str(REPO / "configs" / "smoke_structured.yaml"),
            "--out",
            str(out),
            "--json",
            str(tmp_path / "tte.json"),
        ]
    )
    assert result["env_steps"] >= 1024 and set(result["reached_vs_expert"]) == {"40%", "45%", "48%"}
    seconds = result["seconds"]
    assert seconds["rollout"] > 0 and seconds["update"] > 0 and seconds["evaluation"] > 0
    assert 0 < seconds["features"] <= seconds["rollout"]
    assert seconds["snapshots"] <= seconds["opponents"] <= seconds["rollout"]
    assert json.loads((tmp_path / "tte.json").read_text()) == result
    assert (out / "bot.onnx").is_file()
