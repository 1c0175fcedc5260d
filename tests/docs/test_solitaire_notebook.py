"""docs/solitaire.py (week 1 of the course) runs top to bottom with its quick settings, and so
does its notebook, docs/solitaire.ipynb (generated from it with jupytext, checked in sync)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "docs" / "solitaire.py"
NOTEBOOK = REPO / "docs" / "solitaire.ipynb"
PRINTED = (
    "quick=True, rack_size=3, deck_size=8",
    "tabular observations: 75600",
    "optimal expected turns from the deal: 1.5373",
    "trained for 99,840 steps",
    "optimum 1.5373: gap",
    "random play, for scale:",
    "main job's bot:",
)


def _quick_env(out: Path) -> dict[str, str]:
    return {
        "RACKO_SOLITAIRE_QUICK": "1",
        "RACKO_SOLITAIRE_OUT": str(out),
        "MPLBACKEND": "Agg",
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }


@pytest.mark.slow
def test_the_script_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "solitaire"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT)],
        cwd=tmp_path,
        env={**os.environ, **_quick_env(out)},
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for line in PRINTED:
        assert line in proc.stdout, f"{line!r} missing from the output"
    assert (out / "q_learning" / "curve.png").is_file()
    assert (out / "q_learning_curve.png").is_file()
    assert (out / "main_job" / "bot.onnx").is_file()


def test_the_notebook_is_the_script() -> None:
    """Regenerate with ``jupytext --sync docs/solitaire.py`` after editing the script."""
    import jupytext

    script, notebook = jupytext.read(SCRIPT), jupytext.read(NOTEBOOK)
    cells = [(c.cell_type, c.source) for c in notebook.cells]
    assert cells == [(c.cell_type, c.source) for c in script.cells], "docs/solitaire.ipynb is stale"
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")


@pytest.mark.slow
def test_the_notebook_runs_top_to_bottom(tmp_path: Path, monkeypatch) -> None:
    import nbformat
    from nbclient import NotebookClient

    for key, value in _quick_env(tmp_path / "solitaire").items():
        monkeypatch.setenv(key, value)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()
    text = "".join(
        o.get("text", "")
        for c in notebook.cells
        for o in c.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stdout"
    )
    for line in PRINTED:
        assert line in text, f"{line!r} missing from the notebook's output"
