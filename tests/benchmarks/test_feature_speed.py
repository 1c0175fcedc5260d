"""benchmarks/feature_speed.py runs and reports both implementations at every batch size."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")


def test_feature_speed_reports_kernel_and_torch(tmp_path, benchmark_script):
    module = benchmark_script("feature_speed")
    out = tmp_path / "speed.json"
    result = module.main(
        ["--seconds", "0.01", "--repeats", "1", "--batches", "16", "64", "--json", str(out)]
    )
    assert [r["batch"] for r in result["rows"]] == [16, 64]
    assert all(r["kernel_obs_per_s"] > 0 and r["torch_obs_per_s"] > 0 for r in result["rows"])
    assert json.loads(out.read_text()) == result
