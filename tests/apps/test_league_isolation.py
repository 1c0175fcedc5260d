"""racko league --isolation and --allow: what a submission may import, and the isolation every
report states."""

from __future__ import annotations

import json

import pytest

from racko_apps.league.cli import main

WRAPPER = """
import agents


class Bot:
    def __init__(self, num_players=2, seed=None):
        self.inner = agents.load("expert", num_players)

    def act(self, obs):
        return self.inner.act(obs)
"""


def test_a_bot_wrapping_expert_loads_only_where_allowed(tmp_path, can_isolate, capsys):
    (tmp_path / "wrapper.py").write_text(WRAPPER)
    args = [str(tmp_path), "--rounds", "1", "--schedule", "round-robin", "--workers", "1"]
    args += ["--seed", "1", "--baselines", "random"]
    args += [] if can_isolate else ["--no-isolation"]
    assert main(args) == 0
    data = json.loads((tmp_path / "league.json").read_text())
    assert [b["name"] for b in data["bots"]] == ["random"]
    (line,) = data["skipped"]
    assert line.startswith("wrapper: does not load:") and "allow" in line, line
    assert "\n" not in line
    assert main([*args, "--allow", "*", "--db", str(tmp_path / "all.sqlite")]) == 0
    data = json.loads((tmp_path / "league.json").read_text())
    assert {b["name"] for b in data["bots"]} == {"random", "wrapper"}
    assert data["config"]["allow"] == ["*"]


def test_every_report_states_a_weaker_isolation(tmp_path, capsys):
    (tmp_path / "wrapper.py").write_text(WRAPPER)
    args = [str(tmp_path), "--rounds", "1", "--schedule", "round-robin", "--workers", "1"]
    args += ["--baselines", "random", "--allow", "*", "--isolation", "none"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    data = json.loads((tmp_path / "league.json").read_text())
    assert data["config"]["isolation"] == "none" and data["isolated"] is False
    assert data["warning"].startswith("WARNING: the bots were not isolated (isolation 'none')")
    assert (tmp_path / "league.md").read_text().startswith("**WARNING: the bots were not")
    assert "WARNING: the bots were not isolated" in printed
    page = (tmp_path / "league.html").read_text()
    assert page.index("not isolated") < page.index("<h1>")
    with pytest.raises(SystemExit):  # one or the other
        main([*args, "--no-isolation"])
