"""benchmarks/tutorial_bot.py turns the head-to-head record of the tutorial's tournament into its
results file (the tutorial itself runs in tests/docs/test_tutorial.py)."""

from __future__ import annotations

import json

import pytest

from racko_eval.results import check_results, load_results


def test_the_head_to_head_record_becomes_a_table_and_figures(benchmark_script):
    module = benchmark_script("tutorial_bot")
    record = {
        "random": {"win_rate": 1.0, "ci95": [0.9936, 1.0], "games": 600},
        "heuristic": {"win_rate": 0.5567, "ci95": [0.5167, 0.5959], "games": 600},
    }
    tables, figures = module.results_of(record, seconds=150.0, cpu_seconds=90.0)
    assert tables[0]["rows"] == [
        ["random", 600, "100.0% (99.4-100.0)"],
        ["heuristic", 600, "55.7% (51.7-59.6)"],
    ]
    assert figures["vs_heuristic"] == 0.5567 and figures["vs_heuristic_low"] == 0.5167
    assert figures["minutes"] == 2.5 and figures["cpu_minutes"] == 1.5
    assert "2.5 minutes wall, 1.5 minutes of CPU" in tables[0]["note"]


def test_a_missing_record_fails_before_writing(tmp_path, benchmark_script, monkeypatch):
    module = benchmark_script("tutorial_bot")
    monkeypatch.setattr(module, "run_tutorial", lambda out: (1.0, 1.0))
    with pytest.raises(FileNotFoundError):
        module.main(["--out", str(tmp_path), "--results-dir", str(tmp_path)])
    assert not (tmp_path / "tutorial.json").exists()


def test_main_writes_the_results_file(tmp_path, benchmark_script, monkeypatch):
    module = benchmark_script("tutorial_bot")
    record = {"random": {"win_rate": 0.9, "ci95": [0.8, 0.95], "games": 10}}
    (tmp_path / "tournament.json").write_text(json.dumps({"report": {}, "head_to_head": record}))
    monkeypatch.setattr(module, "run_tutorial", lambda out: (60.0, 30.0))
    assert module.main(["--out", str(tmp_path), "--results-dir", str(tmp_path)]) == 0
    data = check_results(load_results("tutorial", tmp_path))
    assert data["command"] == "python -m benchmarks.tutorial_bot"  # not where it wrote
    assert data["figures"]["vs_random"] == 0.9
