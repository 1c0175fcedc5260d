"""A bot's clock per pairing: a thread burner that answers legally, slowly, forfeits the rest of
its pairing on its clock, with one line, and its pairing ends within that clock."""

from __future__ import annotations

import time

from racko_apps.league.clock import ClockedStrikes, PairingClock, on_clock, one_line_per_clock
from racko_apps.league.run import run_league
from racko_apps.referee.match import play_match, seat_bot
from racko_apps.sandbox.wire import Limits

BURNER = """
import threading
import time

from agents.obs import legal_actions


def _burn():
    while True:
        pass


class Bot:
    \"\"\"Answers every move legally, but leaves one more thread spinning in its own process
    each move, and takes its time: well within the move limit and the round's clock.\"\"\"

    def reset(self):
        pass

    def act(self, obs):
        threading.Thread(target=_burn, daemon=True).start()
        time.sleep(0.5)
        return legal_actions(obs)[0]
"""

# generous limits per move and per round: only the pairing's clock can stop it
LIMITS = Limits(move_seconds=30, round_seconds=120)


def test_a_thread_burner_ends_its_pairing_within_its_clock(tmp_path, can_isolate):
    (tmp_path / "burner.py").write_text(BURNER)
    bot = seat_bot("burner:Bot", 2, {}, folder=tmp_path, limits=LIMITS, isolate=can_isolate)
    clock = PairingClock(3.0)
    on_clock(bot, clock)  # started already: the start is not on the clock
    began = time.monotonic()
    try:
        match = play_match(
            [bot, "random"],
            ["burner", "random"],
            deals=3,
            seed=0,
            strikes=[ClockedStrikes(3, clock=clock), ClockedStrikes(3)],
            tables=4,
        )
    finally:
        bot.close()
    seconds = time.monotonic() - began
    assert seconds < 3.0 + 2.0, seconds  # the clock, and the moment it takes to end the sandbox
    assert clock.spent and match.forfeits[0] == match.played[0] == 6 and match.forfeits[1] == 0
    lines = one_line_per_clock(match, [clock, None]).forfeit_lines
    assert lines == [
        "burner forfeits the pairing's remaining 6 round(s) from deal 0: it used up its clock "
        "of 3 s for the pairing"
    ], lines


def test_a_league_forfeits_a_thread_burner_on_its_pairing_clock(tmp_path, can_isolate):
    (tmp_path / "burner.py").write_text(BURNER)
    report = run_league(
        tmp_path,
        rounds=2,
        seed=0,
        baselines=["random", "heuristic"],
        limits=LIMITS,
        pairing_seconds=3,
        schedule="round-robin",
        workers=1,
        isolate=can_isolate,
        log=lambda _: None,
    )
    assert report["config"]["pairing_seconds"] == 3
    burner = next(b for b in report["bots"] if b["name"] == "burner")
    assert burner["forfeits"] == burner["rounds"] == 8, burner
    assert report["bots"][-1]["name"] == "burner"
    for p in report["pairings"]:
        if "burner" in (p["a"], p["b"]):
            assert (
                len(p["forfeits"]) == 1
                and "used up its clock of 3 s for the pairing" in (p["forfeits"][0])
            ), p
        else:
            assert p["forfeits"] == []
