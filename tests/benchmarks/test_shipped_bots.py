"""benchmarks/shipped_bots.py: the pretrained bots against the baselines, with intervals."""

from __future__ import annotations

import pytest

from racko_eval.results import load_results

pytest.importorskip("onnxruntime")


@pytest.mark.slow
def test_shipped_bots_writes_rates_with_intervals(tmp_path, benchmark_script):
    module = benchmark_script("shipped_bots")
    assert module.main(["--players", "2", "--rounds", "3", "--results-dir", str(tmp_path)]) == 0
    data = load_results("shipped_bots", tmp_path)
    rows = data["tables"][0]["rows"]
    assert [(r[0], r[2], r[3]) for r in rows] == [
        ("racko_2p", "`heuristic`", 6),
        ("racko_2p", "`expert`", 6),
    ]
    f = data["figures"]
    for key in ("racko_2p_vs_heuristic", "racko_2p_vs_expert"):
        assert 0 <= f[f"{key}_low"] <= f[key] <= f[f"{key}_high"] <= 1


def test_bad_rounds_are_refused(benchmark_script, capsys):
    with pytest.raises(SystemExit):
        benchmark_script("shipped_bots").main(["--rounds", "0"])
    assert "--rounds must be at least 1" in capsys.readouterr().err
