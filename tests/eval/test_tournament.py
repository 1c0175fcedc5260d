"""The evaluation harness: format, duplicate deals, determinism, report schema and bad input."""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from agents import Bot
from agents.obs import decode
from racko_eval.evaluate import main
from racko_eval.tournament import (
    BotError,
    IllegalActionError,
    run_tournament,
    seatings,
    tables_for,
    wilson_interval,
)

RECORDER = '''
from agents.heuristic import HeuristicBot
from agents.obs import decode

SEEN = []


class Recorder(HeuristicBot):
    """Heuristic play; records the rack it is dealt at each round as (tag, rack)."""

    def __init__(self, num_players=2, tag="?", **rules):
        super().__init__(num_players, **rules)
        self.tag = tag
        self.fresh = False

    def reset(self):
        self.fresh = True

    def act(self, observation):
        if self.fresh:
            SEEN.append((self.name, decode(observation).rack))
            self.fresh = False
        return super().act(observation)


class RecA(Recorder):
    name = "A"


class RecB(Recorder):
    name = "B"


class Lazy(Recorder):
    """Draws and discards every turn: the draw pile runs out (and is reshuffled) quickly."""

    name = "L"

    def act(self, observation):
        super().act(observation)
        return 10 if observation["action_mask"][10] else 13
'''

BAD_BOTS = """
class Illegal:
    name = "illegal"

    def reset(self):
        pass

    def act(self, observation):
        return 13  # "discard" even when drawing


class Floaty:
    name = "floaty"

    def reset(self):
        pass

    def act(self, observation):
        return 10.0


class Crashing:
    name = "crashing"

    def reset(self):
        pass

    def act(self, observation):
        raise RuntimeError("boom")
"""


@pytest.fixture
def user_modules(tmp_path, monkeypatch):
    (tmp_path / "recorder_bots.py").write_text(RECORDER)
    (tmp_path / "bad_bots.py").write_text(BAD_BOTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    import recorder_bots

    importlib.reload(recorder_bots)
    return recorder_bots


def test_tables_and_seatings():
    assert tables_for(3, 2) == [(0, 1), (0, 2), (1, 2)]
    assert tables_for(2, 4) == [(0, 0, 0, 1), (0, 0, 1, 1), (0, 1, 1, 1)]
    assert seatings((0, 1, 2)) == [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    assert seatings((0, 1)) == [(0, 1), (1, 0)]
    assert len(seatings((0, 0, 1, 2))) == 12 and len(set(seatings((0, 0, 1, 2)))) == 12
    with pytest.raises(ValueError):
        tables_for(0, 2)


def test_wilson_interval():
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-3) and hi == pytest.approx(0.7634, abs=1e-3)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-3)


@pytest.mark.parametrize(("bots", "players"), [(3, 2), (3, 3), (2, 4), (4, 3)])
def test_every_bot_sits_in_every_seat_equally_often(bots, players):
    specs = ["random", "heuristic", "expert", "random"][:bots]
    report = run_tournament(specs, players, rounds=2, seed=1, turn_limit=40)
    counts = [b["seat_counts"] for b in report["bots"]]
    assert all(len(set(c)) == 1 for c in counts), counts
    assert len({c[0] for c in counts}) == 1  # every bot equally often overall too
    assert report["config"]["seatings_per_deal"] == sum(
        len(seatings(t)) for t in tables_for(bots, players)
    )


@pytest.mark.parametrize(("bots", "players"), [(3, 3), (3, 4), (4, 4), (2, 3)])
def test_every_bot_plays_after_every_other_equally_often(bots, players):
    # a player's discards are offered to the next player first: rotations alone would always seat
    # the same bot after the same other bot at a table of three
    follows = Counter()
    for lineup in tables_for(bots, players):
        for seating in seatings(lineup):
            for s in range(players):
                follows[seating[s], seating[(s + 1) % players]] += 1
    for a in range(bots):
        for b in range(bots):
            assert follows[a, b] == follows[b, a], (a, b, follows)
    assert len({follows[a, b] for a in range(bots) for b in range(bots) if a != b}) == 1


def test_duplicate_deals_are_the_same_deals(user_modules):
    run_tournament(["recorder_bots:RecA", "recorder_bots:RecB"], 2, rounds=3, seed=9)
    seen = user_modules.SEEN
    assert len(seen) == 12  # 3 deals x 2 seatings x 2 seats
    for deal in range(3):
        first, second = seen[4 * deal : 4 * deal + 2], seen[4 * deal + 2 : 4 * deal + 4]
        # the same seat gets the same cards whoever sits in it: A's hand is B's after rotating
        assert dict(first)["A"] == dict(second)["B"]
        assert dict(first)["B"] == dict(second)["A"]
    assert seen[0][1] != seen[4][1]  # and different deals differ


def test_duplicate_games_deal_every_round_alike(user_modules):
    """In game mode rounds 2, 3, ... are dealt from the game seed too, whoever sits where."""
    from racko_eval.tournament import DealPlayer, TableSetup

    setup = TableSetup(["recorder_bots:RecA", "recorder_bots:Lazy"], ["A", "L"], 2, "game", {})
    player = DealPlayer(setup)
    seen = user_modules.SEEN
    player.play(1234, (0, 1), 0)
    seat0_first = [rack for name, rack in seen if name == "A"]
    seen.clear()
    player.play(1234, (1, 0), 1)
    seat0_second = [rack for name, rack in seen if name == "L"]
    rounds = min(len(seat0_first), len(seat0_second))
    assert rounds >= 5  # a game to 500 takes many rounds
    assert seat0_first[:rounds] == seat0_second[:rounds]
    assert len(set(seat0_first)) == len(seat0_first)  # and each round is a new deal


@pytest.mark.slow
def test_same_seed_same_report_whatever_the_workers():
    args = (["expert", "heuristic", "random"], 3)
    one = run_tournament(*args, rounds=6, seed=4, workers=1)
    two = run_tournament(*args, rounds=6, seed=4, workers=2)
    assert one == two
    assert run_tournament(*args, rounds=6, seed=5, workers=1) != one


@pytest.mark.slow
def test_heuristic_beats_random_and_expert_beats_heuristic():
    report = run_tournament(["expert", "heuristic", "random"], 2, rounds=40, seed=0)
    rate = {t["lineup"][0] + "/" + t["lineup"][1]: t["win_rate"] for t in report["tables"]}
    assert rate["heuristic/random"]["heuristic"] >= 0.95
    assert rate["expert/random"]["expert"] >= 0.95
    assert rate["expert/heuristic"]["expert"] > 0.6
    by = {b["name"]: b for b in report["bots"]}
    assert (
        by["expert"]["rating"]["mu"]
        > by["heuristic"]["rating"]["mu"]
        > by["random"]["rating"]["mu"]
    )
    assert by["random"]["mean_turns_to_racko"] is None or by["random"]["rackos"] > 0


def test_cli_json_schema_and_plot(tmp_path, capsys):
    out, png = tmp_path / "out.json", tmp_path / "out.png"
    argv = ["--players", "2", "--rounds", "5", "--bots", "expert", "heuristic", "--seed", "0"]
    assert main([*argv, "--json", str(out), "--plot", str(png), "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "| expert |" in text and "win rate" in text
    report = json.loads(out.read_text())
    assert png.stat().st_size > 1000
    assert report["schema"] == "racko-evaluation/1"
    assert set(report) == {"schema", "config", "bots", "tables"}
    cfg = report["config"]
    assert cfg["players"] == 2 and cfg["unit"] == "round" and cfg["deals"] == 5 and cfg["seed"] == 0
    assert cfg["seatings_per_deal"] == 2 and cfg["bots"] == ["expert", "heuristic"]
    assert cfg["rules"]["empty_pile"] == "shuffle"
    keys = {
        "name", "spec", "played", "wins", "win_rate", "win_rate_ci95", "rounds",
        "mean_round_score", "rackos", "mean_turns_to_racko", "rating", "seat_counts",
    }  # fmt: skip
    for bot in report["bots"]:
        assert set(bot) == keys
        assert bot["played"] == 10 and bot["seat_counts"] == [5, 5]
        lo, hi = bot["win_rate_ci95"]
        assert 0 <= lo <= bot["win_rate"] <= hi <= 1
        assert set(bot["rating"]) == {"mu", "sigma", "ordinal"}
        assert isinstance(bot["mean_round_score"], float)
    assert sum(b["wins"] for b in report["bots"]) == pytest.approx(10)
    assert report["tables"] == [
        {
            "lineup": ["expert", "heuristic"],
            "played": 10,
            "win_rate": {
                "expert": report["bots"][0]["win_rate"],
                "heuristic": report["bots"][1]["win_rate"],
            },
        }
    ]


def test_games_report_per_game(tmp_path):
    report = run_tournament(["expert", "heuristic"], 2, games=2, seed=3, target_score=100)
    assert report["config"]["unit"] == "game"
    for bot in report["bots"]:
        assert bot["played"] == 4 and bot["rounds"] >= 4 * 2
    assert sum(b["wins"] for b in report["bots"]) == pytest.approx(4)


def test_user_bot_plays_in_a_tournament(user_modules):
    report = run_tournament(["recorder_bots:RecA", "random"], 2, rounds=3, seed=0)
    assert report["bots"][0]["name"] == "recorder_bots:RecA"
    assert report["bots"][0]["wins"] >= 5


def test_bot_objects_and_repeated_specs():
    from agents.heuristic import HeuristicBot

    report = run_tournament([HeuristicBot(), "heuristic"], 2, rounds=3, seed=0, workers=2)
    assert [b["name"] for b in report["bots"]] == ["heuristic", "heuristic#2"]


def test_unpicklable_bot_object_with_workers_is_refused():
    from agents.heuristic import HeuristicBot

    bot = HeuristicBot()
    bot.hook = lambda: None  # lambdas do not pickle
    with pytest.raises(ValueError, match="cannot be sent to worker processes"):
        run_tournament([bot, "random"], 2, rounds=2, workers=2)
    assert run_tournament([bot, "random"], 2, rounds=2, workers=1)["bots"][0]["played"] == 4


def test_illegal_action_stops_and_names_bot_and_action(user_modules, capsys):
    with pytest.raises(IllegalActionError) as info:
        run_tournament(["bad_bots:Illegal", "heuristic"], 2, rounds=2, seed=0)
    assert info.value.bot == "bad_bots:Illegal" and info.value.action == 13
    assert "illegal action 13 (discard)" in str(info.value)
    assert main(["--bots", "bad_bots:Illegal", "heuristic", "--rounds", "2", "--workers", "2"]) == 3
    err = capsys.readouterr().err
    assert "bad_bots:Illegal" in err and "illegal action 13" in err
    with pytest.raises(IllegalActionError, match=r"illegal action 10.0 \(not an action id\)"):
        run_tournament(["bad_bots:Floaty", "heuristic"], 2, rounds=1, seed=0)
    with pytest.raises(BotError, match="'bad_bots:Crashing' raised RuntimeError: boom"):
        run_tournament(["bad_bots:Crashing", "heuristic"], 2, rounds=1, seed=0)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bots", "grandmaster"], "unknown bot 'grandmaster'; known bots are"),
        (["--bots", "nowhere/bot.onnx"], "bot file 'nowhere/bot.onnx' does not exist"),
        (["--bots", "expert", "--players", "5"], "--players must be between 1 and 4"),
        (["--bots", "expert", "--players", "3", "--min-run", "3"], "for 2 players only"),
    ],
)
def test_bad_input_is_refused(argv, message, capsys):
    assert main([*argv, "--rounds", "1", "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_bad_counts_are_refused():
    with pytest.raises(SystemExit):
        main(["--bots", "expert", "--rounds", "0"])
    with pytest.raises(SystemExit):
        main(["--bots", "expert", "--rounds", "3", "--games", "2"])
    with pytest.raises(ValueError, match="positive"):
        run_tournament(["expert"], 2, rounds=-1)
    with pytest.raises(ValueError, match="at least one bot"):
        run_tournament([], 2, rounds=1)


def test_docs_example_bot_runs(tmp_path, monkeypatch):
    """The user bot in docs/bots/writing-a-bot.md, exactly as printed, loads and plays a tournament."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "bots" / "writing-a-bot.md"
    blocks = re.findall(r"```python\n(# my_bots\.py\n.*?)```", docs.read_text(), re.S)
    assert len(blocks) == 1
    (tmp_path / "my_bots.py").write_text(textwrap.dedent(blocks[0]))
    monkeypatch.syspath_prepend(str(tmp_path))
    report = run_tournament(["my_bots:Cautious", "heuristic"], 2, rounds=3, seed=0)
    assert report["bots"][0]["played"] == 6
    import my_bots

    assert issubclass(my_bots.Cautious, Bot)
    assert decode  # the example uses agents.obs.decode


@pytest.mark.slow
def test_script_runs_as_documented(tmp_path):
    """`racko evaluate ...` from the repository root, two workers, JSON out."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "out.json"
    cmd = [sys.executable, "-m", "racko_apps.cli", "evaluate", "--players", "3", "--rounds", "4"]
    cmd += ["--bots", "expert", "heuristic", "random", "--seed", "0", "--json", str(out)]
    env = {**os.environ, "PYTHONPATH": str(root)}  # the checkout under test
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "| expert |" in done.stdout
    seat_counts = json.loads(out.read_text())["bots"][0]["seat_counts"]
    assert seat_counts == [8, 8, 8]  # 4 deals x 6 seatings, each bot in each seat twice


def test_wilson_interval_of_the_periodic_evaluation() -> None:
    from racko_eval import wilson_interval

    lo, hi = wilson_interval(60, 100)
    assert lo < 0.6 < hi and 0.49 < lo < 0.51 and 0.69 < hi < 0.70
