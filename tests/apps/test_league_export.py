"""racko league --gradescope-export: a Gradescope export's submissions play under aliases, and
grades.csv beside the report maps them back to the students."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from racko_apps.league.cli import main
from racko_apps.league.submissions import read_aliases, read_gradescope_export
from racko_apps.new_bot.starter import write_bot

METADATA = """\
submission_101:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1815'
    :email: ada@example.edu
  :created_at: 2026-12-01 10:00:00.000000000 -08:00
  :score: 0.0
submission_102:
  :submitters:
  - :name: "=HYPERLINK(\\"x\\"), Bob"
    :sid: '2002'
    :email: bob@example.edu
  - :name: Carol
    :sid: '2003'
    :email: carol@example.edu
submission_103:
  :submitters:
  - :name: Dan
    :sid: '2004'
    :email: dan@example.edu
"""

PACKAGE = """from pathlib import Path

import numpy as np

from agents.obs import legal_actions

W = np.load(Path(__file__).parent / "w.npy", allow_pickle=False)


class Bot:
    def act(self, obs):
        return max(legal_actions(obs), key=lambda a: float(W[a % len(W)]))
"""


def make_export(root):
    export = root / "export"
    (export / "submission_101").mkdir(parents=True)
    write_bot("my_bot", export / "submission_101")
    package = export / "submission_102" / "net_bot"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(PACKAGE)
    np.save(package / "w.npy", np.arange(5, dtype=np.float32))
    (export / "submission_103").mkdir()
    (export / "submission_103" / "notes.txt").write_text("no bot here\n")
    (export / "submission_metadata.yml").write_text(METADATA)
    return export


def test_the_export_is_read_with_aliases(tmp_path):
    export = make_export(tmp_path)
    aliases = tmp_path / "aliases.csv"
    aliases.write_text("key,alias\nada@example.edu,team_red\n")
    subs = read_gradescope_export(export, read_aliases(aliases))
    assert [s.alias for s in subs] == ["team_red", "sub_102", "sub_103"]
    assert subs[0].bot.spec == "my_bot:Bot" and subs[1].bot.spec == "net_bot:Bot"
    assert subs[2].bot is None and "holds no bot" in subs[2].why
    assert [p.sid for p in subs[1].submitters] == ["2002", "2003"]
    aliases.write_text("ada@example.edu,bad alias|x\n")
    with pytest.raises(ValueError, match="aliases.csv:1: .*not a label"):
        read_aliases(aliases)
    (export / "submission_metadata.yml").unlink()
    with pytest.raises(ValueError, match="not a Gradescope export"):
        read_gradescope_export(export)


@pytest.mark.slow
def test_a_league_of_an_export_writes_grades(tmp_path, can_isolate, capsys):
    export = make_export(tmp_path)
    aliases = tmp_path / "aliases.csv"
    aliases.write_text("ada@example.edu,team_red\n")
    out = tmp_path / "out"
    args = ["--gradescope-export", str(export), "--aliases", str(aliases), "--out", str(out)]
    args += ["--rounds", "1", "--schedule", "round-robin", "--workers", "1"]
    args += [] if can_isolate else ["--no-isolation"]
    assert main([*args, "--baselines", "random"]) == 0
    assert "grades.csv" in capsys.readouterr().out
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    by_sid = {r["SID"]: r for r in rows}
    assert set(by_sid) == {"1815", "2002", "2003", "2004"}
    assert by_sid["1815"]["alias"] == "team_red" and by_sid["1815"]["rank"] in ("1", "2", "3")
    assert by_sid["2002"]["alias"] == by_sid["2003"]["alias"] == "sub_102"
    assert by_sid["2002"]["Name"].startswith("'=HYPERLINK")  # shown as text, not a formula
    assert by_sid["2004"]["rank"] == "" and "holds no bot" in by_sid["2004"]["note"]
    assert by_sid["1815"]["bots"] == "3"
    assert {r["provisional"] for r in rows} == {"false"}  # the league ran through
    page = (out / "league.md").read_text() + (out / "league.html").read_text()
    assert "team_red" in page and "sub_102" in page
    assert "Ada" not in page and "example.edu" not in page
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--gradescope-export", str(export)])


def test_every_grades_cell_that_begins_like_a_formula_is_shown_as_text(tmp_path):
    """OWASP's CSV injection: a cell beginning with = + - @ tab or CR is a formula to a
    spreadsheet. Students' names, aliases and crash texts are neutralised; numbers stay numbers."""
    from pathlib import Path

    from racko_apps.league.report import write_grades
    from racko_apps.league.submissions import Exported, Submitter
    from racko_eval.course_files import FORMULA_STARTS

    people = (Submitter("=1+1", "+2", "\rcmd@example.edu"), Submitter("\tTab", "@3", "ok"))
    export = [
        Exported(Path("submission_1"), people, "-played", None),
        Exported(Path("submission_2"), (Submitter("Eve", "4", "e"),), "-crashed", None),
    ]
    bot = {"name": "-played", "mu": -1.5, "ci95": [-4.0, 1.0], "win_rate": 0.5}
    report = {
        "bots": [{**bot, "rounds": 2, "forfeits": 0}],
        "skipped": ["-crashed: does not load: =cmd|' /C calc'!A0"],
    }
    with open(write_grades(tmp_path, report, export), newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        for column, cell in row.items():
            numeric = column.startswith(("rating", "win_rate")) and cell
            assert numeric or not cell.startswith(FORMULA_STARTS), (column, cell)
    assert [r["Name"] for r in rows] == ["'=1+1", "'\tTab", "Eve"]
    assert [r["SID"] for r in rows] == ["'+2", "'@3", "4"]
    assert rows[0]["Email"] == "'\ncmd@example.edu" and rows[0]["alias"] == "'-played"
    assert rows[0]["rating"] == "-1.5" and rows[0]["rating_low"] == "-4.0"  # numbers, not text
    assert rows[2]["note"] == "'-crashed: does not load: =cmd|' /C calc'!A0"
