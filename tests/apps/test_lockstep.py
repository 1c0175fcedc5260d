"""Rounds side by side (racko_apps.referee.lockstep): the same games and results as one round at a
time, with the limits still per move and per round, and a crash losing only its own
table's round."""

from __future__ import annotations

from pathlib import Path

import pytest

from racko_apps.referee.book import Strikes
from racko_apps.referee.match import play_match, sandbox_for
from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.wire import Limits

# The expert, a random move now and then, and a crash in the rounds whose seed says so: with its
# state in its own object, the games cannot tell how many rounds are played at once.
FLAKY = """
import random

import agents
from agents.obs import legal_actions

P = {p}


class Bot:
    def __init__(self, num_players=2, seed=None):
        self.expert = agents.load("expert", num_players)
        self.rng = random.Random(seed)
        self.doomed = False

    def seed(self, seed):
        self.rng.seed(seed)
        self.doomed = seed % 5 == 0

    def reset(self):
        self.expert.reset()
        self.moves = 0

    def act(self, obs):
        self.moves += 1
        if self.doomed and self.moves == 7:
            raise RuntimeError("seventh move of a doomed round")
        if self.rng.random() < P:
            return self.rng.choice(legal_actions(obs))
        return self.expert.act(obs)
"""

SLOW_SOMETIMES = """
import time

from agents.obs import legal_actions


class Bot:
    def seed(self, seed):
        self.slow = seed % 5 == 0

    def reset(self):
        self.moves = 0

    def act(self, obs):
        self.moves += 1
        if self.slow and self.moves == 2:
            time.sleep(0.6)
        return legal_actions(obs)[0]
"""

HANGS = """
from agents.obs import legal_actions


class Bot:
    def reset(self):
        self.moves = 0

    def act(self, obs):
        self.moves += 1
        while self.moves > 3:
            pass
        return legal_actions(obs)[0]
"""

FOUR_FIT = """
from agents.obs import legal_actions

BUILT = []


class Bot:
    def __init__(self):
        if len(BUILT) == 4:
            raise MemoryError
        BUILT.append(self)

    def reset(self):
        pass

    def act(self, obs):
        return legal_actions(obs)[-1]
"""


def write(folder: Path, name: str, source: str) -> str:
    (folder / f"{name}.py").write_text(source)
    return f"{name}:Bot"


def match(folder: Path, specs: list[str], tables: int, limits: Limits | None = None, **kw):
    bots = [
        sandbox_for(
            spec, 2, {}, folder=folder, label=spec.split(":")[0], limits=limits, allow=("*",)
        )
        for spec in specs
    ]
    try:
        return play_match(
            bots,
            [spec.split(":")[0] for spec in specs],
            deals=kw.pop("deals", 6),
            seed=3,
            strikes=[Strikes(kw.pop("max_forfeits", 1000)) for _ in bots],
            tables=tables,
            **kw,
        ), bots
    finally:
        for bot in bots:
            bot.close()


def comparable(result) -> tuple:
    return result.played, result.wins, result.points, result.forfeits, result.rounds


@pytest.mark.slow
def test_side_by_side_plays_the_same_games_and_forfeits(tmp_path):
    a = write(tmp_path, "flaky_a", FLAKY.format(p=0.1))
    b = write(tmp_path, "flaky_b", FLAKY.format(p=0.6))
    one, _ = match(tmp_path, [a, b], tables=1, deals=8)
    many, bots = match(tmp_path, [a, b], tables=5, deals=8)
    assert bots[0].tables == 5
    assert comparable(many) == comparable(one)
    assert many.forfeit_lines == one.forfeit_lines
    crashes = [row for row in many.rounds if "forfeit" in row]
    assert crashes and all("seventh move" in row["forfeit"]["reason"] for row in crashes)
    assert len(crashes) < len(many.rounds)  # a crash loses its own table's round, not the others


@pytest.mark.slow
def test_a_slow_move_forfeits_its_round_only(tmp_path):
    slow = write(tmp_path, "slow", SLOW_SOMETIMES)
    limits = Limits(move_seconds=0.4, round_seconds=30)
    result, _ = match(tmp_path, [slow, "random"], tables=2, limits=limits)
    lost = [row for row in result.rounds if "forfeit" in row]
    assert lost and len(lost) < len(result.rounds)
    assert all(row["forfeit"]["bot"] == "slow" for row in lost)
    # the move over its limit gets the sandbox killed, as one round at a time would, and with
    # it the rounds in flight
    assert {row["forfeit"]["reason"] for row in lost} == {"did not answer within 0.4 s (killed)"}


@pytest.mark.slow
def test_the_round_clock_still_binds(tmp_path):
    slow_every = SLOW_SOMETIMES.replace("seed % 5 == 0", "True").replace("self.moves == 2", "True")
    slow = write(tmp_path, "slow_every", slow_every.replace("0.6", "0.05"))
    limits = Limits(move_seconds=1.0, round_seconds=0.3)
    result, _ = match(tmp_path, [slow, "random"], tables=3, limits=limits, deals=2)
    reasons = {row["forfeit"]["reason"] for row in result.rounds}
    assert reasons and all(
        r.startswith("ran out of its clock of 0.3 s for the round") for r in reasons
    )


@pytest.mark.slow
def test_a_hang_loses_the_rounds_in_flight_and_is_killed(tmp_path):
    hangs = write(tmp_path, "hangs", HANGS)
    limits = Limits(move_seconds=0.5, round_seconds=30)
    result, _ = match(tmp_path, [hangs, "random"], tables=3, limits=limits, max_forfeits=3)
    assert result.forfeits == [12, 0] and len(result.forfeit_lines) == 4
    lines = result.forfeit_lines
    assert all(x.endswith("did not answer within 0.5 s (killed)") for x in lines[:3])
    assert "hangs forfeits 9 more round(s) unplayed: it reached 3 forfeit(s)" in lines[3]


def test_fewer_tables_where_the_bot_objects_do_not_fit(tmp_path):
    bot = write(tmp_path, "four_fit", FOUR_FIT)
    result, bots = match(tmp_path, [bot, "heuristic"], tables=8, deals=3)
    assert bots[0].tables == 2  # four built, the fifth failed: half of them kept, with room
    assert sum(result.played) == 12 and not result.forfeit_lines


@pytest.mark.parametrize("tables", [0, -1, True])
def test_tables_must_be_a_positive_integer(tables):
    with pytest.raises(ValueError, match="tables must be a positive integer"):
        SandboxedBot("x:Bot", ".", tables=tables)


def test_the_league_refuses_no_tables(tmp_path, capsys):
    from racko_apps.league.cli import main

    with pytest.raises(SystemExit) as stop:
        main([str(tmp_path), "--tables", "0"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        "racko league: error: --tables must be positive (see racko league --help)"
    )
