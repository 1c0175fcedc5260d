"""Milliseconds per bot decision in the browser (onnxruntime-web, wasm, one thread) vs Python.

The same recorded observations (seats met in random play of ``racko_v0`` in game mode, as the page
encodes them) are played one decision at a time by the shipped bots: in headless Debian Chromium
through the page's own ``web/js/onnx_bot.js`` (served by ``racko web``), and in Python by
``agents.onnx_bot`` (onnxruntime, one thread). Both sides must choose the same actions; the table
shows the median over the repeats.

    python -m benchmarks.web_bot_speed                      # 2, 3 and 4 players
    python -m benchmarks.web_bot_speed --players 2 --decisions 200 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.onnx_bot import load_onnx_bot
from racko_env.racko_v0 import raw_env

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"

IN_PAGE = """
async ([players, obs, masks, repeats]) => {
  const { loadOnnxBot } = await import('/js/onnx_bot.js');
  const get = async (ext) => (await fetch(`/bots/racko_${players}p.${ext}`));
  const bot = await loadOnnxBot({
    onnxBytes: await (await get('onnx')).arrayBuffer(),
    manifestText: await (await get('json')).text(),
    source: `racko_${players}p.onnx`, numPlayers: players, rules: {},
  });
  await bot.act(obs[0], masks[0]);  // warm-up
  const times = [];
  let actions = [];
  for (let r = 0; r < repeats; r++) {
    actions = [];
    const t0 = performance.now();
    for (let i = 0; i < obs.length; i++) actions.push(await bot.act(obs[i], masks[i]));
    times.push((performance.now() - t0) / obs.length);
  }
  return { times, actions };
}
"""


def sample(players: int, decisions: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the seats on turn in random play (game mode, scores included)."""
    rng = random.Random(seed)
    env = raw_env(num_players=players, episode="game")
    env.reset(seed=seed)
    obs, masks = [], []
    while len(obs) < decisions:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.reset(seed=rng.getrandbits(31))
            continue
        o = env.observe(agent)
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        env.step(rng.choice(np.flatnonzero(o["action_mask"]).tolist()))
    return np.array(obs, dtype=np.float32), np.array(masks, dtype=np.int8)


def python_ms(players: int, obs: np.ndarray, masks: np.ndarray, repeats: int) -> tuple:
    bot = load_onnx_bot(REPO / "agents" / "pretrained" / f"racko_{players}p.onnx", players)
    bot.act({"observation": obs[0], "action_mask": masks[0]})
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        actions = [
            bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)
        ]
        times.append((time.perf_counter() - t0) * 1000 / len(obs))
    return times, actions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"web_bot_speed: {CHROMIUM} not found (apt-get install -y chromium)", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    server = subprocess.Popen(
        [sys.executable, "-m", "racko_apps.web", "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = server.stdout.readline()
    if "http://" not in line:
        server.terminate()
        print(f"web_bot_speed: racko web did not start: {line}", file=sys.stderr)
        return 1
    url = "http://" + line.split("http://", 1)[1].split()[0]
    rows: list[dict[str, Any]] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(url)
            for players in args.players:
                obs, masks = sample(players, args.decisions, seed=players)
                result = page.evaluate(
                    IN_PAGE, [players, obs.tolist(), masks.tolist(), args.repeats]
                )
                py_times, py_actions = python_ms(players, obs, masks, args.repeats)
                agree = sum(a == b for a, b in zip(result["actions"], py_actions, strict=True))
                rows.append(
                    {
                        "bot": f"racko_{players}p.onnx",
                        "decisions": len(obs),
                        "browser_ms": round(statistics.median(result["times"]), 3),
                        "python_ms": round(statistics.median(py_times), 3),
                        "same_action": f"{agree}/{len(obs)}",
                    }
                )
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"{'bot':<16}{'decisions':>10}{'browser ms':>12}{'python ms':>11}{'same action':>13}")
    for r in rows:
        print(
            f"{r['bot']:<16}{r['decisions']:>10}{r['browser_ms']:>12.3f}"
            f"{r['python_ms']:>11.3f}{r['same_action']:>13}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
