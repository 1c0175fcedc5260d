"""benchmarks/learning_curves.py turns runs' evaluation records into one results file."""

from __future__ import annotations

import json

import pytest

from racko_eval.results import load_results


def test_each_run_is_a_table_with_its_rows(tmp_path, benchmark_script):
    run = tmp_path / "runs" / "2p"
    run.mkdir(parents=True)
    history = [
        {
            "timesteps": 0,
            "minutes": 0.1,
            "rounds": 1000,
            "heuristic": 0.016,
            "heuristic_ci95": [0.011, 0.022],
            "expert": 0.004,
            "expert_ci95": [0.002, 0.008],
        },
        {
            "timesteps": 98304,
            "minutes": 0.7,
            "rounds": 2000,
            "heuristic": 0.502,
            "heuristic_ci95": [0.481, 0.524],
            "expert": 0.179,
            "expert_ci95": [0.163, 0.197],
            "final": True,
        },
    ]
    (run / "eval_history.json").write_text(json.dumps(history))
    module = benchmark_script("learning_curves")
    assert module.main([str(run), "--results-dir", str(tmp_path)]) == 0
    table = load_results("learning_curves", tmp_path)["tables"][0]
    assert table["columns"] == ["env steps", "minutes", "rounds", "vs `heuristic`", "vs `expert`"]
    assert table["rows"][1] == [98304, 0.7, 2000, "50.2% (48.1-52.4)", "17.9% (16.3-19.7)"]


def test_a_folder_without_a_record_is_named(tmp_path, benchmark_script):
    with pytest.raises(SystemExit, match="eval_history.json not found"):
        benchmark_script("learning_curves").main([str(tmp_path), "--results-dir", str(tmp_path)])
