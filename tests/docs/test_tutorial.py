"""docs/tutorial.py runs end to end, top to bottom, with its quick settings (as CI runs it), and
so does its notebook, docs/tutorial.ipynb (generated from it with jupytext, checked in sync)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial.py"
NOTEBOOK = REPO / "docs" / "tutorial.ipynb"
# the lines every run prints, as a script or as a notebook (the quick settings)
PRINTED = (
    "quick=True",
    "ascending prefix: 4 cards -> 20",
    "Rack-O? True -> 75 points",
    "decision: DRAW | legal actions: (10, 11)",
    "PPO: done, 1,024 env steps",
    "trained for 1024 env steps, structured policy",
    "| bot | rounds | wins | win rate (95% CI)",
    "vs    random: ",
    "vs heuristic: ",
    "$ racko play --watch --bots",
    "Final totals: player_0 (bot.onnx)",
)


def _quick_env(out: Path) -> dict[str, str]:
    return {
        "RACKO_TUTORIAL_QUICK": "1",
        "RACKO_TUTORIAL_OUT": str(out),
        # The repository itself, not whatever copy is installed, and its folder for subprocesses.
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }


def _check_bot(out: Path) -> None:
    """The main job's run folder, its bot file, and the tournament's head-to-head record."""
    manifest = json.loads((out / "run" / "bot.json").read_text())
    assert manifest["num_players"] == 2 and manifest["training"]["policy"] == "structured"
    assert manifest["training"]["timesteps"] == 1024
    assert manifest["export_check"]["disagreements"] == 0
    assert (out / "run" / "bot.onnx").stat().st_size > 0
    head_to_head = json.loads((out / "tournament.json").read_text())["head_to_head"]
    assert set(head_to_head) == {"random", "heuristic", "expert"}
    assert all(h["games"] == 10 for h in head_to_head.values())  # 5 deals, in both seatings


@pytest.mark.slow
def test_tutorial_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "tutorial"
    env = {**os.environ, **_quick_env(out)}
    # Run from an empty folder, as a student might: nothing may depend on the current directory.
    proc = subprocess.run(
        [sys.executable, str(TUTORIAL)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = proc.stdout
    for line in PRINTED:
        assert line in text, f"{line!r} missing from the tutorial's output"
    # progress during the two long steps: the PPO run's bar and the tournament's (tqdm)
    assert "training smoke_structured.yaml for 1024 env steps" in text
    assert "evaluating: 5 duplicate deals" in text
    assert "tournament: 100%" in proc.stderr, proc.stderr[-2000:]
    _check_bot(out)


def test_tutorial_is_a_jupytext_percent_script() -> None:
    """Every section is a cell, so ``jupytext --to notebook`` gives a notebook with all nine."""
    text = TUTORIAL.read_text(encoding="utf-8")
    assert "format_name: percent" in text.split("# ---")[1]
    headings = [
        line for line in text.splitlines() if line.startswith("# ## ") and line[5].isdigit()
    ]
    assert [h.split(".")[0] for h in headings] == [f"# ## {i}" for i in range(1, 10)]
    cells = text.split("# %%")
    assert len(cells) > 20 and all(c.strip() for c in cells[1:])
    compile(text, str(TUTORIAL), "exec")


def test_the_notebook_is_the_tutorial_script() -> None:
    """docs/tutorial.ipynb holds the script's cells, in order, word for word (regenerate it with
    ``jupytext --sync docs/tutorial.py`` after editing the script)."""
    import jupytext

    script, notebook = jupytext.read(TUTORIAL), jupytext.read(NOTEBOOK)

    def cells(nb) -> list[tuple[str, str]]:
        return [(c.cell_type, c.source) for c in nb.cells]

    assert cells(notebook) == cells(script), "docs/tutorial.ipynb is stale: jupytext --sync"
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")


@pytest.mark.slow
def test_the_notebook_runs_top_to_bottom(tmp_path: Path, monkeypatch) -> None:
    """The notebook in a Jupyter kernel (nbclient), from an empty folder, with the quick settings."""
    import nbformat
    from nbclient import NotebookClient

    out = tmp_path / "tutorial"
    for key, value in _quick_env(out).items():
        monkeypatch.setenv(key, value)  # the kernel inherits this process's environment
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
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
    _check_bot(out)
