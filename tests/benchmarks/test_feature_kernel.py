"""benchmarks/feature_kernel.py times today's feature kernel beside commit da1cbd2's in one run and
writes its results file."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from racko_eval.results import load_results


def _has_baseline() -> bool:
    if shutil.which("git") is None:
        return False
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        ["git", "cat-file", "-e", "da1cbd2^{commit}"], cwd=root, capture_output=True
    )
    return done.returncode == 0


@pytest.mark.skipif(not _has_baseline(), reason="needs git and commit da1cbd2")
def test_feature_kernel_writes_its_results_file(tmp_path, benchmark_script):
    module = benchmark_script("feature_kernel")
    args = ["--seconds", "0.02", "--repeats", "1", "--rows", "300", "--batch", "64"]
    assert module.main([*args, "--results-dir", str(tmp_path)]) == 0
    data = load_results("feature_kernel", tmp_path)
    assert data["command"] == "python -m benchmarks.feature_kernel " + " ".join(args)
    rows = data["tables"][0]["rows"]
    assert [(r[0], r[1]) for r in rows[:4]] == [
        ("today", "2p k=10 N=40"),
        ("da1cbd2", "2p k=10 N=40"),
        ("today", "4p k=10 N=60"),
        ("da1cbd2", "4p k=10 N=60"),
    ]
    assert {r[1] for r in rows[4:]} == {"1p k=4 N=10", "2p k=5 N=20"}
    figures = data["figures"]
    assert figures["identical_features"] is True and figures["rows_per_s_2p_k10"] > 0
    assert figures["ratio_2p_k10"] == pytest.approx(
        figures["rows_per_s_2p_k10"] / figures["rows_per_s_2p_k10_before"], rel=0.01
    )
    for bad in (["--seconds", "0"], ["--batch", "0"], ["--clock", "sundial"]):
        with pytest.raises(SystemExit):
            module.parse_args(bad)
