"""benchmarks/env_speed.py measures the AEC env, PettingZoo's games and the batched engine in one
run and writes its results file."""

from __future__ import annotations

import pytest

from racko_eval.results import load_results

pytest.importorskip("pygame")


def test_env_speed_writes_its_results_file(tmp_path, benchmark_script):
    module = benchmark_script("env_speed")
    args = ["--seconds", "0.05", "--repeats", "1", "--players", "2", "--results-dir", str(tmp_path)]
    assert module.main(args) == 0
    data = load_results("env_speed", tmp_path)
    assert (
        data["command"] == "python -m benchmarks.env_speed --seconds 0.05 --repeats 1 --players 2"
    )
    names = [row[0] for row in data["tables"][0]["rows"]]
    assert names == ["connect_four_v3", "tictactoe_v3", "racko_v1 2p", "batched engine 2p"]
    figures = data["figures"]
    assert figures["racko_v1_steps_per_s"] > 0 and figures["batched_steps_per_s"] > 0
    assert figures["ratio_to_connect_four"] == pytest.approx(
        figures["racko_v1_steps_per_s"] / figures["connect_four_steps_per_s"], rel=0.01
    )


def test_env_speed_measures_cpu_time_and_refuses_bad_flags(tmp_path, benchmark_script):
    module = benchmark_script("env_speed")
    args = ["--seconds", "0.05", "--repeats", "1", "--players", "3", "--clock", "cpu"]
    assert module.main([*args, "--results-dir", str(tmp_path)]) == 0
    names = [row[0] for row in load_results("env_speed", tmp_path)["tables"][0]["rows"]]
    assert "racko_v1 3p" in names
    for bad in (["--players", "5"], ["--clock", "sundial"], ["--seconds", "0"]):
        with pytest.raises(SystemExit):
            module.parse_args(bad)
