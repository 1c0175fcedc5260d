"""racko league --players 3|4 and the rules options: tables of one bot per seat, rated with
OpenSkill's multiplayer ratings."""

from __future__ import annotations

import json

import pytest

from racko_apps.league.cli import main
from racko_apps.league.run import run_league
from racko_apps.new_bot.starter import write_bot


def test_a_three_player_league_ranks_the_strong_bot_first(tmp_path, can_isolate):
    write_bot("alpha", tmp_path)  # a sandboxed bot at the tables too
    report = run_league(
        tmp_path,
        rounds=2,
        seed=0,
        players=3,
        baselines=["expert", "random", "heuristic"],
        schedule="round-robin",
        workers=1,
        isolate=can_isolate,
        log=lambda _: None,
    )
    assert report["config"]["players"] == 3
    assert [b["name"] for b in report["bots"]][0] == "expert", report["bots"]
    assert len(report["pairings"]) == 4  # every table of 3 of the 4 bots
    for p in report["pairings"]:
        assert len(p["bots"]) == 3 and p["rounds"] == 2 * 6  # every seating of each deal
    assert all(b["rounds"] == 3 * 12 for b in report["bots"])
    assert "3 players" in (tmp_path / "league.md").read_text()


def test_rules_options_are_settings_of_the_league(tmp_path, capsys):
    args = [str(tmp_path), "--baselines", "random", "heuristic", "--workers", "1"]
    args += ["--rounds", "1", "--schedule", "round-robin", "--seed", "3"]
    assert main([*args, "--rack-size", "5"]) == 0
    data = json.loads((tmp_path / "league.json").read_text())
    assert data["config"]["rules"] == {"rack_size": 5}
    assert "rack-size 5" in (tmp_path / "league.md").read_text()
    capsys.readouterr()
    assert main(args) == 2  # the record holds another game
    assert "played with rules {'rack_size': 5}" in capsys.readouterr().err
    assert main([*args, "--deck-size", "7", "--db", str(tmp_path / "x.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--deck-size" in err, err
    with pytest.raises(ValueError, match="partners is not supported"):
        run_league(tmp_path, players=4, rules={"partners": True}, baselines=["random"])
