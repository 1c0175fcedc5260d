"""The hint a person reads: the bot's move with its probability over the legal moves (softmax of
the masked logits), the same in the terminal (racko_apps/play/hint.py) and the page
(web/js/hint.js)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import agents
from racko_apps.play.hint import bot_probabilities, legal_probabilities, percent, ranked
from racko_env import racko_v1

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


def cases() -> list[dict]:
    """Logits as the graph gives them (float32, masked ones very negative) and odd extremes."""
    rng = np.random.default_rng(0)
    out = []
    for k in range(300):
        mask = (rng.random(14) < rng.uniform(0.1, 0.9)).astype(int)
        mask[rng.integers(14)] = 1
        scale = [0.01, 1.0, 10.0, 300.0][k % 4]
        logits = (rng.normal(size=14) * scale).astype(np.float32)
        logits[mask == 0] = np.float32(-3.4e38) if k % 3 else np.float32(-1e9)
        if k % 7 == 0:
            logits[mask == 1] = np.float32(-9.3)  # all equal
        out.append({"logits": [float(x) for x in logits], "mask": mask.tolist()})
    return out


def test_probabilities_are_a_softmax_over_the_legal_moves():
    p = legal_probabilities([2.0, 0.0, -1e30, math.log(3.0)], [1, 1, 0, 1])
    assert list(p) == [0, 1, 3]  # the illegal move gets no probability, whatever its logit
    assert p[0] == pytest.approx(math.e**2 / (math.e**2 + 1 + 3))
    assert sum(p.values()) == pytest.approx(1.0)
    assert ranked(p, top=2) == [(0, p[0]), (3, p[3])]
    assert [percent(x) for x in (0.0, 0.001, 0.534, 0.999, 1.0)] == [
        "0%",
        "<1%",
        "53%",
        ">99%",
        "100%",
    ]
    with pytest.raises(ValueError):
        legal_probabilities([1.0], [0])


def test_the_js_twin_gives_the_same_probabilities_and_words(tmp_path, require):
    require(NODE is not None, "Node.js", "install Node.js (https://nodejs.org)")
    data = cases()
    (tmp_path / "cases.json").write_text(json.dumps(data))
    script = tmp_path / "run.mjs"
    script.write_text(
        f"import {{ readFileSync }} from 'node:fs';\n"
        f"import {{ hintProbabilities, percent, rankedMoves }} from "
        f"{json.dumps((ROOT / 'web' / 'js' / 'hint.js').as_uri())};\n"
        f"const cases = JSON.parse(readFileSync({json.dumps(str(tmp_path / 'cases.json'))}));\n"
        "const out = cases.map(({ logits, mask }) => {\n"
        "  const p = hintProbabilities(logits, mask);\n"
        "  return { p: [...p.entries()], top: rankedMoves(p).map(([a, q]) => [a, percent(q)]) };\n"
        "});\n"
        "console.log(JSON.stringify(out));\n"
    )
    run = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    js = json.loads(run.stdout)
    for case, got in zip(data, js, strict=True):
        want = legal_probabilities(case["logits"], case["mask"])
        assert [a for a, _ in got["p"]] == list(want)
        for a, q in got["p"]:
            assert q == pytest.approx(want[a], rel=1e-12, abs=1e-300)
        assert got["top"] == [[a, percent(q)] for a, q in ranked(want)]


def test_a_trained_bots_odds_back_its_move():
    bot = agents.load("racko_2p", num_players=2)
    env = racko_v1.env(num_players=2)
    env.reset(seed=3)
    for _ in env.agent_iter(max_iter=60):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        p = bot_probabilities(bot, obs)
        assert set(p) == set(np.flatnonzero(obs["action_mask"]).tolist())
        assert sum(p.values()) == pytest.approx(1.0)
        action = bot.act(obs)
        assert p[action] == max(p.values())  # the masked argmax is the likeliest move
        env.step(action)
    assert bot_probabilities(agents.load("heuristic"), obs) is None  # no logits: no odds
