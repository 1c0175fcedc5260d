"""What counts as a submission, and labels: no file name can add a row or a heading to a report."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from racko_apps.league.run import run_league
from racko_apps.league.submissions import find_bots, safe_label, scan, shown
from racko_apps.new_bot.starter import write_bot

FORGED = "forged\n| 1 | forged_onnx | 99.9 (99.0-99.9) | 100.0% | 1 | 0 |\n# Winner"

WEIGHTED = '''"""A package submission: its weights are a data file beside its code."""

from pathlib import Path

import numpy as np

from agents.obs import legal_actions

WEIGHTS = np.load(Path(__file__).parent / "weights.npz", allow_pickle=False)["w"]


class Bot:
    def act(self, obs):
        legal = legal_actions(obs)
        return max(legal, key=lambda a: float(WEIGHTS[a % len(WEIGHTS)]))
'''


def write_package(folder, name="weighted"):
    package = folder / name
    package.mkdir()
    (package / "__init__.py").write_text(WEIGHTED)
    np.savez(package / "weights.npz", w=np.arange(8, dtype=np.float32))
    return package


def test_safe_labels_pass_and_others_are_refused_in_one_line():
    assert safe_label("my_bot-2.onnx") == "my_bot-2.onnx"
    for name in (FORGED, "a|b", "<b>x</b>", ".hidden", "x" * 65, "ünï", "", "a b"):
        with pytest.raises(ValueError) as err:
            safe_label(name)
        line = str(err.value)
        assert "\n" not in line and "|" not in line and "<" not in line, line
    assert shown("a\n|b") == "a\\x0a\\x7cb"


def test_files_and_folders_are_found(tmp_path):
    write_bot("alpha", tmp_path)  # and test_alpha.py: a test, not a bot
    write_package(tmp_path)
    (tmp_path / "notes").mkdir()  # a folder that is no package: not looked at
    (tmp_path / "lonely.onnx").write_bytes(b"")
    found = find_bots(tmp_path)
    assert found == {"alpha": tmp_path / "alpha.py", "weighted": tmp_path / "weighted"}
    entries, skipped = scan(tmp_path)
    assert [e.spec for e in entries] == ["alpha:Bot", "weighted:Bot"]
    assert skipped == ["lonely.onnx: no manifest lonely.json beside it"]
    before = entries[1].key
    np.savez(tmp_path / "weighted" / "weights.npz", w=np.ones(8, dtype=np.float32))
    assert scan(tmp_path)[0][1].key != before  # new weights: a new bot


def test_a_forged_name_adds_no_row_to_any_report(tmp_path, can_isolate):
    write_bot("alpha", tmp_path)
    (tmp_path / f"{FORGED}.onnx").write_bytes(b"not read")
    (tmp_path / f"{FORGED}.json").write_text("{}")
    (tmp_path / f"{FORGED}.py").write_text("class Bot:\n    pass\n")
    write_package(tmp_path, "weighted")
    report = run_league(
        tmp_path,
        rounds=1,
        baselines=["random"],
        isolate=can_isolate,
        schedule="round-robin",
        workers=1,
        log=lambda _: None,
    )
    names = {b["name"] for b in report["bots"]}
    assert names == {"alpha", "random", "weighted"}, report["skipped"]
    assert len(report["skipped"]) == 2 and all("\\x0a\\x7c" in s for s in report["skipped"])
    page = (tmp_path / "league.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("|")]
    assert len(rows) == 2 + 3, page  # the header, its rule, one row per bot
    assert not re.search(r"^#.*Winner", page, re.M)
    assert not any("forged" in row for row in rows)
    html_page = (tmp_path / "league.html").read_text()
    assert html_page.count("<tr>") == 1 + 3 and "<h1>" in html_page
    assert html_page.count("<h1>") == 1 and "Winner</h" not in html_page
    data = json.loads((tmp_path / "league.json").read_text())
    assert {b["name"] for b in data["bots"]} == names
