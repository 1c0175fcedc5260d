"""benchmarks/test_loop.py: it reads pytest's own counts and writes a results file."""

from __future__ import annotations

import json

from benchmarks import test_loop


def test_a_run_reports_pytests_counts_and_its_times(tmp_path) -> None:
    (tmp_path / "test_tiny.py").write_text(
        "import pytest\n\n"
        "def test_a():\n    pass\n\n"
        "def test_b():\n    assert False\n\n"
        "@pytest.mark.skip(reason='no')\ndef test_c():\n    pass\n\n"
        "@pytest.mark.slow\ndef test_d():\n    pass\n"
    )
    got = test_loop.run_suite("quick", 0, (str(tmp_path),))
    assert (got["passed"], got["failed"], got["skipped"]) == (1, 1, 1)  # test_d: slow, left out
    assert got["exit"] == 1 and got["wall"] >= 0 and got["cpu"] > 0
    assert len(got["failures"]) == 1 and got["failures"][0].endswith("test_tiny.py::test_b")
    full = test_loop.run_suite("full", 0, (str(tmp_path),))
    assert (full["passed"], full["failed"], full["skipped"]) == (2, 1, 1)


def test_the_results_file_holds_each_run_against_its_target(tmp_path, monkeypatch) -> None:
    def fake(name, workers, paths=()):
        wall = {"quick": 80.0, "full": 900.0}[name]
        return {"name": name, "wall": wall, "cpu": 2 * wall, "load": 0.5, "passed": 3,
                "failed": 0, "skipped": 1, "exit": 0, "failures": []}  # fmt: skip

    monkeypatch.setattr(test_loop, "run_suite", fake)
    assert test_loop.main(["--results-dir", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "test_loop.json").read_text())
    rows = data["tables"][0]["rows"]
    assert [r[7] for r in rows] == [True, False]  # 80 s within 90 s; 900 s past 12 minutes
    assert data["figures"]["quick_wall_seconds"] == 80.0
    assert (
        data["figures"]["full_wall_seconds"] == 900.0 and data["figures"]["full_failures"] is None
    )
    monkeypatch.setattr(test_loop, "run_suite", lambda n, w, p=(): {**fake(n, w), "wall": 70.0})
    assert test_loop.main(["--only", "quick", "--results-dir", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "test_loop.json").read_text())
    assert [r[4] for r in data["tables"][0]["rows"]] == [900.0, 70.0]  # the full row is kept
