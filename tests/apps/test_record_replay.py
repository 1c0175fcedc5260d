"""Records of games from the commands (--record of play, evaluate, grade, league), replayed by
``racko replay`` and by the web page's JS twin (web/js/replay.js) to the same states and scores.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_records import play_recorded, record_every_kind

from racko_apps.grade.report import format_report
from racko_apps.grade.rubric import load_rubric
from racko_apps.grade.run import grade
from racko_apps.league.run import run_league
from racko_apps.new_bot.starter import write_bot
from racko_apps.play.replay import format_state, interactive
from racko_eval.record_schema import load_record
from racko_eval.records import replay_states

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
PATIENCE = 600  # a guard against a hang, not a speed budget
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# A student's bot that plays its first legal move and breaks on the 4th move of a round: it passes
# the grader's single-move position checks and forfeits in its games.
LATE_CRASH = """
class Bot:
    def __init__(self, num_players=2, **rules):
        self.moves = 0

    def reset(self):
        self.moves = 0

    def act(self, obs):
        self.moves += 1
        if self.moves >= 4:
            raise RuntimeError("late boom")
        mask = obs["action_mask"]
        return next(a for a in range(len(mask)) if mask[a])
"""


def racko(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "racko_apps.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=ENV,
        timeout=PATIENCE,
    )


def js_states(files: list[Path]) -> dict[str, Any]:
    run = subprocess.run(
        [NODE, str(ROOT / "web" / "test" / "support" / "replay_records.js"), *map(str, files)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=PATIENCE,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def test_every_kind_of_record_replays_alike_in_python_and_javascript(
    tmp_path: Path, require
) -> None:
    require(NODE is not None, "Node.js", "install Node.js (https://nodejs.org)")
    played = record_every_kind(tmp_path)
    bad = tmp_path / "bad.json"
    record = json.loads(played[0][0].read_text())
    record["moves"][0]["seat"] = 1 - record["moves"][0]["seat"]
    bad.write_text(json.dumps(record))
    files = [path for path, _ in played]
    out = js_states([*files, bad])
    for path, original in played:
        js = out[str(path)]
        assert "error" not in js, (path.stem, js.get("error"))
        assert js["states"] == original, path.stem  # move for move: racks, piles, scores
        assert js["states"] == replay_states(load_record(path)), path.stem
    assert "move 1 is by seat" in out[str(bad)]["error"]
    assert "\n" not in out[str(bad)]["error"]


def test_play_records_its_game_and_replay_shows_its_end(tmp_path: Path, require) -> None:
    records = tmp_path / "records"
    played = subprocess.run(
        [sys.executable, "-m", "racko_apps.cli", "play", "--watch", "--bots", "heuristic", "expert",
         "--delay", "0", "--seed", "5", "--target-score", "150", "--record", str(records)],
        capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=PATIENCE,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    (path,) = records.glob("game-*-seed5.json")
    assert "wrote the record of this game" in played.stderr
    final = next(line for line in played.stdout.splitlines() if line.startswith("Final totals"))
    record = load_record(path)
    assert record["context"] == {"source": "play"} and record["result"]["game_over"]
    totals = record["result"]["totals"]
    assert final == f"Final totals: player_0 (heuristic) {totals[0]}, player_1 (expert) {totals[1]}"

    shown = racko("replay", str(path), "--to-end")
    assert shown.returncode == 0, shown.stderr
    states = replay_states(record)
    last = states[-1]
    assert f"=== move {len(states) - 1}/{len(states) - 1}" in shown.stdout
    for seat, rack in enumerate(last["racks"]):  # every rack, face up
        row = next(line for line in shown.stdout.splitlines() if f"player_{seat} (" in line[:20])
        assert " ".join(f"{c:2d}" for c in rack) in row and f"score {totals[seat]}" in row
    assert "player_1 (expert) won the game" in shown.stdout
    step = racko("replay", str(path), "--step", "3")
    assert step.stdout == format_state(record, states, 3) + "\n"
    assert "why: " in step.stdout  # the bots' own explanations are in the record
    every = racko("replay", str(path), "--all")
    assert every.stdout.count("=== move ") == len(states)

    if NODE is not None:  # and the page's engine replays the terminal game too
        assert js_states([path])[str(path)]["states"] == states


def test_replay_steps_forward_and_back(tmp_path: Path) -> None:
    path, _ = play_recorded(tmp_path, "game", ["heuristic", "random"], "round", {}, 1)
    record = load_record(path)
    states = replay_states(record)
    keys = iter(["", "", "b", "e", "s", "7", "x", "q"])
    shown: list[str] = []
    assert interactive(record, states, read=lambda _: next(keys), write=shown.append) == 0
    moves = [int(s.split()[2].split("/")[0]) for s in shown if s.startswith("=== move")]
    assert moves == [0, 1, 2, 1, len(states) - 1, 0, 7, 7]


def test_replay_of_a_bad_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "racko-record/1", "moves": []}')
    run = racko("replay", str(bad))
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith(f"racko replay: error: {bad}: ")
    missing = racko("replay", str(tmp_path / "none.json"), "--to-end")
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_evaluate_records_every_game(tmp_path: Path) -> None:
    run = racko(
        "evaluate", "--bots", "heuristic", "random", "--rounds", "2", "--workers", "2", "--no-progress",
        "--json", str(tmp_path / "report.json"), "--record", str(tmp_path / "games"),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    files = sorted((tmp_path / "games").glob("*.json"))
    assert [f.name for f in files] == [
        "deal00000-seating00.json", "deal00000-seating01.json",
        "deal00001-seating00.json", "deal00001-seating01.json",
    ]  # fmt: skip
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["config"]["records"] == str(tmp_path / "games")
    wins = {b["name"]: b["wins"] for b in report["bots"]}
    recorded = [load_record(f) for f in files]
    heuristic_wins = sum(
        r["result"]["win"][[s["bot"] for s in r["seats"]].index("heuristic")] for r in recorded
    )
    assert heuristic_wins == wins["heuristic"]


def test_grade_links_each_forfeit_and_lost_round_to_its_record(tmp_path: Path, can_isolate) -> None:
    (tmp_path / "late.py").write_text(LATE_CRASH)
    records = tmp_path / "records"
    report = grade(
        "late:Bot", load_rubric("quick"), seed=0, folder=tmp_path, isolate=can_isolate,
        record_dir=records,
    )  # fmt: skip
    forfeits = [line for line in report["failures"] if "forfeits deal" in line]
    assert len(forfeits) == 3  # quick rubric: 3 forfeits, then the rest unplayed
    first = next(c for c in report["criteria"] if c["check"] == "win_rate")
    assert len(first["records"]["forfeits"]) == 3
    for line, path in zip(forfeits, first["records"]["forfeits"], strict=True):
        assert line.endswith(f"(record: {path})")
        record = load_record(path)
        forfeit = record["result"]["forfeit"]
        assert (
            "late boom" in forfeit["reason"]
            and record["seats"][forfeit["seat"]]["bot"] == "late:Bot"
        )
        assert [m["seat"] for m in record["moves"]].count(forfeit["seat"]) == 3  # up to the crash
    good = grade("heuristic", load_rubric("quick"), seed=0, record_dir=tmp_path / "h")
    lost = [p for c in good["criteria"] if "records" in c for p in c["records"]["lost"]]
    assert lost, "the heuristic loses some rounds to the expert"
    for path in lost:
        record = load_record(path)
        seat = [s["bot"] for s in record["seats"]].index("heuristic")
        assert record["result"]["win"][seat] == 0
    assert lost[0] in format_report(good)


def test_league_links_each_forfeit_and_lost_round_to_its_record(
    tmp_path: Path, can_isolate
) -> None:
    bots = tmp_path / "bots"
    bots.mkdir()
    write_bot("alpha", bots)
    (bots / "late.py").write_text(LATE_CRASH)
    records = tmp_path / "records"
    report = run_league(
        bots, rounds=1, log=lambda _: None, baselines=["random"], isolate=can_isolate,
        record_dir=records,
    )  # fmt: skip
    links = {(p["a"], p["b"]): p["bots"] for p in report["records"]}
    assert set(links) == {("alpha", "late"), ("alpha", "random"), ("late", "random")}
    late = links[("alpha", "late")]["late"]["forfeits"]
    assert len(late) == 2  # one deal in both seatings
    lines = [line for p in report["pairings"] for line in p["forfeits"]]
    assert all("(record: " in line for line in lines) and len(lines) >= 2
    markdown = (bots / "league.md").read_text()
    assert late[0] in markdown
    for path in late:
        assert "late boom" in load_record(path)["result"]["forfeit"]["reason"]
    lost = links[("alpha", "random")]["random"]["lost"]
    assert lost and all(Path(p).parent == records / "alpha-vs-random" for p in lost)
    for path in lost:
        load_record(path)
