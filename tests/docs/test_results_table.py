"""docs/_ext/results_table.py: a tiny Sphinx project (MyST pages) renders a results file's tables,
and a missing file fails the build under -W."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from racko_eval.results import write_results

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")

REPO = Path(__file__).resolve().parents[2]
CONF = """
extensions = ["myst_parser", "results_table"]
results_dir = "results"
master_doc = "index"
"""


def _project(tmp_path: Path, page: str) -> Path:
    src = tmp_path / "src"
    (src / "results").mkdir(parents=True)
    (src / "conf.py").write_text(CONF)
    (src / "index.md").write_text(page)
    tables = [
        {"title": "Speed", "columns": ["env", "steps/s"], "rows": [["racko_v1", 51234.4]]},
        {
            "title": "Other",
            "columns": ["bot", "win rate"],
            "rows": [["expert", "84.0%"]],
            "note": "2,000 rounds each",
        },
    ]
    write_results(
        "demo",
        command="python -m benchmarks.demo",
        tables=tables,
        figures={"speed": 51234.4},
        folder=src / "results",
        commit="0123456789abcdef0123456789abcdef01234567",
        date="2026-12-02T18:30:00+00:00",
        machine={"cores": 2, "load_average": [1.5, 1.0, 0.5], "cpu": "CPU X"},
    )
    return src


def _build(src: Path, out: Path) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(
        [str(REPO / "docs" / "_ext"), str(REPO), os.environ.get("PYTHONPATH", "")]
    )
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(src), str(out)],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=300,
    )


PAGE = """# Results

```{results-table} demo
```
"""


def test_a_page_renders_tables_and_their_provenance(tmp_path: Path) -> None:
    proc = _build(_project(tmp_path, PAGE), tmp_path / "html")
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (tmp_path / "html" / "index.html").read_text()
    assert "racko_v1" in html and "51,234" in html and "Speed" in html
    assert "expert" in html and "84.0%" in html and "2,000 rounds each" in html
    assert '<span class="pre">benchmarks.demo</span></code>' in html
    assert "0123456789" in html
    assert "2026-12-02" in html and "load average 1.50" in html


@pytest.mark.slow
def test_a_missing_results_file_fails_the_build(tmp_path: Path) -> None:
    page = "# R\n\n```{results-table} absent\n```\n"
    proc = _build(_project(tmp_path, page), tmp_path / "html")
    assert proc.returncode != 0 and "no results file" in proc.stderr, proc.stderr[-3000:]
