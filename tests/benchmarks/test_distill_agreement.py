"""benchmarks/distill_agreement.py: it reads a distillation run and counts what it should."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_it_measures_a_smoke_run(tmp_path, benchmark_script):
    from train import distill

    run = tmp_path / "run"
    args = ["--config", str(ROOT / "configs" / "smoke_distill.yaml"), "--out", str(run)]
    assert distill.main([*args, "--iterations", "1"]) == 0
    out = benchmark_script("distill_agreement").measure(run)
    assert out["rows"] == 300 and out["held_out"]["rows"] == 30 and out["fitted"]["rows"] == 270
    for part in ("held_out", "fitted"):
        assert 0.0 <= out[part]["net_agrees_with_search"] <= 1.0
        assert out[part]["search_not_expert"] <= out[part]["rows"]
    assert set(out["search_not_expert_by_phase"]) == {"draw", "keep", "place"}
