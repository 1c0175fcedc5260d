"""racko league at class scale: the adaptive schedule ranks bots by strength with fewer pairings
than a round robin, an interrupted league resumes to the same table, and every submission plays
under the same limits (a clock per round; exported bots sandboxed like Python code)."""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import random
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.base import Bot
from agents.obs import legal_actions
from racko_apps.grade.rubric import parse_rubric
from racko_apps.grade.run import grade
from racko_apps.league import record as league_record
from racko_apps.league import workqueue as league_queue
from racko_apps.league.run import run_league
from racko_apps.league.submissions import Entry
from racko_apps.referee.book import Strikes
from racko_apps.referee.match import play_match, seat_bot
from racko_apps.sandbox.wire import Limits

REPO = Path(__file__).resolve().parents[2]


class NoisyExpert(Bot):
    """The expert, but a random legal move with probability ``p``: bots of graded strength."""

    def __init__(self, p: float, num_players: int = 2, seed: int | None = None) -> None:
        self.p = p
        self.expert = agents.load("expert", num_players)
        self.rng = random.Random(seed)

    def seed(self, seed: int | None) -> None:
        self.rng.seed(seed)

    def reset(self) -> None:
        self.expert.reset()

    def act(self, observation) -> int:
        if self.rng.random() < self.p:
            return self.rng.choice(legal_actions(observation))
        return self.expert.act(observation)


def noisy_bots(monkeypatch, n: int) -> list[str]:
    """``n`` built-in bots ``noisy_00`` (p = 0, the strongest) ... ``noisy_NN`` (p = 1); played
    in-process (workers=1), so the schedule is tested without n sandboxes per pairing."""
    names = []
    for i in range(n):
        name = f"noisy_{i:02d}"
        monkeypatch.setitem(agents.BUILTIN_BOTS, name, functools.partial(NoisyExpert, i / (n - 1)))
        names.append(name)
    return names


def spearman(order: list[str], truth: list[str]) -> float:
    rank = {name: i for i, name in enumerate(order)}
    n = len(truth)
    d2 = sum((rank[name] - i) ** 2 for i, name in enumerate(truth))
    return 1 - 6 * d2 / (n * (n * n - 1))


def test_an_interval_narrows_with_every_round_even_a_foregone_one():
    """A bot's skill does not drift, so its interval never widens: OpenSkill's default dynamics
    (tau = 25/300) widen a bot that loses every round from its 706th round on."""
    entries = [Entry(name, name, name, "builtin") for name in ("strong", "weak")]
    ratings = league_record.Ratings(entries)
    sigmas = []
    for _ in range(1000):
        ratings.add(("strong", "weak"), [(1.0, 0.0)])
        sigmas.append(ratings.of["weak"].sigma)
    assert all(b <= a for a, b in itertools.pairwise(sigmas)), sigmas
    assert sigmas[-1] < sigmas[0]


@pytest.mark.slow
def test_the_adaptive_schedule_ranks_bots_by_strength(tmp_path, monkeypatch):
    names = noisy_bots(monkeypatch, 30)
    log: list[str] = []
    report = run_league(
        tmp_path, rounds=3, seed=0, baselines=names, workers=1, target=8.0, log=log.append
    )
    order = [b["name"] for b in report["bots"]]
    rho = spearman(order, names)
    assert rho > 0.8, (rho, order)
    pairings = len(report["pairings"])
    assert pairings < 30 * 29 // 2 / 2, pairings  # far fewer than the round robin's 435
    assert report["config"]["schedule"] == "adaptive"
    assert report["sure"]["within_target"] == 30, report["sure"]
    assert "every 95% interval is within ±8" in report["sure"]["stopped"]
    assert "round 0: 15 pairing(s)" in log[1]  # everybody starts unsettled: one pairing each
    assert "How sure" in (tmp_path / "league.md").read_text()


def table(report: dict) -> list[tuple]:
    return [(b["name"], b["mu"], b["sigma"], b["rounds"]) for b in report["bots"]]


@pytest.mark.slow
def test_an_interrupted_league_resumes_to_the_same_table(tmp_path, monkeypatch):
    names = noisy_bots(monkeypatch, 8)
    settings = dict(
        rounds=1,
        seed=0,
        baselines=names,
        workers=1,
        target=8.0,
        max_pairings=2,
        log=lambda _: None,
    )
    whole = run_league(tmp_path, db=tmp_path / "whole.sqlite", out=tmp_path / "whole", **settings)
    assert len(whole["pairings"]) > 6  # more than one pairing round
    add = league_record.Record.add
    calls = {"n": 0}

    def killed_after_five(self, bots, result):
        if calls["n"] == 5:
            raise KeyboardInterrupt  # as a kill mid-round: this pairing is lost, not recorded
        calls["n"] += 1
        add(self, bots, result)

    monkeypatch.setattr(league_record.Record, "add", killed_after_five)
    db = tmp_path / "cut.sqlite"
    with pytest.raises(KeyboardInterrupt):
        run_league(tmp_path, db=db, out=tmp_path / "cut", **settings)
    cut = json.loads((tmp_path / "cut" / "league.json").read_text())
    assert cut["provisional"] is True and len(cut["pairings"]) == 5  # the ranking so far
    assert "the league was stopped (Ctrl-C) with 8 interval(s)" in cut["sure"]["stopped"]
    played: list[tuple[str, ...]] = []

    def counted(self, bots, result):
        played.append(tuple(e.label for e in bots))
        add(self, bots, result)

    monkeypatch.setattr(league_record.Record, "add", counted)
    log: list[str] = []
    again = run_league(tmp_path, db=db, out=tmp_path / "cut", **{**settings, "log": log.append})
    assert "5 pairing(s) on record" in log[0]
    assert any("planned and not played yet" in line for line in log), log
    assert table(again) == table(whole) and again["provisional"] is False
    assert len(again["pairings"]) == len(whole["pairings"]) == 5 + len(played)  # none replayed


@pytest.mark.slow
def test_a_time_budget_cuts_the_rounds_and_a_rerun_goes_on(tmp_path, monkeypatch):
    # the budget's clock advances 30 s per pairing played (no test waits on a real clock): a
    # budget of 4 minutes holds 8 pairings
    names = noisy_bots(monkeypatch, 10)
    now = {"t": 0.0}
    play = league_queue.play_pairing

    def timed(job):
        now["t"] += 30.0
        return play(job)

    monkeypatch.setattr(league_queue, "play_pairing", timed)
    monkeypatch.setattr(league_queue, "_clock", lambda: now["t"])
    # never narrow enough: the budget or the pairings a bot may ask for end each run
    settings = dict(rounds=1, seed=0, baselines=names, workers=1, target=0.5, max_pairings=3)
    log: list[str] = []
    report = run_league(tmp_path, budget_minutes=4, log=log.append, **settings)
    # round 0 pairs all 10 (5 pairings, 150 s); at 30 s a pairing, 3 fit in what is left, ...
    rounds = [line for line in log if line.startswith("round ")]
    assert rounds[0].startswith("round 0: 5 pairing(s);"), log
    # then at most as many as fit (a pairing serves two of the widest at once where they meet)
    assert all("(as many as fit the time budget)" in line for line in rounds[1:]), log
    assert len(rounds) > 2 and len(report["pairings"]) == 8
    assert "the time budget of 4 min was spent with 10 interval(s)" in report["sure"]["stopped"]
    assert report["config"]["budget_minutes"] == 4
    # a round the budget runs out in (its clock past the deadline after each pairing): the rest
    # stays planned, and the next run plays it first
    log.clear()
    report = run_league(tmp_path, budget_minutes=0.25, log=log.append, **settings)
    rounds = [line for line in log if line.startswith("round ")]
    number = rounds[0].split(":")[0]  # "round N"
    assert rounds[0].startswith(f"{number}: 5 pairing(s);"), log
    assert rounds[1] == f"{number}: the time budget is spent; 4 pairing(s) left for the next run"
    assert len(report["pairings"]) == 9
    log.clear()
    report = run_league(tmp_path, budget_minutes=0, log=log.append, **settings)
    assert f"{number}: 4 pairing(s) planned and not played yet" in log, log
    assert len(report["pairings"]) >= 13 and report["config"]["budget_minutes"] is None
    assert "no pairing left to ask for" in report["sure"]["stopped"]
    with pytest.raises(ValueError, match="budget_minutes must be a number of minutes >= 0"):
        run_league(tmp_path, budget_minutes=-1, **settings)


BURNER = """
import threading
import time

from agents.obs import legal_actions


def _burn():
    while True:
        pass


class Bot:
    \"\"\"Answers every move legally, but leaves one more thread spinning in its own process
    each move, and takes its time.\"\"\"

    def reset(self):
        pass

    def act(self, obs):
        threading.Thread(target=_burn, daemon=True).start()
        time.sleep(0.4)
        return legal_actions(obs)[0]
"""


@pytest.mark.slow
def test_a_thread_burning_bot_forfeits_on_its_clock(tmp_path, can_isolate):
    (tmp_path / "burner.py").write_text(BURNER)
    limits = Limits(move_seconds=30, round_seconds=2)
    bot = seat_bot("burner:Bot", 2, {}, folder=tmp_path, limits=limits, isolate=can_isolate)
    try:
        match = play_match(
            [bot, "expert"], ["burner", "expert"], deals=2, strikes=[Strikes(2), Strikes(9)]
        )
    finally:
        bot.close()
    lines = match.forfeit_lines
    assert match.forfeits[0] == 4 and match.forfeits[1] == 0, lines
    clocked = [x for x in lines if "ran out of its clock of 2 s for the round (killed)" in x]
    assert len(clocked) == 2, lines  # then it is out: its other rounds forfeited unplayed
    assert "burner forfeits 2 more round(s) unplayed" in lines[-1]


@pytest.mark.slow
def test_grade_puts_a_bot_on_the_same_clock(tmp_path, can_isolate):
    (tmp_path / "burner.py").write_text(BURNER)
    rubric = parse_rubric(
        {
            "players": 2,
            "seed": 0,
            "positions": 1,
            "rounds": 1,
            "time_limit": 1.0,
            "kill_after": 30.0,
            "round_seconds": 2.0,
            "memory_mb": 1024,
            "max_forfeits": 3,
            "criteria": [
                {"name": "loads", "check": "loads", "points": 1},
                {
                    "name": "against random",
                    "check": "win_rate",
                    "opponent": "random",
                    "thresholds": [{"win_rate": 0.5, "points": 1}],
                },
            ],
        },
        "test",
    )
    report = grade("burner:Bot", rubric, folder=tmp_path, isolate=can_isolate)
    assert any("ran out of its clock of 2 s" in line for line in report["failures"]), report


# ----------------------------------------------------------------------------- exported bots


def hostile_graph(kind: str) -> bytes:
    """A graph with the bot interface that never returns (a Loop of 10^12 iterations) or asks
    for 64 GiB (an Expand to 2^34 floats, shaped at run time so nothing is folded at load)."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    from racko_env.actions import NUM_ACTIONS
    from racko_env.observation import OBS_SIZE

    scalar = functools.partial(helper.make_tensor_value_info, shape=[])
    nodes = [helper.make_node("ReduceSum", ["observation"], ["total"], keepdims=0)]
    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "zero")]
    if kind == "loop":
        body = helper.make_graph(
            [
                helper.make_node("Identity", ["go"], ["go_on"]),
                helper.make_node("Add", ["v", "one"], ["v_next"]),
            ],
            "spin",
            [scalar("i", TensorProto.INT64), scalar("go", TensorProto.BOOL)]
            + [scalar("v", TensorProto.FLOAT)],
            [scalar("go_on", TensorProto.BOOL), scalar("v_next", TensorProto.FLOAT)],
            [numpy_helper.from_array(np.array(1.0, np.float32), "one")],
        )
        inits += [
            numpy_helper.from_array(np.array(10**12, np.int64), "trips"),
            numpy_helper.from_array(np.array(True), "yes"),
        ]
        nodes.append(helper.make_node("Loop", ["trips", "yes", "total"], ["spun"], body=body))
    else:
        inits.append(numpy_helper.from_array(np.array([1 << 34], np.int64), "huge"))
        nodes += [
            helper.make_node("Expand", ["total", "huge"], ["big"]),
            helper.make_node("ReduceSum", ["big"], ["spun"], keepdims=0),
        ]
    nodes += [  # the first legal action, + 0 * what was computed (so it must be computed)
        helper.make_node("Cast", ["action_mask"], ["legal"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["spun", "zero"], ["nothing"]),
        helper.make_node("Add", ["legal", "nothing"], ["scores"]),
        helper.make_node("ArgMax", ["scores"], ["action"], axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        kind,
        [
            helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", OBS_SIZE]),
            helper.make_tensor_value_info("action_mask", TensorProto.BOOL, ["batch", NUM_ACTIONS]),
        ],
        [helper.make_tensor_value_info("action", TensorProto.INT64, ["batch"])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def write_exported(folder: Path, name: str, data: bytes) -> Path:
    from agents.onnx_bot import INPUTS, OUTPUTS
    from racko_env.observation import OBS_SIZE, OBS_VERSION

    manifest = {
        "format": "racko-bot",
        "format_version": 1,
        "observation_version": OBS_VERSION,
        "observation_size": OBS_SIZE,
        "num_players": 2,
        "rules": {},
        "inputs": INPUTS,
        "outputs": {"action": OUTPUTS["action"]},
        "onnx_sha256": hashlib.sha256(data).hexdigest(),
    }
    path = folder / f"{name}.onnx"
    path.write_bytes(data)
    path.with_suffix(".json").write_text(json.dumps(manifest))
    return path


@pytest.mark.slow
def test_hostile_exported_bots_forfeit_in_a_league(tmp_path, capfd, can_isolate):
    pytest.importorskip("onnxruntime")
    write_exported(tmp_path, "spinner", hostile_graph("loop"))
    write_exported(tmp_path, "glutton", hostile_graph("alloc"))
    report = run_league(
        tmp_path,
        rounds=1,
        baselines=["random"],
        limits=Limits(move_seconds=2),
        max_forfeits=1,
        isolate=can_isolate,
        schedule="round-robin",
        log=lambda _: None,
    )
    lines = [line for p in report["pairings"] for line in p["forfeits"]]
    spun = [x for x in lines if x.startswith("spinner.onnx forfeits deal")]
    ate = [x for x in lines if x.startswith("glutton.onnx forfeits deal")]
    assert spun and all("did not answer within 2 s (killed)" in x for x in spun), lines
    assert ate and all("ran out of memory (limit 1024 MB): asked for 64 GiB" in x for x in ate)
    assert all("\n" not in x for x in lines)
    assert [b["name"] for b in report["bots"]][0] == "random"
    printed = capfd.readouterr()
    assert "onnxruntime" not in printed.out + printed.err  # none of its own log lines


@pytest.mark.slow
def test_grade_sandboxes_an_exported_bot_that_never_returns(tmp_path, can_isolate, capfd):
    pytest.importorskip("onnxruntime")
    write_exported(tmp_path, "spinner", hostile_graph("loop"))
    rubric = parse_rubric(
        {
            "players": 2,
            "seed": 0,
            "positions": 1,
            "rounds": 1,
            "time_limit": 1.0,
            "kill_after": 2.0,
            "memory_mb": 1024,
            "max_forfeits": 1,
            "criteria": [
                {"name": "loads", "check": "loads", "points": 1},
                {"name": "legal", "check": "legal", "points": 1},
            ],
        },
        "test",
    )
    report = grade("spinner.onnx", rubric, folder=tmp_path, isolate=can_isolate)
    assert report["total"] == 1  # it loads; then it is stopped, not waited for
    assert "did not answer within 2 s (killed)" in report["failures"][0]
    assert "onnxruntime" not in "".join(capfd.readouterr())


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray cluster at a time (pytest -n: --dist loadgroup)
def test_a_league_on_a_ray_cluster(tmp_path, monkeypatch, can_isolate):
    ray = pytest.importorskip("ray")
    from racko_apps.new_bot.starter import write_bot

    monkeypatch.setenv("HOME", str(tmp_path))  # nothing of Ray's in the user's home
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # Ray's workers import this checkout
    bots = tmp_path / "bots"
    bots.mkdir()
    write_bot("alpha", bots)
    write_bot("beta", bots)
    # Ray's session files: a folder of their own, with a short path (Ray's unix sockets live
    # there, and their paths may not exceed ~107 characters, which a tmp_path can)
    temp = tempfile.mkdtemp(prefix="racko-ray-")
    ray.init(num_cpus=2, include_dashboard=False, _temp_dir=temp, log_to_driver=False)
    try:
        report = run_league(
            bots,
            rounds=1,
            baselines=["random"],
            address="auto",
            isolate=can_isolate,
            schedule="round-robin",
            log=lambda _: None,
        )
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
    assert len(report["pairings"]) == 3
    assert {b["name"] for b in report["bots"]} == {"alpha", "beta", "random"}
    assert all(b["forfeits"] == 0 for b in report["bots"]), report["pairings"]
