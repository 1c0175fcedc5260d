"""benchmarks/time_to_expert.py runs a recipe and reads its evaluations and its time split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from racko_eval.results import load_results

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]


def test_first_reaching_skips_the_final_row(benchmark_script):
    history = [
        {"timesteps": 1, "minutes": 0.1, "expert": 0.30},
        {"timesteps": 2, "minutes": 0.2, "expert": 0.46},
        {"timesteps": 3, "minutes": 0.3, "expert": 0.50, "final": True},
    ]
    m = benchmark_script("time_to_expert")
    assert m.first_reaching(history, "expert", 0.45)["timesteps"] == 2
    assert m.first_reaching(history, "expert", 0.48) is None


def test_the_curve_is_a_row_per_evaluation(benchmark_script):
    history = [
        {"timesteps": 0, "minutes": 0.1, "rounds": 1000, "heuristic": 0.016},
        {"timesteps": 98304, "minutes": 0.7, "rounds": 2000, "heuristic": 0.502, "final": True},
    ]
    history[0]["heuristic_ci95"], history[1]["heuristic_ci95"] = [0.011, 0.022], [0.481, 0.524]
    table = benchmark_script("time_to_expert").curve_table("runs/2p", history)
    assert table["title"] == "Learning curve of runs/2p"
    assert table["columns"] == ["env steps", "minutes", "rounds", "vs `heuristic`"]
    assert table["rows"][1] == [98304, 0.7, 2000, "50.2% (48.1-52.4)"]


@pytest.mark.slow
def test_time_to_expert_on_the_smoke_recipe(tmp_path, benchmark_script):
    out = tmp_path / "run"
    result = benchmark_script("time_to_expert").main(
        [
            "--config",
            str(REPO / "configs" / "smoke_structured.yaml"),
            "--out",
            str(out),
            "--results-dir",
            str(tmp_path),
        ]
    )
    assert result["env_steps"] >= 1024 and set(result["reached_vs_expert"]) == {"40%", "45%", "48%"}
    seconds = result["wall_seconds"]
    assert seconds["rollout"] > 0 and seconds["update"] > 0 and seconds["evaluation"] > 0
    # a fast machine rounds the smoke run's feature time to 0.0: order, not speed, is checked
    assert 0 <= seconds["features"] <= seconds["rollout"]
    assert seconds["snapshots"] <= seconds["opponents"] <= seconds["rollout"]
    assert (out / "bot.onnx").is_file()
    # the results files: the targets and the time split, and the run's learning curve
    data = load_results("time_to_expert", tmp_path)
    assert data["command"].startswith("python -m benchmarks.time_to_expert --config")
    assert [row[0] for row in data["tables"][0]["rows"]] == [
        "40% vs `expert`",
        "45% vs `expert`",
        "48% vs `expert`",
    ]
    assert data["figures"]["run_minutes"] == result["wall_minutes"]
    curve = load_results("learning_curves", tmp_path)["tables"][0]
    history = json.loads((out / "eval_history.json").read_text())
    assert len(curve["rows"]) == len(history) and curve["columns"][0] == "env steps"
