"""docs/tutorial.py runs end to end, top to bottom, with its quick settings (as CI runs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial.py"


def test_tutorial_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "tutorial"
    env = {
        **os.environ,
        "RACKO_TUTORIAL_QUICK": "1",
        "RACKO_TUTORIAL_OUT": str(out),
        # The repository itself, not whatever copy is installed, and its folder for subprocesses.
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
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
    for line in (
        "quick=True",
        "ascending prefix: 4 cards -> 20",
        "Rack-O? True -> 75 points",
        "decision: DRAW | legal actions: (10, 11)",
        "trained for 512 env steps",
        "| bot | rounds | wins | win rate (95% CI)",
        "$ racko --watch --bots",
        "won with",
    ):
        assert line in text, f"{line!r} missing from the tutorial's output"
    # progress during the two long steps: the PPO run's bar and the tournament's (tqdm)
    assert "training for 512 env steps (the bar shows how far it is)" in text
    assert "evaluating: 5 duplicate deals" in text
    assert "tournament: 100%" in proc.stderr, proc.stderr[-2000:]
    assert "512/512" in proc.stdout + proc.stderr, (proc.stdout + proc.stderr)[-2000:]
    manifest = json.loads((out / "bot.json").read_text())
    assert manifest["num_players"] == 2 and manifest["training"] == {"tutorial": True}
    assert manifest["export_check"]["disagreements"] == 0
    assert (out / "bot.onnx").stat().st_size > 0


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
