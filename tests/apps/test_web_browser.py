"""The browser game in a real Chromium (Playwright): whole rounds played by clicking, bad bot files.

The bots' moves in the page must equal Python onnxruntime's on the same observations. Screenshots
of the table and of the round-end reveal go to test-artifacts/web/ (git-ignored). CI installs
Debian's chromium (README test command); these tests skip only where /usr/bin/chromium is absent.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from racko_apps.play import web

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts" / "web"
BOTS = ROOT / "agents" / "pretrained"
WAIT_MS = 120_000  # generous: the machine may be loaded; every wait is for an event


@pytest.fixture(autouse=True, scope="module")
def _needs_chromium_and_onnxruntime_web(require, hidden) -> None:
    """Skip (naming the commands that enable these tests), or fail in CI (RACKO_REQUIRE_ALL=1)."""
    have_chromium = CHROMIUM.exists() and not hidden("chromium")
    require(have_chromium, "Chromium at /usr/bin/chromium", "apt-get install chromium")
    have = (web.ort_dir() / web.ORT_FILES[0]).is_file()
    require(have, "onnxruntime-web", "npm ci --prefix web")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "racko_apps.cli", "web", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # stopped by SIGTERM: at its default, whatever a caller (nohup, a CI runner) ignores
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL),
    )
    line = proc.stdout.readline()
    assert "http://127.0.0.1:" in line, line + proc.stderr.read()
    yield "http://" + line.split("http://", 1)[1].split()[0].rstrip("/")
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    page = browser.new_page(viewport={"width": 1200, "height": 900})  # type: ignore[attr-defined]
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    page.close()
    assert not errors, f"uncaught errors in the page: {errors}"


WAIT_FOR_PERSON = (
    "window.racko.ready || !document.getElementById('reveal').hidden"
    " || !document.getElementById('message').hidden"
)
BUTTON_FOR = {10: "#draw-pile", 11: "#discard-pile", 12: "#keep", 13: "#discard"}


def play_round(page: object, screenshot: Path | None) -> int:
    """Play seat 0 by clicking whatever the hint suggests until the round-end reveal; clicks made."""
    clicks = 0
    while True:
        page.wait_for_function(WAIT_FOR_PERSON, timeout=WAIT_MS)
        assert page.locator("#message").is_hidden(), page.text_content("#message")
        if page.locator("#reveal").is_visible():
            return clicks
        page.evaluate("delete document.getElementById('hint-text').dataset.action")
        page.click("#hint")
        page.wait_for_function(
            "document.getElementById('hint-text').dataset.action !== undefined", timeout=WAIT_MS
        )
        action = int(page.get_attribute("#hint-text", "data-action"))
        if screenshot is not None and clicks == 6:
            page.screenshot(path=str(screenshot))
        selector = BUTTON_FOR.get(action, f"#my-rack button[data-slot='{action}']")
        page.click(selector)
        clicks += 1
        assert clicks < 3000, "the round does not end"


def start(page: object, server: str, players: int, seed: int) -> None:
    page.goto(f"{server}/?fast=1&seed={seed}")
    page.select_option("#num-players", str(players))
    page.click("#start")


def check_bot_moves_match_python(page: object, players: int) -> int:
    from agents.onnx_bot import load_onnx_bot

    decisions = page.evaluate("window.racko.decisions")
    assert decisions, "no ONNX bot decision was recorded"
    bot = load_onnx_bot(BOTS / f"racko_{players}p.onnx", num_players=players)
    obs = np.array([d["observation"] for d in decisions], dtype=np.float32)
    masks = np.array([d["mask"] for d in decisions], dtype=np.int8)
    python_actions = bot.act_batch(obs, masks)
    browser_actions = np.array([d["action"] for d in decisions])
    assert (python_actions == browser_actions).all()
    feeds = {"observation": bot.graph_inputs(obs), "action_mask": masks > 0}
    logits = bot.session.run(["masked_logits"], feeds)[0]
    legal = masks > 0
    hints = page.evaluate("window.racko.hints")
    assert hints, "no hint was recorded"
    hint_obs = np.array([h["observation"] for h in hints], dtype=np.float32)
    hint_masks = np.array([h["mask"] for h in hints], dtype=np.int8)
    assert (bot.act_batch(hint_obs, hint_masks) == [h["action"] for h in hints]).all()
    # the hint a person reads: the bot's odds over the legal moves, as Python computes them
    from racko_apps.play.hint import legal_probabilities, percent, ranked

    hint_logits = bot.session.run(
        ["masked_logits"],
        {"observation": bot.graph_inputs(hint_obs), "action_mask": hint_masks > 0},
    )[0]
    for h, row, mask in zip(hints, hint_logits, hint_masks, strict=True):
        want = ranked(legal_probabilities(row.tolist(), mask.tolist()))
        assert [a for a, _ in h["odds"]] == [a for a, _ in want] or len(want) > 1
        for (_, got), (_, p) in zip(h["odds"], want, strict=True):
            assert abs(got - p) < 1e-3
        assert "odds: " in h["text"] and f"{percent(h['odds'][0][1])}" in h["text"]
        assert "logit" not in h["text"]
    np.testing.assert_allclose(
        np.array([d["logits"] for d in decisions])[legal], logits[legal], rtol=1e-4, atol=1e-4
    )
    return len(decisions)


@pytest.mark.slow  # whole rounds in the browser; the quick subset keeps the page's cheaper checks
@pytest.mark.parametrize("players", [2, 3])
def test_person_plays_whole_rounds_against_the_shipped_bot(
    page: object, server: str, players: int
) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    start(page, server, players, seed=players)
    rounds = 2 if players == 2 else 1
    for r in range(rounds):
        shot = ARTIFACTS / f"table_{players}p.png" if r == 0 else None
        assert play_round(page, shot) > 0
        reveal = page.locator("#reveal")
        assert reveal.is_visible()
        # Every rack is revealed, ten cards each, with its score explained.
        seats = page.locator("#reveal-racks .reveal-seat")
        assert seats.count() == players
        for i in range(players):
            assert seats.nth(i).locator(".card").count() == 10
            assert "points" in seats.nth(i).locator(".explain").text_content()
        page.screenshot(path=str(ARTIFACTS / f"reveal_{players}p_round{r + 1}.png"), full_page=True)
        if r + 1 < rounds and page.locator("#next-round").is_visible():
            page.click("#next-round")
    assert check_bot_moves_match_python(page, players) >= 5
    assert (ARTIFACTS / f"table_{players}p.png").is_file()


def test_opponent_racks_stay_hidden_during_the_round(page: object, server: str) -> None:
    start(page, server, 2, seed=11)
    page.wait_for_function(WAIT_FOR_PERSON, timeout=WAIT_MS)
    backs = page.locator("#opponents .opponent .card.back").count()
    known = page.locator("#opponents .opponent .card:not(.back)").count()
    assert backs + known == 10 and backs >= 9  # at most one card seen taken from the discard


def open_bot_files(page: object, server: str, files: list[Path], players: int = 2) -> str:
    page.goto(f"{server}/?fast=1&seed=1")
    page.select_option("#num-players", str(players))
    page.set_input_files("#bot-files", [str(f) for f in files])
    page.select_option("#seat-1", "file")
    page.click("#start")
    page.wait_for_selector("#message:not([hidden])", timeout=WAIT_MS)
    assert page.locator("#table").is_hidden(), "a game started with a refused bot"
    return page.text_content("#message")


def test_bot_file_for_another_player_count_is_refused_on_the_page(
    page: object, server: str
) -> None:
    message = open_bot_files(page, server, [BOTS / "racko_4p.onnx", BOTS / "racko_4p.json"])
    assert "racko_4p.onnx: trained for 4 players, asked to play with 2" in message


def test_corrupt_bot_onnx_is_refused_on_the_page(page: object, server: str, tmp_path: Path) -> None:
    manifest = json.loads((BOTS / "racko_2p.json").read_text())
    (tmp_path / "bot.onnx").write_bytes(b"this is not an onnx graph" * 40)
    (tmp_path / "bot.json").write_text(json.dumps(manifest))
    files = [tmp_path / "bot.onnx", tmp_path / "bot.json"]
    assert "does not match its manifest's onnx_sha256 (corrupt?)" in open_bot_files(
        page, server, files
    )
    del manifest["onnx_sha256"]  # no digest to catch it: onnxruntime-web itself must refuse it
    (tmp_path / "bot.json").write_text(json.dumps(manifest))
    assert "bot.onnx: onnxruntime cannot load it" in open_bot_files(page, server, files)


def test_a_file_that_is_not_a_bot_is_refused_on_the_page(
    page: object, server: str, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    page.goto(f"{server}/?fast=1")
    page.set_input_files("#bot-files", [str(tmp_path / "notes.txt")])
    page.wait_for_selector("#message:not([hidden])", timeout=WAIT_MS)
    assert "notes.txt is neither a .onnx bot file nor its .json manifest" in page.text_content(
        "#message"
    )


@pytest.mark.slow  # whole rounds by the heuristic under other rules
def test_shipped_bot_refuses_other_rules_and_the_heuristic_plays_them(
    page: object, server: str
) -> None:
    page.goto(f"{server}/?fast=1&seed=5")
    page.check("#bonus")
    page.click("#start")
    page.wait_for_selector("#message:not([hidden])", timeout=WAIT_MS)
    assert "trained for other rules options (bonus: trained False, asked True)" in (
        page.text_content("#message")
    )
    page.select_option("#seat-1", "heuristic")
    page.click("#start")
    assert play_round(page, None) > 0


def illegal_bot(tmp_path: Path) -> list[Path]:
    """A well-formed 2-player bot whose graph answers the first action its mask forbids."""
    import hashlib

    from onnx import TensorProto, helper

    manifest = json.loads((BOTS / "racko_2p.json").read_text())
    width = manifest["observation_size"]

    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["action_mask"], ["mask_f"], to=TensorProto.FLOAT),
            helper.make_node("ArgMin", ["mask_f"], ["action"], axis=1, keepdims=0),
            helper.make_node("Identity", ["mask_f"], ["masked_logits"]),
        ],
        "illegal",
        [
            helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", width]),
            helper.make_tensor_value_info("action_mask", TensorProto.BOOL, ["batch", 14]),
        ],
        [
            helper.make_tensor_value_info("action", TensorProto.INT64, ["batch"]),
            helper.make_tensor_value_info("masked_logits", TensorProto.FLOAT, ["batch", 14]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = model.SerializeToString()
    manifest["onnx_sha256"] = hashlib.sha256(data).hexdigest()
    (tmp_path / "illegal.onnx").write_bytes(data)
    (tmp_path / "illegal.json").write_text(json.dumps(manifest))
    return [tmp_path / "illegal.onnx", tmp_path / "illegal.json"]


def test_a_bot_returning_an_illegal_action_pauses_the_game_with_a_message(
    page: object, server: str, tmp_path: Path
) -> None:
    page.goto(f"{server}/?fast=1&seed=2")
    page.set_input_files("#bot-files", [str(f) for f in illegal_bot(tmp_path)])
    page.select_option("#seat-1", "file")
    page.click("#start")
    # Whoever starts, the bot's first move is illegal: if the person starts, play their turn.
    page.wait_for_function(WAIT_FOR_PERSON, timeout=WAIT_MS)
    if page.locator("#message").is_hidden():
        page.click("#draw-pile")
        page.click("#discard")
    page.wait_for_selector("#message:not([hidden])", timeout=WAIT_MS)
    message = page.text_content("#message")
    assert "illegal returned action 0, which is not legal now" in message
    assert "the move was not played" in message
    assert "The game is paused" in message
    # The refused move left the game as it was: the bot is still to play its draw decision.
    assert page.locator("#draw-pile").is_disabled() and page.locator("#hint").is_disabled()


@pytest.mark.slow  # games to the end under each rules option; tests/apps/test_web_traces.py holds the JS engine equal to Python
@pytest.mark.parametrize(
    ("players", "options", "bot"),
    [
        (
            4,
            {"#partners": True, "#bonus": True, "#empty-pile": "flip", "#target-score": "60"},
            "heuristic",
        ),
        # Two zone-filling heuristics under the run variant can tie every round forever: random.
        (2, {"#min-run": "3", "#turn-limit": "60", "#target-score": "40"}, "random"),
    ],
)
def test_rules_options_play_to_the_end_of_a_game(
    page: object, server: str, players: int, options: dict[str, object], bot: str
) -> None:
    page.goto(f"{server}/?fast=1&seed=9")
    page.select_option("#num-players", str(players))
    for selector, value in options.items():
        if value is True:
            page.check(selector)
        elif selector.startswith("#empty") or selector.startswith("#min"):
            page.select_option(selector, str(value))
        else:
            page.fill(selector, str(value))
    for seat in range(1, players):
        page.select_option(f"#seat-{seat}", bot)
    page.click("#start")
    for _ in range(20):
        play_round(page, None)
        if page.locator("#next-round").is_hidden():
            break
        page.click("#next-round")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"game_over_{players}p.png"), full_page=True)
    title = page.text_content("#reveal-title")
    assert "Game over" in title, title
    if players == 4:
        assert "Partners add their points" in page.text_content("#reveal-racks")


def test_the_page_replays_a_record_forward_and_back(page: object, server: str, tmp_path: Path):
    """Open a record (3 players, a game): every rack of every step is the Python replay's."""
    from test_records import play_recorded

    from racko_eval.records import replay_states

    path, _ = play_recorded(
        tmp_path, "game", ["heuristic", "expert", "random"], "game", {"target_score": 120}, 3
    )
    states = replay_states(json.loads(path.read_text()))
    page.goto(f"{server}/?fast=1")
    page.set_input_files("#record-file", str(path))
    page.wait_for_selector("#replay:not([hidden])", timeout=WAIT_MS)
    assert page.locator("#setup").is_hidden()

    def shown_racks() -> list[list[int]]:
        return page.evaluate(
            "[...document.querySelectorAll('#replay-racks .replay-seat')].map((seat) =>"
            " [...seat.querySelectorAll('.card')].map((c) => Number(c.textContent)))"
        )

    assert shown_racks() == states[0]["racks"]
    for _ in range(5):
        page.click("#replay-next")
    page.click("#replay-back")
    assert page.get_attribute("body", "data-replay-step") == "4"
    assert shown_racks() == states[4]["racks"]
    assert page.text_content("#replay-why").startswith("Why: ")  # the heuristic's explanation
    page.keyboard.press("End")
    last = len(states) - 1
    assert page.get_attribute("body", "data-replay-step") == str(last)
    assert shown_racks() == states[last]["racks"]
    assert "End of record" in page.text_content("#replay-status")
    assert page.locator("#replay-next").is_disabled()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "replay_end.png"), full_page=True)
    page.click("#replay-close")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "racko-record/9"}')
    page.set_input_files("#record-file", str(bad))
    page.wait_for_selector("#message:not([hidden])", timeout=WAIT_MS)
    assert "racko-record/9" in page.text_content("#message")
    assert page.locator("#replay").is_hidden()
