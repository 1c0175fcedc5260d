"""The browser game's JS twins against Python, and the ``racko web`` server.

``node --test`` replays Python traces (racko_apps/play/web_traces.py) through the JS engine,
observation encoder, env rewards and built-in bots, and checks the JS manifest check against
agents/onnx_bot.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from racko_apps.play import web
from racko_apps.play.web_traces import (
    LAYOUT_JS,
    RULES_JS,
    layout_js,
    rules_options_js,
    write_traces,
)
from racko_env.config import SMALL_GAME_BOTS, RulesConfig, require_rule_book_sizes

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


def test_layout_js_is_generated_from_the_python_layout() -> None:
    assert LAYOUT_JS.read_text() == layout_js(), (
        "web/js/layout.js is stale: run python -m racko_apps.play.web_traces --layout"
    )


def test_rules_options_js_is_generated_from_rules_config() -> None:
    assert RULES_JS.read_text() == rules_options_js(), (
        "web/js/rules_options.js is stale: run python -m racko_apps.play.web_traces --layout"
    )


RULES_CASES = [
    {},
    {"num_players": 4, "partners": True, "bonus": True, "empty_pile": "flip"},
    {"num_players": 5},
    {"num_players": "3"},
    {"turn_limit": 0},
    {"turn_limit": 2.5},
    {"num_players": 3, "partners": True},
    {"partners": "yes"},
    {"num_players": 3, "min_run": 3},
    {"min_run": 2},
    {"min_run": 11},
    {"empty_pile": "burn"},
    {"empty_pile": None},
    {"bonus": 1},
    {"target_score": 0},
    {"partner_mode": True},
    {"num_players": 1, "rack_size": 3, "deck_size": 8},
    {"num_players": 3, "rack_size": 6, "deck_size": 19},
    {"rack_size": 4, "min_run": 5},
    {"rack_size": 2},
    {"deck_size": 61},
    {"num_players": 0},
]


def _python_rules(options: dict) -> str:
    try:
        return json.dumps(RulesConfig.from_dict(options).to_dict(), sort_keys=True)
    except (TypeError, ValueError) as exc:
        return f"error: {exc}"


def test_js_rules_config_accepts_and_refuses_as_python_does(require) -> None:
    """The web page's options are checked from the same declaration, with the same words."""
    require(NODE is not None, "Node.js", "install Node.js (https://nodejs.org) and npm")
    script = (
        'import { RulesConfig } from "./web/js/config.js";\n'
        f"const cases = {json.dumps(RULES_CASES)};\n"
        "const sortKeys = (o) => Object.fromEntries(Object.entries(o).sort());\n"
        "for (const c of cases) {\n"
        "  try { console.log(JSON.stringify(sortKeys(new RulesConfig(c).toDict()))); }\n"
        '  catch (e) { console.log("error: " + e.message); }\n'
        "}\n"
    )
    run = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    js = [
        json.dumps(json.loads(line), sort_keys=True) if line.startswith("{") else line
        for line in run.stdout.splitlines()
    ]
    assert js == [_python_rules(c) for c in RULES_CASES]


def test_js_page_refuses_other_sizes_in_one_line(require) -> None:
    """The page's JS engine plays the rule book's sizes: other sizes are refused with the words
    of ``racko_env.config.require_rule_book_sizes``."""
    require(NODE is not None, "Node.js", "install Node.js (https://nodejs.org) and npm")
    cases = [
        {"num_players": 2, "rack_size": 5, "deck_size": 20},
        {"num_players": 2, "deck_size": 30},
        {"num_players": 1},
        {"num_players": 3},
    ]
    script = (
        'import { RulesConfig, SMALL_GAME_BOTS, requireRuleBookSizes } from "./web/js/config.js";\n'
        f"for (const c of {json.dumps(cases)}) {{\n"
        '  try { requireRuleBookSizes(new RulesConfig(c), "the web page (its JS engine)", '
        'SMALL_GAME_BOTS); console.log("ok"); }\n'
        '  catch (e) { console.log("error: " + e.message); }\n'
        "}\n"
    )
    run = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    expected = []
    for c in cases:
        try:
            require_rule_book_sizes(
                RulesConfig(**c), "the web page (its JS engine)", SMALL_GAME_BOTS
            )
            expected.append("ok")
        except ValueError as exc:
            expected.append(f"error: {exc}")
    assert run.stdout.splitlines() == expected
    assert expected[0].startswith("error: rack_size=5: the web page (its JS engine) supports")
    assert expected[1].startswith("error: deck_size=30:") and expected[2].startswith(
        "error: num_players=1:"
    )


@pytest.mark.slow  # 2,000 Python episodes replayed by the JS twins
def test_js_twins_replay_python_traces_and_manifest_checks(tmp_path: Path, require) -> None:
    require(NODE is not None, "Node.js", "install Node.js (https://nodejs.org) and npm")
    traces = tmp_path / "traces.jsonl"
    steps = write_traces(traces, episodes=2000, seed=0)
    assert steps > 50_000
    cases = tmp_path / "manifests.json"
    from racko_apps.play.web_traces import main

    assert main(["--manifest-cases", str(cases)]) == 0
    env = {**os.environ, "RACKO_WEB_TRACES": str(traces), "RACKO_MANIFEST_CASES": str(cases)}
    tests = sorted(str(p) for p in (ROOT / "web" / "test").glob("*.test.js"))
    assert len(tests) >= 2
    run = subprocess.run(
        [NODE, "--test", *tests], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "# fail 0" in run.stdout


@pytest.mark.parametrize(
    "path",
    [
        "/../pyproject.toml",
        "/%2e%2e/pyproject.toml",
        "/js/../../pyproject.toml",
        "/js/%2e%2e/%2e%2e/pyproject.toml",
        "/node_modules/onnxruntime-web/package.json",
        "/package.json",
        "/test/engine.test.js",
        "/bots/racko_2p.yaml",
        "/bots/../../pyproject.toml",
        "/vendor/ort/../../package.json",
        "/vendor/ort/ort.node.min.mjs",
        "//etc/passwd",
    ],
)
def test_server_refuses_paths_outside_what_it_serves(path: str) -> None:
    assert web.resolve(path) is None


def test_server_serves_the_page_bots_and_onnxruntime() -> None:
    assert web.resolve("/") == web.WEB_DIR / "index.html"
    assert web.resolve("/js/app.js") == (web.WEB_DIR / "js" / "app.js").resolve()
    assert web.resolve("/bots/racko_3p.onnx") == web.BOTS_DIR / "racko_3p.onnx"
    assert web.resolve("/vendor/ort/ort-wasm-simd-threaded.wasm") == (
        web.ort_dir() / "ort-wasm-simd-threaded.wasm"
    )


def test_server_without_onnxruntime_web_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(web, "ort_dir", lambda: tmp_path)
    assert web.main(["--port", "0"]) == 1
    err = capsys.readouterr().err
    assert "onnxruntime-web is not here" in err and "racko web --fetch-ort" in err
    assert "npm ci --prefix web" in err and err.count("\n") == 1
    assert "Traceback" not in err


def test_bad_port_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert web.main(["--port", "70000"]) == 2
    assert "--port must be 0..65535" in capsys.readouterr().err


def test_racko_web_prints_its_address_and_serves_only_its_files(require) -> None:
    have = (web.ort_dir() / web.ORT_FILES[0]).is_file()
    require(have, "onnxruntime-web", "npm ci --prefix web (or racko web --fetch-ort)")
    proc = subprocess.Popen(
        [sys.executable, "-m", "racko_apps.cli", "web", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # stopped by SIGTERM: at its default, whatever a caller (nohup, a CI runner) ignores
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL),
    )
    try:
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, line + proc.stderr.read()
        base = line.split("http://", 1)[1].split("/", 1)[0]
        with urllib.request.urlopen(f"http://{base}/", timeout=30) as resp:
            assert b"Rack-O" in resp.read()
        with urllib.request.urlopen(f"http://{base}/bots/racko_2p.json", timeout=30) as resp:
            assert b'"racko-bot"' in resp.read()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://{base}/%2e%2e/pyproject.toml", timeout=30)
        assert err.value.code == 404
    finally:
        proc.terminate()
        proc.wait(timeout=30)
