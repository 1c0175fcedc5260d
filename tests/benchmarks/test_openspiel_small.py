"""benchmarks/openspiel_small.py: the size of small two-player games, a bounded full walk and
MCCFR, written as a results file."""

from __future__ import annotations

import pytest

from racko_eval.results import load_results

pytest.importorskip("pyspiel")


@pytest.mark.slow
def test_small_run_writes_every_table(tmp_path, benchmark_script) -> None:
    module = benchmark_script("openspiel_small")
    args = ["--budget", "2", "--mccfr-seconds", "2", "--probes", "5", "--results-dir"]
    assert module.main([*args, str(tmp_path)]) == 0
    data = load_results("openspiel_small", tmp_path)
    assert data["command"] == "python -m benchmarks.openspiel_small " + " ".join(args[:-1])
    sizes, walk, mccfr = data["tables"]
    assert len(sizes["rows"]) == len(module.VARIANTS)
    assert all(row[2] > 0 and row[4] > 0 for row in sizes["rows"])
    assert walk["rows"][0][4] > 0 and walk["rows"][0][-1].startswith("no")
    assert mccfr["rows"][0][3] > 0 and mccfr["rows"][0][4] > 0


def test_a_child_over_its_memory_is_recorded_not_fatal(benchmark_script) -> None:
    module = benchmark_script("openspiel_small")
    result = module.bounded(_allocate, (), seconds=30, memory_gb=0.5)
    assert result == {"outcome": "out of memory"}


def _allocate() -> dict:
    return {"size": len(bytearray(2**31))}
