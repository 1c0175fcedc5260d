"""Traces of Python games for the JS twin of the engine (``web/js``), and its generated layout.

``node --test web/test`` replays these traces and must reproduce, step by step, every seat's
observation and mask, the rewards, the scores and the episode ends. Deals and refills are in the
trace, so the JS engine need not reproduce Python's random streams.

    python -m racko_apps.play.web_traces --layout            # rewrite web/js/layout.js
    python -m racko_apps.play.web_traces --out traces.jsonl --episodes 2000 --seed 0
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.heuristic import HeuristicBot
from agents.onnx_bot import BotFileError, check_manifest, inputs_for
from agents.random_bot import RandomBot
from racko_env import observation as layout_module
from racko_env.config import option_table
from racko_env.files import write_text_atomic
from racko_env.racko_v1 import raw_env
from racko_eval.records import GameRecorder

ROOT = Path(__file__).resolve().parents[2]
LAYOUT_JS = ROOT / "web" / "js" / "layout.js"
RULES_JS = ROOT / "web" / "js" / "rules_options.js"
BOTS_DIR = ROOT / "agents" / "pretrained"
_DROP = object()
FULL_OBS_EPISODES = 5
MAX_STEPS = 50_000  # these episodes carry every observation in full (for readable failures)


def layout() -> dict[str, Any]:
    """The observation layout as data: each field (and ``card_scaled``) -> [start, stop)."""
    pieces = {f.name: [f.start, f.stop] for f in layout_module.LAYOUT}
    scaled = layout_module.CARD_SCALED
    pieces["card_scaled"] = [scaled.start, scaled.stop]
    return {
        "obs_version": layout_module.OBS_VERSION,
        "obs_size": layout_module.OBS_SIZE,
        "obs_sizes": {str(v): size for v, size in layout_module.OBS_SIZES.items()},
        "num_actions": layout_module.NUM_ACTIONS,
        "max_opponents": layout_module.MAX_OPPONENTS,
        "max_cards": layout_module.MAX_CARDS,
        "pieces": pieces,
    }


def _generated(source: str, name: str, data: Any) -> str:
    """A generated JS module exporting ``data`` as the frozen constant ``name``."""
    return (
        f"/**\n * Generated from {source} by "
        "`python -m racko_apps.play.web_traces --layout`; do not edit.\n */\n\n"
        f"export const {name} = Object.freeze({json.dumps(data, indent=2)});\n"
    )


def layout_js() -> str:
    """The text of web/js/layout.js (a test checks the file against this)."""
    return _generated("racko_env/observation.py", "LAYOUT", layout())


def rules_options_js() -> str:
    """The text of web/js/rules_options.js: every rules option as ``RulesConfig`` declares it."""
    return _generated("racko_env/config.py", "RULE_OPTIONS", option_table())


def seats_digest(env: raw_env) -> tuple[str, list[list[float]]]:
    """SHA-256 (16 hex digits) of every seat's float32 observation and int8 mask, in seat order."""
    h = hashlib.sha256()
    rows = []
    for agent in env.possible_agents:
        o = env.observe(agent)
        obs = np.asarray(o["observation"], dtype="<f4")
        h.update(obs.tobytes())
        h.update(np.asarray(o["action_mask"], dtype=np.int8).tobytes())
        rows.append(obs.tolist())
    return h.hexdigest()[:16], rows


def random_setup(rng: random.Random) -> dict[str, Any]:
    """One episode's rules, episode and reward modes and seat bots, covering every option."""
    n = rng.choice((2, 3, 4))
    bots = [
        "heuristic" if rng.random() < 0.5 else f"random:{rng.getrandbits(31)}" for _ in range(n)
    ]
    # Random seats rarely go Rack-O, so their rounds are cut short to keep the traces small.
    every_heuristic = all(b == "heuristic" for b in bots)
    rules: dict[str, Any] = {
        "num_players": n,
        "empty_pile": rng.choice(("shuffle", "flip")),
        "turn_limit": rng.choice((400, 60) if every_heuristic else (8, 15, 30, 45)),
        "bonus": rng.random() < 0.5,
    }
    # Two zone-filling heuristics under the run variant can fill their zones, never go Rack-O and
    # tie every round of a game forever, so the variant always has a random seat at the table.
    if n == 2 and not every_heuristic and rng.random() < 0.4:
        rules["min_run"] = rng.choice((3, 4, 5))
    if n == 4 and rng.random() < 0.5:
        rules["partners"] = True
    episode = "game" if rng.random() < 0.15 else "round"
    if episode == "game":
        rules["target_score"] = rng.choice((75, 120))
    return {
        "rules": rules,
        "episode": episode,
        "reward": rng.choice(("win", "score")),
        "bots": bots,
        "seed": rng.getrandbits(31),
    }


def play_episode(setup: dict[str, Any], full: bool) -> dict[str, Any]:
    """Play one episode with the setup's seat bots and record everything the JS replay checks."""
    rules = dict(setup["rules"])
    n = rules.pop("num_players")
    env = raw_env(num_players=n, episode=setup["episode"], reward=setup["reward"], **rules)
    env.reset(seed=setup["seed"])
    game = env.game
    bots = []
    for spec in setup["bots"]:
        if spec == "heuristic":
            bots.append(HeuristicBot(num_players=n))
        else:
            bots.append(RandomBot(num_players=n, seed=int(spec.split(":")[1])))
    recorder = GameRecorder(setup["episode"], [])  # the deals and refills, as a record has them
    recorder.start(game, setup["seed"])
    trace: dict[str, Any] = {
        **setup,
        **recorder.chance,
        "selection": env.agent_name_mapping[env.agent_selection],
    }
    digest, rows = seats_digest(env)
    trace["digests"] = [digest]
    if full:
        trace["obs"] = [rows]
    steps = []
    while True:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            break
        if len(steps) >= MAX_STEPS:
            raise RuntimeError(f"episode longer than {MAX_STEPS} steps: {setup}")
        seat = env.agent_name_mapping[agent]
        action = bots[seat].act(env.observe(agent))
        env.step(action)
        recorder.move(seat, action)
        digest, rows = seats_digest(env)
        trace["digests"].append(digest)
        if full:
            trace["obs"].append(rows)
        rewards = [env.rewards[a] for a in env.possible_agents]
        steps.append(
            {
                "action": int(action),
                "selection": env.agent_name_mapping[env.agent_selection],
                **({"rewards": rewards} if any(rewards) else {}),
            }
        )
    trace["steps"] = steps
    trace["terminated"] = bool(env.terminations[env.possible_agents[0]])
    trace["truncated"] = bool(env.truncations[env.possible_agents[0]])
    trace["scores"] = list(game.scores)
    trace["totals"] = list(game.totals)
    trace["rounds"] = game.round_number
    trace["last_round_points"] = list(game.last_round_points)
    return trace


def manifest_cases() -> list[dict[str, Any]]:
    """Good and bad manifests with ``check_manifest``'s message (or None), for the JS twin."""
    good = json.loads((BOTS_DIR / "racko_2p.json").read_text())
    variants: list[tuple[dict[str, Any], int, dict[str, Any]]] = [(good, 2, {})]

    def changed(**edits: Any) -> dict[str, Any]:
        m = json.loads(json.dumps(good))
        for key, value in edits.items():
            if value is _DROP:
                m.pop(key, None)
            else:
                m[key] = value
        return m

    def rules(**edits: Any) -> dict[str, Any]:
        return changed(rules={**good["rules"], **edits})

    variants += [
        (good, 3, {}),
        (good, 4, {}),
        (good, 2, {"bonus": True}),
        (good, 2, {"empty_pile": "flip", "turn_limit": 100}),
        (good, 2, {"min_run": 3}),
        (good, 2, {"target_score": 300}),
        (changed(format_version=2), 2, {}),
        (changed(format_version=_DROP), 2, {}),
        (changed(format_version="1"), 2, {}),
        (changed(observation_version=2), 2, {}),
        (changed(observation_version=3), 2, {}),
        (changed(observation_version=True), 2, {}),
        (changed(observation_version=None), 2, {}),
        (changed(observation_size=176), 2, {}),
        (
            changed(
                observation_version=2,
                observation_size=layout_module.OBS_SIZES[2],
                inputs=inputs_for(2),
            ),
            2,
            {},
        ),
        (changed(num_players=3), 2, {}),
        (changed(num_players="2"), 2, {}),
        (changed(rules={}), 2, {}),
        (changed(rules=_DROP), 2, {}),
        (rules(bonus=1), 2, {}),
        (rules(empty_pile="burn"), 2, {}),
        (rules(turn_limit=0), 2, {}),
        (rules(turn_limit="400"), 2, {}),
        (rules(min_run=2), 2, {}),
        (rules(partners=True), 2, {}),
        (rules(colour="red"), 2, {}),
        (rules(min_run=4), 2, {"min_run": 4}),
        (rules(partners=True), 4, {"partners": True}),
        (rules(num_players=3), 2, {}),
    ]
    cases = []
    for manifest, n, asked in variants:
        try:
            check_manifest(manifest, "bot.onnx", n, asked)
            error = None
        except BotFileError as exc:
            error = str(exc)
        cases.append({"manifest": manifest, "num_players": n, "rules": asked, "error": error})
    return cases


def write_traces(path: Path, episodes: int, seed: int) -> int:
    """Write a header line (the layout) and one JSON line per episode; returns the step count."""
    rng = random.Random(seed)
    mt = random.Random(seed + 12345)
    deck = list(range(1, 61))
    mt.shuffle(deck)  # the page deals with a JS twin of this shuffle (web/js/mt19937.js)
    header = {
        "layout": layout(),
        "episodes": episodes,
        "seed": seed,
        "mt": {
            "seed": seed + 12345,
            "shuffle": deck,
            "bits": [mt.getrandbits(32) for _ in range(5)],
        },
    }
    lines = [json.dumps(header)]
    total = 0
    for i in range(episodes):
        trace = play_episode(random_setup(rng), full=i < FULL_OBS_EPISODES)
        total += len(trace["steps"])
        lines.append(json.dumps(trace, separators=(",", ":")))
    write_text_atomic(path, "\n".join(lines) + "\n")
    return total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m racko_apps.play.web_traces", description=__doc__
    )
    parser.add_argument(
        "--layout", action="store_true", help="rewrite web/js/layout.js and rules_options.js"
    )
    parser.add_argument("--out", type=Path, help="write traces (JSON lines) here")
    parser.add_argument("--manifest-cases", type=Path, help="write manifest check cases here")
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not args.layout and args.out is None and args.manifest_cases is None:
        parser.error("give --layout, --out PATH and/or --manifest-cases PATH")
    if args.episodes < 1:
        parser.error(f"--episodes must be at least 1, got {args.episodes}")
    if args.layout:
        for path, text in ((LAYOUT_JS, layout_js()), (RULES_JS, rules_options_js())):
            write_text_atomic(path, text)
            print(f"wrote {path}")
    if args.out is not None:
        steps = write_traces(args.out, args.episodes, args.seed)
        print(f"wrote {args.episodes} episodes ({steps} steps) to {args.out}")
    if args.manifest_cases is not None:
        write_text_atomic(args.manifest_cases, json.dumps(manifest_cases(), indent=1))
        print(f"wrote manifest cases to {args.manifest_cases}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
