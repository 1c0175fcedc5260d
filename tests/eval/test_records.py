"""Game records (racko_eval.records, racko_eval.record_schema): every kind of game replays move for
move, recording changes no game, and a bad file is one line.

``record_every_kind`` is also the source of the records tests/apps/test_record_replay.py replays
through the JS twin.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents.heuristic import HeuristicBot
from agents.random_bot import RandomBot
from racko_eval import BotError, DealPlayer, IllegalActionError, TableSetup, run_tournament
from racko_eval.record_schema import json_schema, load_record
from racko_eval.records import (
    FORMAT,
    GameRecorder,
    RecordError,
    has_explain,
    replay_states,
    snapshot,
    write_record,
)
from racko_eval.tournament import seat_labels, unique_labels

ROOT = Path(__file__).resolve().parents[2]


class CrashingBot(HeuristicBot):
    """Plays like the heuristic, then raises on its ``after``-th move of a round."""

    name = "crashing"

    def __init__(self, num_players: int, after: int, illegal: bool = False) -> None:
        super().__init__(num_players=num_players)
        self.after, self.illegal, self.moves = after, illegal, 0

    def reset(self) -> None:
        self.moves = 0

    def act(self, observation: Any) -> int:
        self.moves += 1
        if self.moves >= self.after:
            if self.illegal:
                mask = observation["action_mask"]
                return next(a for a in range(len(mask)) if not mask[a])
            raise RuntimeError("boom")
        return super().act(observation)


# name, bots, episode, rules, deal seed: every player count, both episodes, every rules option
KINDS: list[tuple[str, list[Any], str, dict[str, Any], int]] = [
    ("2p-round-refills", ["random", "random"], "round", {"turn_limit": 150}, 1),
    ("2p-round-racko", ["heuristic", "expert"], "round", {}, 2),
    ("2p-round-min-run", ["random", "heuristic"], "round", {"min_run": 4, "turn_limit": 60}, 3),
    (
        "3p-round-flip-bonus",
        ["heuristic", "random", "expert"],
        "round",
        {"empty_pile": "flip", "bonus": True, "turn_limit": 120},
        4,
    ),
    (
        "4p-round-partners",
        ["heuristic", "expert", "random", "heuristic"],
        "round",
        {"partners": True},
        5,
    ),
    ("2p-game", ["heuristic", "expert"], "game", {"target_score": 200}, 6),
    (
        "3p-game-flip-bonus",
        ["random", "heuristic", "expert"],
        "game",
        {"empty_pile": "flip", "bonus": True, "target_score": 150, "turn_limit": 40},
        7,
    ),
    (
        "4p-game-partners",
        ["expert", "heuristic", "expert", "random"],
        "game",
        {"partners": True, "target_score": 150},
        8,
    ),
    ("2p-forfeit-raises", ["heuristic", "crash"], "round", {}, 9),
    ("3p-forfeit-illegal", ["heuristic", "random", "illegal"], "game", {"target_score": 150}, 10),
]


def _bots(specs: list[Any], n: int) -> list[Any]:
    made = {"crash": lambda: CrashingBot(n, 6), "illegal": lambda: CrashingBot(n, 9, illegal=True)}
    return [made[s]() if s in made else s for s in specs]


def play_recorded(
    folder: Path, name: str, specs: list[Any], episode: str, rules: dict[str, Any], seed: int
) -> tuple[Path, list[dict[str, Any]]]:
    """Play one deal with a recorder, and take the original game's own state after every move
    (the engine's clone, played before the env's step) to compare the replay with."""
    n = len(specs)
    bots = _bots(specs, n)
    setup = TableSetup(bots, unique_labels(bots), n, episode, rules)
    player = DealPlayer(setup)
    states: list[dict[str, Any]] = []
    env, real_step = player.env, player.env.step

    def spy(action: int) -> None:
        if not states:
            states.append(snapshot(player.game, 0))
        after = player.game.clone()
        after.apply(action)
        states.append(snapshot(after, len(states)))
        real_step(action)

    env.step = spy
    seating = tuple(range(n))
    recorder = GameRecorder(episode, seat_labels(setup, seating), {"kind": name})
    try:
        results = player.play(seed, seating, 0, recorder)
        record = recorder.finish(win=[r.win for r in results])
    except (BotError, IllegalActionError) as err:
        seat = setup.labels.index(err.bot)
        record = recorder.finish(forfeit={"seat": seat, "bot": err.bot, "reason": str(err)})
    return write_record(folder, name, record), states


def record_every_kind(folder: Path) -> list[tuple[Path, list[dict[str, Any]]]]:
    """One record of every kind of game in ``folder``, with the original states of each."""
    return [play_recorded(folder, *kind) for kind in KINDS]


@pytest.mark.slow
def test_every_kind_of_game_replays_move_for_move(tmp_path: Path) -> None:
    played = record_every_kind(tmp_path)
    records = {}
    for path, original in played:
        record = load_record(path)
        records[path.stem] = record
        assert replay_states(record) == original, path.stem
        assert len(record["moves"]) == len(original) - 1
    # the kinds cover what a replay has to get right
    assert any(r["chance"]["refills"] for r in records.values())
    assert any(len(r["chance"]["decks"]) > 2 for r in records.values())
    assert all(r["result"]["game_over"] for k, r in records.items() if "-game" in k)
    truncated = [
        s for p, states in played for s in states if s["round_over"] and s["racko_player"] is None
    ]
    assert truncated, "no round was cut off at the turn limit"
    raised = records["2p-forfeit-raises"]["result"]["forfeit"]
    assert raised["seat"] == 1 and "boom" in raised["reason"]
    illegal = records["3p-forfeit-illegal"]["result"]["forfeit"]
    assert illegal["seat"] == 2 and "illegal action" in illegal["reason"]
    # a heuristic's moves carry its own explanation; nobody's default explain is recorded
    moves = records["2p-round-racko"]["moves"]
    assert all(m.get("explain") for m in moves)
    assert "plan cost" in " ".join(m["explain"] for m in moves if m["seat"] == 1)


class DrawingExplainer(RandomBot):
    """A random bot whose explain draws from its own stream, as the search bot's does."""

    name = "drawing"

    def explain(self, observation: Any) -> str:
        return f"I would pick {self.act(observation)}"


def test_recording_changes_no_game(tmp_path: Path) -> None:
    """The explanation is asked of a copy of the bot: a bot whose explain draws random numbers
    (the search bot's draws worlds) plays the same game with --record as without it."""
    args = ([DrawingExplainer(3), "random", "heuristic"], 3)
    plain = run_tournament(*args, rounds=2, seed=3, empty_pile="flip")
    recorded = run_tournament(*args, rounds=2, seed=3, empty_pile="flip", record_dir=tmp_path)
    assert recorded["config"].pop("records") == str(tmp_path)
    assert recorded == plain
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 2 * 6  # 2 deals x 6 seatings
    record = load_record(files[0])
    assert record["context"] == {"source": "evaluate", "deal": 0, "seating": 0}
    assert [s["bot"] for s in record["seats"]] == ["drawing", "random", "heuristic"]
    assert sum(record["result"]["win"]) == pytest.approx(1.0)
    search_moves = [m for m in record["moves"] if m["seat"] == 0]
    assert all(m["explain"].startswith("I would pick") for m in search_moves)


def test_evaluate_keeps_the_record_of_the_game_a_bot_broke(tmp_path: Path) -> None:
    with pytest.raises(BotError):
        run_tournament([CrashingBot(2, 4), "heuristic"], 2, rounds=1, seed=0, record_dir=tmp_path)
    record = load_record(tmp_path / "deal00000-seating00.json")
    assert record["result"]["forfeit"]["seat"] == 0
    assert "boom" in record["result"]["forfeit"]["reason"]


def test_only_a_bots_own_explain_is_recorded() -> None:
    class Plain(HeuristicBot):
        explain_in_records = False

    assert has_explain(HeuristicBot(2))
    assert not has_explain(Plain(2))

    class NoExplain:
        def act(self, obs: Any) -> int:
            return 10

    assert not has_explain(NoExplain())


def test_the_documented_schema_is_the_model() -> None:
    path = ROOT / "docs" / "records.schema.json"
    assert path.read_text() == json_schema(), (
        "docs/records.schema.json is stale: python -m racko_eval.record_schema > "
        "docs/records.schema.json"
    )
    assert json.loads(path.read_text())["title"] == FORMAT


def _corrupt(record: dict[str, Any], how: str) -> Any:
    if how == "not-json":
        return None
    if how == "list":
        return [record]
    if how == "version":
        record["format"] = "racko-record/2"
    elif how == "missing":
        del record["moves"]
    elif how == "type":
        record["moves"][0]["action"] = "draw"
    elif how == "action-range":
        record["moves"][0]["action"] = 99
    elif how == "rules":
        record["rules"]["turn_limit"] = 0
    elif how == "seats":
        record["seats"] = record["seats"][:1]
    elif how == "wrong-seat":
        record["moves"][0]["seat"] = (record["moves"][0]["seat"] + 1) % 2
    elif how == "illegal":
        record["moves"][0]["action"] = 12  # keep, in the draw phase
    elif how == "deck":
        record["chance"]["decks"][0][0] = record["chance"]["decks"][0][1]
    elif how == "result":
        record["result"]["totals"][0] += 5
    elif how == "extra-move":
        record["moves"].append(dict(record["moves"][-1]))
    return record


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("not-json", "not JSON"),
        ("list", "not a game record"),
        ("version", "'racko-record/2' is not 'racko-record/1'"),
        ("missing", "moves: Field required"),
        ("type", "moves.0.action"),
        ("action-range", "moves.0.action"),
        ("rules", "turn_limit"),
        ("seats", "1 seat(s) for 2 players"),
        ("wrong-seat", "does not replay: move 1 is by seat"),
        ("illegal", "does not replay: move 1: illegal action 12"),
        ("deck", "does not replay: the first deal"),
        ("result", "does not replay: the replay ends at totals"),
        ("extra-move", "does not replay: move"),
    ],
)
def test_a_bad_record_is_one_line_naming_the_problem(tmp_path: Path, how: str, says: str) -> None:
    path, _ = play_recorded(tmp_path, "good", ["heuristic", "expert"], "round", {}, 2)
    data = _corrupt(json.loads(path.read_text()), how)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json" if data is None else json.dumps(data))
    with pytest.raises(RecordError) as err:
        load_record(bad)
    message = str(err.value)
    assert says in message and message.startswith(str(bad)), message
    assert "\n" not in message


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="no such file"):
        load_record(tmp_path / "nothing.json")
