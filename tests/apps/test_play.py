"""The terminal game: whole games through the real command, bad input, --watch, bad arguments.

The command runs in a subprocess with piped stdin (and under a pseudo-terminal with pexpect for
Ctrl-C), so these tests see exactly the screen a user sees.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pexpect
import pytest

from racko_apps.play.text import (
    SLOT_LABELS,
    describe_turn,
    explain_score,
    label_bot_slots,
    parse_command,
    parse_slot,
    run_cards,
)
from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase
from racko_env.config import RulesConfig
from racko_env.engine import TurnRecord

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
DRAW_AND_DISCARD = "d\nx\n" * 4000  # always legal in turn: a player who never improves
# Seconds a subprocess may take, or an expected line may take to appear: a guard against a hang,
# not a speed budget. The tests wait for events (the process ending, a line of output), so a busy
# machine only makes them slower (a Ctrl-C test once timed out at 30 s under load ~6).
PATIENCE = 900


def play(*args: str, stdin: str = "", env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "racko_apps.cli", "play", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env or ENV,
        timeout=PATIENCE,
    )


def screens(out: str) -> list[str]:
    """The output cut at each new human screen (a rule line starting 'Rack-O - round')."""
    return re.split(r"\n(?=─* ?Rack-O - round)", out)


def row(screen: str, name: str) -> list[str]:
    """The 10 slot cells of a rack row in the table ('·' for an unseen card)."""
    line = next(ln for ln in screen.splitlines() if ln.startswith(name))
    return line[len(name) :].split()[:10]


# ------------------------------------------------------------------------- the input language


@pytest.mark.parametrize(
    ("text", "phase", "actions"),
    [
        ("d", Phase.DRAW, (DRAW_PILE,)),
        (" D ", Phase.DRAW, (DRAW_PILE,)),
        ("t", Phase.DRAW, (TAKE_DISCARD,)),
        ("t 20", Phase.DRAW, (TAKE_DISCARD, 3)),
        ("t50", Phase.DRAW, (TAKE_DISCARD, 9)),
        ("k", Phase.KEEP_OR_DISCARD, (KEEP,)),
        ("x", Phase.KEEP_OR_DISCARD, (DISCARD,)),
        ("45", Phase.KEEP_OR_DISCARD, (KEEP, 8)),
        ("k 5", Phase.KEEP_OR_DISCARD, (KEEP, 0)),
        ("5", Phase.PLACE, (0,)),
        ("50", Phase.PLACE, (9,)),
    ],
    ids=lambda v: repr(v) if isinstance(v, str) else None,
)
def test_commands_map_to_legal_actions(text, phase, actions):
    cmd = parse_command(text, phase, held=23, discard_top=17)
    assert cmd.actions == actions and not cmd.error


@pytest.mark.parametrize(
    ("text", "phase", "says"),
    [
        ("", Phase.DRAW, "Nothing typed"),
        ("k", Phase.DRAW, "not drawn a card yet"),
        ("20", Phase.DRAW, "'t 20' takes the 17"),
        ("t 7", Phase.DRAW, "'7' is not a slot label"),
        ("7", Phase.DRAW, "first type d (draw) or t (take the 17)"),
        ("banana", Phase.DRAW, "'banana' is not a choice"),
        ("d", Phase.KEEP_OR_DISCARD, "already drew the 23"),
        ("3", Phase.KEEP_OR_DISCARD, "'3' is not a slot label"),
        ("x", Phase.PLACE, "The 23 is one you chose to keep, so it must go into your rack"),
        ("55", Phase.PLACE, "'55' is not a slot label"),
        ("k", Phase.PLACE, "You already hold the 23"),
        ("d", Phase.PLACE, "You already hold the 23"),
        ("zz", Phase.PLACE, "'zz' is not a slot label"),
    ],
)
def test_bad_commands_are_explained(text, phase, says):
    cmd = parse_command(text, phase, held=23, discard_top=17)
    assert not cmd.actions and says in cmd.error


def test_a_card_from_the_discard_pile_cannot_be_discarded():
    cmd = parse_command("x", Phase.PLACE, held=23, discard_top=9, from_discard=True)
    assert "The 23 came from the discard pile, so it must go into your rack" in cmd.error


def test_help_and_quit_words():
    assert parse_command("?", Phase.DRAW, None, 5).help
    assert parse_command("q", Phase.PLACE, 3, 5).quit
    assert [parse_slot(s) for s in ("5", "25", "50", "0", "51", "x", "")] == [0, 4, 9] + [None] * 4


def test_bot_slot_numbers_get_the_printed_label():
    assert label_bot_slots("put the 17 into slot 1, not slot 10") == (
        "put the 17 into slot 5, not slot 50"
    )
    assert label_bot_slots("slot 11 or slot 35 or slots") == "slot 11 or slot 35 or slots"


def test_expert_hint_names_its_number_and_the_typed_slot_labels():
    """The hint once said 'about 72 -> about 59 turns to Rack-O' on a 16-turn round and mixed
    'slot 10 (label 50)': the number is a plan cost, and slots are the labels the player types."""
    import agents
    from racko_env import racko_v1

    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=3)
    bot = agents.load("expert")
    seen = []
    for _ in range(60):
        if env.terminations[env.agent_selection]:
            break
        obs = env.observe(env.agent_selection)
        seen.append(label_bot_slots(bot.explain(obs)))
        env.step(bot.act(obs))
    text = " ".join(seen)
    assert "plan cost" in text and "turns to Rack-O" not in text
    assert "label" not in text
    slots = [int(w) for w in re.findall(r"slot (\d+)", text)]
    assert slots and all(s in SLOT_LABELS for s in slots)


def test_log_lines_say_only_what_the_table_saw():
    took = TurnRecord(1, TAKE_DISCARD, 7, 3, 12)
    kept = TurnRecord(1, DRAW_PILE, 0, 8, 12)
    tossed = TurnRecord(1, DRAW_PILE, 0, None, 31)
    assert describe_turn(took, "player_1").startswith(
        "player_1 took the 7 from the discard pile into slot 20"
    )
    assert describe_turn(tossed, "player_1") == "player_1 drew and discarded the 31"
    hidden = describe_turn(kept, "player_1")
    assert hidden.startswith("player_1 drew and kept a card in slot 45") and "33" not in hidden
    assert describe_turn(kept, "You", drawn=33).startswith("You drew the 33 and kept it in slot 45")


def test_scoring_is_explained_with_the_engine_figures():
    cfg = RulesConfig(num_players=2)
    lines = explain_score([5, 9, 13, 24, 25, 32, 4, 35, 42, 55], False, cfg)
    assert "5, 9, 13, 24, 25, 32 (6 cards)" in lines[0] and "the 4 in slot 35" in lines[0]
    assert lines[-1] == "total 30"
    assert explain_score([9, 3, 1, 2, 4, 5, 6, 7, 8, 10], False, cfg)[-1] == "total 5"
    racko = [1, 2, 3, 4, 20, 30, 31, 32, 33, 34]
    assert explain_score(racko, True, cfg)[-1] == "total 75"
    bonus = explain_score(racko, True, RulesConfig(num_players=2, bonus=True))
    assert any("30-31-32-33-34 (5 cards) scores +200" in ln for ln in bonus)
    assert bonus[-1] == "total 275"
    assert run_cards([1, 2, 5, 6, 7, 9]) == [5, 6, 7]
    no_run = explain_score(list(range(2, 40, 4)), False, RulesConfig(num_players=2, min_run=3))
    assert "needs a run of 3" in no_run[0] and no_run[-1] == "total 50"


# ------------------------------------------------------------------------- whole games, piped


# The tests of one module fixture run on one xdist worker (--dist loadgroup), so that the game is
# played once, not once per worker.
ON_ONE_WORKER = pytest.mark.xdist_group("test_play.full_game")


@pytest.fixture(scope="module")
def full_game() -> subprocess.CompletedProcess:
    """A whole 2-player game to 500 against heuristic, with bad input first."""
    bad = "banana\nk\n7\nt 99\n\n?\nt\nx\nd\n5\n"
    return play("--seed", "3", "--bots", "heuristic", stdin=bad + DRAW_AND_DISCARD)


@ON_ONE_WORKER
def test_a_full_game_to_500_finishes_with_winner_and_totals(full_game):
    out = full_game.stdout
    assert full_game.returncode == 0, full_game.stderr
    final = re.search(r"Game over\W*\n(.+) won with (\d+) points\.\n", out)
    assert final and final.group(1) == "player_1 (heuristic)" and int(final.group(2)) >= 500
    assert re.search(r"Final totals: You \(player_0\) \d+, player_1 \(heuristic\) \d+", out)
    assert out.count("went Rack-O!") >= 500 // 75


@ON_ONE_WORKER
def test_bad_input_is_explained_and_asked_again(full_game):
    out = full_game.stdout
    for says in (
        "'banana' is not a choice now",
        "You have not drawn a card yet",
        "'7' is not a slot label",
        "'99' is not a slot label",
        "Nothing typed",
        "How to play:",
        "came from the discard pile, so it must go into your rack",
        "You already hold the",
    ):
        assert says in out
    assert "Traceback" not in out + full_game.stderr
    assert re.search(r"You took the \d+ from the discard pile into slot 5, discarding", out)


@ON_ONE_WORKER
def test_the_screen_shows_what_the_human_may_know(full_game):
    out = full_game.stdout
    first = screens(out)[1]
    assert re.search(r"slot\s+5\s+10\s+15\s+20\s+25\s+30\s+35\s+40\s+45\s+50\s+score", first)
    assert re.search(r"Discard pile: \d+", first) and re.search(r"Draw pile: \d+ cards", first)
    assert all(c.isdigit() for c in row(first, "You (player_0)"))
    assert "Your turn: [d] draw from the draw pile" in out
    assert re.search(r"player_1 took the \d+ from the discard pile into slot \d+", out)
    assert re.search(r"player_1 drew and (discarded the \d+|kept a card in slot \d+)", out)
    assert re.search(r"You drew the \d+: \[k\] keep it, \[x\] discard it", out)
    # The opponent's row shows only cards the table saw going in from the discard pile.
    for segment in re.split(r"Round \d+ over:", out)[:-1]:
        rounds_screens = screens(segment)[1:]
        taken = set(
            re.findall(r"player_1 took the (\d+) from the discard", "".join(rounds_screens))
        )
        for screen in rounds_screens:
            cells = row(screen, "player_1 (heuristic)")
            assert {c for c in cells if c != "·"} <= taken
    assert len(screens(out)) > 50


@ON_ONE_WORKER
def test_end_of_round_reveals_every_rack_and_explains_the_score(full_game):
    out = full_game.stdout
    reveal = out.split("Round 1 over:")[1].split("Totals:")[0]
    you = [int(c) for c in row(reveal, "You (player_0)")]
    bot = [int(c) for c in row(reveal, "player_1 (heuristic)")]
    assert bot == sorted(bot) and len(set(you + bot)) == 20
    assert "Rack-O: all 10 cards ascending: 10 x 5 = 50, plus the Rack-O bonus of 25" in reveal
    assert "ascending from slot 5:" in reveal and "breaks the order" in reveal
    totals = re.findall(r"total (\d+)", reveal)
    assert totals[1] == "75"


def test_rounds_limit_rules_flags_and_the_place_shortcut():
    out = play(
        "--seed", "7", "--bots", "heuristic", "--rounds", "1", "--bonus", "--empty-pile", "flip",
        "--turn-limit", "12", "--target-score", "300",
        stdin="t 50\n" + DRAW_AND_DISCARD,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Rules: game to 300, at most 1 round(s), turn limit 12, empty draw pile: flip" in text
    assert "Bonus Rack-O" in text
    assert re.search(r"You took the \d+ from the discard pile into slot 50, discarding", text)
    assert "Round 1 over: cut off after 12 turns (the turn limit) without a Rack-O" in text
    assert "Game over after 1 round(s) (--rounds)" in text
    assert re.search(r"\n(You \(player_0\)|player_1 \(heuristic\)) won with \d+ points\.", text)
    assert "Round 2" not in text


def test_a_trained_bots_hint_gives_its_odds_over_the_legal_moves():
    out = play("--seed", "1", "--bots", "random", "--hint", "racko_2p", stdin="d\n")
    line = re.search(r"Hint \(racko_2p\): type ([dt])\. Its odds: (.*)", out.stdout)
    assert line, out.stdout[-2000:]
    odds = re.findall(r"(draw from the draw pile|take the discard) ([<>]?\d+)%", line.group(2))
    # the two legal moves; a sure bot's odds read ">99%" and "<1%"
    value = {"<1": 0, ">99": 100}
    assert (
        len(odds) == 2 and abs(sum(value[p] if p in value else int(p) for _, p in odds) - 100) <= 1
    )
    first = {"draw from the draw pile": "d", "take the discard": "t"}[odds[0][0]]
    assert first == line.group(1)  # the likeliest move is the one it suggests


def test_hint_shows_the_bot_move_and_reason():
    out = play("--seed", "1", "--bots", "random", "--hint", "heuristic", stdin="d\n")
    assert re.search(r"Hint \(heuristic\): type [dt]\. Why: (draw|take)", out.stdout)


def test_three_players_other_seat_and_partners():
    out = play(
        "--players", "4", "--partners", "--seat", "2", "--bots", "random", "random", "heuristic",
        "--seed", "5", "--rounds", "1", "--turn-limit", "20", stdin=DRAW_AND_DISCARD,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "You (player_2)" in text and "player_3 (heuristic)" in text
    assert "team 1 (player_0 + you)" in text
    assert re.search(r"team 1 .*: \d+ \+ \d+ = \d+ this round", text)


# ------------------------------------------------------------------------- leaving


def test_end_of_input_leaves_with_a_one_line_summary():
    out = play("--seed", "1", "--bots", "heuristic", stdin="d\n")
    assert out.returncode == 0
    last = out.stdout.strip().splitlines()[-1]
    assert re.fullmatch(
        r"Left the game in round 1, turn \d+: You \(player_0\) 0, player_1 \(heuristic\) 0 "
        r"\(game to 500\)\.",
        last,
    )


def test_q_leaves_cleanly():
    out = play("--seed", "1", "--bots", "heuristic", stdin="q\n")
    assert out.returncode == 0 and "Left the game in round 1" in out.stdout


def test_ctrl_c_leaves_with_a_summary_and_status_130():
    child = pexpect.spawn(
        sys.executable,
        ["-m", "racko_apps.cli", "play", "--seed", "1", "--bots", "heuristic"],
        cwd=str(ROOT),
        env=ENV,
        encoding="utf-8",
        timeout=PATIENCE,
        dimensions=(40, 120),
        # a caller that ignores SIGINT (nohup, a background job) would pass that on to the child
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    child.expect(r"\[t\] take the \d+ from the discard pile")
    child.sendline("d")
    child.expect(r"\[k\] keep it")
    child.sendintr()
    child.expect(r"Interrupted in round 1, turn \d+: You \(player_0\) 0")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130


# ------------------------------------------------------------------------- watch


def test_watch_plays_a_full_game_to_500_with_no_delay():
    out = play("--watch", "--delay", "0", "--seed", "2", "--bots", "heuristic", "random")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Rack-O, 2 players: player_0 (heuristic), player_1 (random)" in text
    assert re.search(r"player_\d drew the \d+ and kept it in slot \d+", text)  # bots hide nothing
    final = re.search(r"Game over\W*\nplayer_0 \(heuristic\) won with (\d+) points", text)
    assert final and int(final.group(1)) >= 500
    again = play("--watch", "--delay", "0", "--seed", "2", "--bots", "heuristic", "random")
    assert again.stdout == text  # --seed replays the deal and the bots


def test_user_bots_play_and_a_bad_bot_stops_the_game_with_a_message(tmp_path):
    (tmp_path / "mybots.py").write_text(
        textwrap.dedent(
            """
            class Stubborn:
                name = "stubborn"
                def reset(self):
                    pass
                def act(self, observation):
                    return 13  # 'discard' is illegal at the start of a turn

            class Crashing(Stubborn):
                def act(self, observation):
                    raise RuntimeError("boom")
            """
        )
    )
    env = {**ENV, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    out = play("--watch", "--delay", "0", "--bots", "mybots:Stubborn", "random", env=env)
    assert out.returncode == 1
    assert "bot player_0 (mybots:Stubborn) chose the illegal action 13" in out.stdout
    assert "legal actions are 10 (draw_pile), 11 (take_discard)" in out.stdout
    out = play("--bots", "mybots:Crashing", "--seat", "1", stdin="d\nx\n", env=env)
    assert out.returncode == 1 and "Traceback" not in out.stdout + out.stderr
    assert "bot player_0 (mybots:Crashing) failed: RuntimeError: boom" in out.stdout


@pytest.fixture(scope="module")
def onnx_bot(tmp_path_factory) -> Path:
    """An exported (untrained) 3-player bot file, as train/export.py writes them."""
    torch = pytest.importorskip("torch")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from racko_env.gym_env import RackoGymEnv
    from train.sb3.export import export_model

    torch.set_num_threads(1)
    env = RackoGymEnv(num_players=3, opponents=["random"])
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", env, policy_kwargs={"net_arch": [16]}, seed=0, device="cpu"
    )
    out = tmp_path_factory.mktemp("bot")
    onnx_path, _ = export_model(model, out, 3, {}, evaluation={}, check=10)
    return onnx_path


def test_an_exported_bot_file_takes_a_seat(onnx_bot):
    out = play(
        "--players", "3", "--bots", "expert", str(onnx_bot), "--rounds", "1", "--seed", "4",
        stdin=DRAW_AND_DISCARD,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "player_2 (bot.onnx)" in out.stdout and "Round 1 over" in out.stdout
    wrong = play("--players", "3", "--bots", "expert", str(onnx_bot), "--bonus")
    assert wrong.returncode == 2 and "trained for other rules options" in wrong.stderr


def test_the_search_bot_takes_a_seat_with_its_options():
    args = ("--watch", "--delay", "0", "--rounds", "1", "--seed", "3")
    out = play(*args, "--bots", "search:worlds=2,depth=1", "expert")
    assert out.returncode == 0, out.stderr
    assert "player_0 (search:worlds=2,depth=1)" in out.stdout and "Round 1 over" in out.stdout
    bad = play(*args, "--bots", "search:wolds=2", "expert")
    assert bad.returncode == 2 and "unknown search option 'wolds'" in bad.stderr


# ------------------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--players", "3", "--bots", "heuristic"], "--bots needs 2 spec(s) for --players 3"),
        (["--bots", "random", "random"], "--bots needs 1 spec(s) for --players 2"),
        (["--seat", "2"], "--seat must be a seat in 0..1"),
        (["--bots", "nosuch"], "unknown bot 'nosuch'"),
        (["--bots", "missing.onnx"], "bot file 'missing.onnx' does not exist"),
        (["--players", "5"], "--players must be between 1 and 4"),
        (["--players", "3", "--partners", "--bots", "random", "random"], "--partners needs"),
        (["--turn-limit", "0"], "--turn-limit must be at least 1"),
        (["--min-run", "2"], "--min-run must be 0 (off) or between 3 and 10"),
        (["--rounds", "0"], "--rounds must be at least 1"),
        (["--empty-pile", "sideways"], "invalid choice: 'sideways'"),
        (["--watch", "--players", "3", "--bots", "random"], "--watch needs one bot spec per seat"),
        (["--watch", "--delay", "-1"], "--delay must be 0 or more"),
        (["--hint", "heuristic", "--watch"], "--hint is for a human player"),
        (["--players", "two"], "invalid int value: 'two'"),
    ],
)
def test_bad_arguments_are_named(args, says):
    out = play(*args)
    assert out.returncode == 2
    assert says in out.stderr and "Traceback" not in out.stderr


def test_console_script_and_help():
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "racko"]
    assert script.value == "racko_apps.cli:main"
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from racko_apps.cli import main; raise SystemExit(main())",
            "play",
            "-h",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
        timeout=PATIENCE,
    )
    assert out.returncode == 0
    for flag in ("--players", "--bots", "--seat", "--rounds", "--hint", "--watch", "--delay",
                 "--seed", "--empty-pile", "--turn-limit", "--min-run", "--bonus", "--partners",
                 "--target-score"):  # fmt: skip
        assert flag in out.stdout


def test_racko_command_lists_subcommands_and_plays_by_default():
    from racko_apps.cli import SUBCOMMANDS, main

    assert "play" in SUBCOMMANDS
    assert main(["no-such-subcommand"]) == 2
    out = subprocess.run(
        [sys.executable, "-m", "racko_apps.cli", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
        timeout=PATIENCE,
    )
    assert out.returncode == 0 and "play" in out.stdout


# ------------------------------------------------------------------------- missing extras


@pytest.mark.parametrize(
    ("missing", "args", "says"),
    [
        ("rich", ["--bots", "heuristic"], "the terminal game needs rich"),
        ("onnxruntime", ["--bots", "agents/pretrained/racko_2p.onnx"], "needs onnxruntime"),
    ],
)
def test_a_missing_extra_is_one_line_with_the_install_command(missing, args, says):
    """As after a plain ``pip install -e .``: the module is made unimportable in the child."""
    extra = {"rich": "play", "onnxruntime": "bots"}[missing]
    code = (
        f"import sys; sys.modules[{missing!r}] = None\n"
        f"from racko_apps.play.cli import main; sys.exit(main({args!r}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
        timeout=PATIENCE,
    )
    assert out.returncode == 1 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("racko: ") and says in lines[0]
    assert f"pip install 'racko[{extra}]'" in lines[0]
    assert f'pip install -e ".[{extra}]"' in lines[0]
