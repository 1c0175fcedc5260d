"""benchmarks/features_learners.py: both learners trained briefly, measured with intervals."""

from __future__ import annotations

import pytest

from racko_eval.results import load_results


def test_features_learners_writes_rates_with_intervals(tmp_path, benchmark_script):
    module = benchmark_script("features_learners")
    flags = ["--linear-steps", "300", "--dqn-steps", "300", "--dqn-networks", "slots", "flat"]
    assert module.main([*flags, "--rounds", "3", "--results-dir", str(tmp_path)]) == 0
    data = load_results("features_learners", tmp_path)
    assert "--results-dir" not in data["command"]
    rows = data["tables"][0]["rows"]
    assert [r[0] for r in rows] == ["linear Q-learning", "DQN, slot network", "DQN, flat MLP"]
    assert [r[1] for r in rows] == [300, 300, 300]
    f = data["figures"]
    for key in ("linear_q", "dqn_slots", "dqn_flat"):
        for opp in ("heuristic", "expert"):
            k = f"{key}_vs_{opp}"
            assert 0 <= f[f"{k}_low"] <= f[k] <= f[f"{k}_high"] <= 1


def test_bad_rounds_are_refused(benchmark_script, capsys):
    with pytest.raises(SystemExit):
        benchmark_script("features_learners").main(["--rounds", "0"])
    assert "--rounds must be at least 1" in capsys.readouterr().err
