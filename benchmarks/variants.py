"""The main job on the game's variants, checked against the exact optimum where one exists;
writes ``docs/results/variants.json``.

    python -m benchmarks.variants                  # every part (about 30 minutes on 2 cores)
    python -m benchmarks.variants --only k4n10     # one part (repeat --only for more)
    python -m benchmarks.variants --only k4n10 --ablation   # and the recipe's tuning table

Each part trains the main job (``python train/ppo.py --config ...``, a shipped config) in a
child process, timed (wall and CPU seconds, the machine's load average), then measures its bot:

- ``k3n8``, ``k4n10``, ``k4n11``: solitaire with racks of 3 or 4 (``configs/solitaire_k4.yaml``,
  its deck set to the size): the bot's exact expected turns (``racko_env.solitaire.evaluate``
  of its action at every state), the optimum (``solve``), the gap in %, and ``expert``'s gap.
  Where the gap is above the target (1%), why: the gap left when the solver's action replaces
  the bot's in one of the turn's three decisions (draw, keep or discard, place), each measured
  exactly, and, for k=4, N=10, the learning curve of the exact gap along the run.
- ``full``: full-size solitaire (``configs/solitaire.yaml``, k=10, N=40), no solve: the bot's
  mean turns over 1,000 deals with a 95% interval, beside ``expert`` and ``heuristic`` on the
  same deals (env seeds 0..999, ``racko_env.solitaire_env.play_turns``), and the learning
  curve of its mean turns along the run.
- ``2p_k5``: 2 players with racks of 5 and the cards 1-20 (``configs/2p_k5.yaml``): the bot
  against ``expert`` and ``heuristic`` in 2,000 duplicate rounds each (``racko_eval``'s
  tournament, each deal in both seatings).

A part run alone (``--only``) replaces its own rows in the file and keeps the others' rows.
``--ablation`` (never in the default run) also trains the tuning experiments behind
``configs/solitaire_k4.yaml``'s recipe at k=4, N=10, each the shipped config with one set of
changes, and writes their exact gaps to the tuning table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import yaml

from racko_eval.course_files import load_yaml

REPO = Path(__file__).resolve().parent.parent
NAME = "variants"
TARGET_GAP = 1.0  # percent: the exact gap the solitaire parts aim at
CURVE_PARTS = ("k4n10", "full")  # the parts whose runs give their learning curves
PHASES = ("draw", "keep or discard", "place")
IMITATION_GAMES = 100_000  # deals of the solver's play the imitation check clones
IMITATION_EPOCHS = 12
IMITATION_SEED = 7
IMITATION_HOLDOUT = 0.1  # the first tenth of the games: agreement before and after is read there


class Part(NamedTuple):
    """One variant: the shipped config it trains and the size it plays."""

    key: str
    config: str
    num_players: int
    rack_size: int
    deck_size: int
    budget_minutes: float  # the target's training time

    @property
    def exact(self) -> bool:
        return self.num_players == 1 and self.rack_size < 10

    @property
    def label(self) -> str:
        players = "solitaire" if self.num_players == 1 else f"{self.num_players} players"
        return f"{players}, k={self.rack_size}, N={self.deck_size}"


PARTS = {
    p.key: p
    for p in (
        Part("k3n8", "configs/solitaire_k4.yaml", 1, 3, 8, 5),
        Part("k4n10", "configs/solitaire_k4.yaml", 1, 4, 10, 5),
        Part("k4n11", "configs/solitaire_k4.yaml", 1, 4, 11, 5),
        Part("full", "configs/solitaire.yaml", 1, 10, 40, 10),
        Part("2p_k5", "configs/2p_k5.yaml", 2, 5, 20, 10),
    )
}


# ----------------------------------------------------------------------------- training


# The tuning experiments (``--ablation``, 2-5 minutes each on 2 cores): the changes each makes
# to configs/solitaire_k4.yaml, trained at k=4, N=10 (each names every PPO option the experiments
# vary and its env steps, so that it stays the same experiment if the shipped config changes).
# The shipped recipe itself is the k4n10 part.
_BEFORE = {"learning_rate": 3e-4, "anneal_lr": False, "gae_lambda": 0.95, "ent_coef": 0.01}
_BEFORE |= {"n_epochs": 4, "n_steps": 32, "batch_size": 2048}
_SHIPPED = _BEFORE | {"learning_rate": 1e-3, "anneal_lr": True, "gae_lambda": 0.5, "ent_coef": 0.0}
_1M, _3M = {"total_steps": 1_048_576}, {"total_steps": 3_145_728}
ABLATION: tuple[tuple[str, dict[str, Any]], ...] = (
    ("the recipe before: lr 3e-4 constant, lambda 0.95, entropy 0.01", _1M | {"ppo": _BEFORE}),
    ("the recipe before, its rate annealed", _1M | {"ppo": _BEFORE | {"anneal_lr": True}}),
    (
        "annealed lr 1e-3, no entropy bonus",
        _1M | {"ppo": _BEFORE | {"anneal_lr": True, "learning_rate": 1e-3, "ent_coef": 0.0}},
    ),
    (
        "annealed lr 1e-3, no entropy bonus, three times the steps",
        _3M | {"ppo": _BEFORE | {"anneal_lr": True, "learning_rate": 1e-3, "ent_coef": 0.0}},
    ),
    ("the shipped recipe, its rate constant", _3M | {"ppo": _SHIPPED | {"anneal_lr": False}}),
    ("the shipped recipe, lr 2e-3", _3M | {"ppo": _SHIPPED | {"learning_rate": 2e-3}}),
)


def merged(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` applied, nested sections merged key by key."""
    out = dict(base)
    for key, value in changes.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merged(out[key], value) if both else value
    return out


def part_config(
    part: Part, out: Path, curve: bool, changes: dict[str, Any] | None = None, name: str = ""
) -> Path:
    """The shipped config (with ``changes``, a tuning experiment's) with the part's size and run
    folder. The benchmark measures the bot itself, so the run evaluates nothing on the way,
    except the curve parts: their learner alone (exactly where solved) at every eighth of the run
    (the time of those evaluations is taken off its training time)."""
    data = load_yaml((REPO / part.config).read_text(encoding="utf-8"))
    data = merged(data, changes or {})
    data["rules"] = {**data.get("rules", {}), "rack_size": part.rack_size}
    data["rules"]["deck_size"] = part.deck_size
    data["out"] = str(out)
    data["progress_bar"] = False
    total = int(data["total_steps"])
    every = max(total // 8, 1) if curve else total * 10
    rounds = 100 if part.exact else 1000  # the exact parts' figure is the exact one
    data["eval"] = {**data.get("eval", {}), "every_steps": every, "opponents": [], "rounds": rounds}
    data["final_eval"] = {**data.get("final_eval", {}), "rounds": 0}
    path = out.parent / f"{name or part.key}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def train(
    part: Part, out: Path, curve: bool, changes: dict[str, Any] | None = None, name: str = ""
) -> dict[str, Any]:
    """Run ``train/ppo.py`` on the part's config (with ``changes``) in a child process: its wall
    and CPU seconds, the load average meanwhile, and the env steps it trained."""
    config = part_config(part, out, curve, changes, name)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, str(REPO / "train/ppo.py"), "--config", str(config), "--no-progress"]
    if out.exists():
        import shutil

        shutil.rmtree(out)
    subprocess.run(command, cwd=REPO, env=env, check=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    timing = json.loads((out / "timing.json").read_text(encoding="utf-8"))
    history = out / "eval_history.json"
    rows = json.loads(history.read_text(encoding="utf-8")) if history.is_file() else []
    evaluating = 60.0 * rows[-1].get("eval_minutes", 0.0) if rows else 0.0
    return {
        "wall_s": round(seconds - evaluating, 1),
        "learn_s": round(sum(t["seconds"] for t in timing), 1),
        "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1),
        "load": round(os.getloadavg()[1], 2),
        "env_steps": int(sum(t["env_steps"] for t in timing)),
        "bot": out / "bot.onnx",
    }


# ----------------------------------------------------------------------------- exact parts


def bot_table(run_dir: Path, k: int, n: int) -> np.ndarray:
    """The run's trained policy's action at every tabular observation, asked in batches of its
    frozen snapshot (the compiled feature kernel: the bot file's ONNX graph computes the same
    features and actions, checked at export, but several times slower over millions of
    states)."""
    from racko_env.solitaire_env import batch_table
    from train.sb3.model import load_trained_model, make_snapshot

    _, model = load_trained_model(run_dir)
    return batch_table(make_snapshot(model, "bot"), k, n)


def phase_fixes(table: np.ndarray, optimal: np.ndarray, k: int, n: int) -> list[float]:
    """The bot's exact expected turns with the solver's action in one decision of the turn:
    draw, keep or discard, place (the decision whose fix closes the gap most is where the bot
    loses its turns)."""
    from racko_env.solitaire import evaluate
    from racko_env.solitaire_space import space

    states = space(k, n).num_states
    out = []
    for phase in range(3):
        mixed = table.copy()
        rows = slice(phase * states, (phase + 1) * states)
        mixed[rows] = optimal[rows]
        out.append(evaluate(mixed, k, n, turn_limit=400))
    return out


def exact_part(part: Part, run: dict[str, Any]) -> dict[str, Any]:
    """The bot's exact expected turns, the optimum, the gaps, and where the bot loses turns."""
    from agents.batched import load_batch
    from racko_env.solitaire import evaluate, solve

    k, n = part.rack_size, part.deck_size
    solution = solve(k, n)
    optimum = solution.expected_turns
    table = bot_table(run["bot"].parent, k, n)
    turns = evaluate(table, k, n, turn_limit=400)
    expert = evaluate(load_batch("expert", 1, rack_size=k, deck_size=n), k, n, turn_limit=400)
    result = {
        "turns": turns,
        "optimum": optimum,
        "gap": 100.0 * (turns / optimum - 1.0),
        "expert_gap": 100.0 * (expert / optimum - 1.0),
    }
    fixed = phase_fixes(table, solution.policy, k, n)
    result["fixed_gaps"] = [100.0 * (t / optimum - 1.0) for t in fixed]
    print(f"{part.key}: {json.dumps(result)}", flush=True)
    return result


def optimal_decisions(solution: Any, games: int, seed: int) -> tuple[np.ndarray, ...]:
    """The observations, masks and actions of the solver's own play on ``games`` seeded deals,
    every decision in order, game after game."""
    from racko_env.solitaire_env import observation_index
    from racko_env.vector import VectorRacko

    k, n = solution.rack_size, solution.deck_size
    vec = VectorRacko(games, num_players=1, seed=seed, rack_size=k, deck_size=n)
    seen: list[tuple[np.ndarray, ...]] = []
    live = np.ones(games, dtype=bool)
    while live.any():
        g = np.flatnonzero(live)
        seat = np.zeros(len(g), dtype=np.intp)
        obs, masks = np.asarray(vec.observe(g, seat), np.float32), vec.action_masks(g, seat)
        acts = np.array([solution.policy[observation_index(o, k, n)] for o in obs], np.int64)
        seen.append((g, obs, masks, acts))
        live[g[vec.step(acts, g).done]] = False
    game = np.concatenate([s[0] for s in seen])
    order = np.argsort(game, kind="stable")  # whole games together: clone_actor holds out games
    return tuple(np.concatenate([s[i] for s in seen])[order] for i in (1, 2, 3))


def imitation(run_dir: Path, k: int, n: int, games: int = IMITATION_GAMES) -> dict[str, Any]:
    """The run's bot cloned further onto the solver's own decisions (``clone_actor``, the warm
    start's cloning) over ``games`` deals of optimal play: its agreement with the solver on
    held-out games before and after, and its exact gap after: whether matching the optimum on
    the states optimal play reaches is what closes the gap."""
    from agents.features import rack_features
    from racko_env.config import RulesConfig
    from racko_env.observation import layout_for
    from racko_env.solitaire import evaluate, solve
    from train.sb3.model import load_trained_model, make_snapshot
    from train.sb3.warmstart import agreement, clone_actor

    solution = solve(k, n)
    obs, masks, actions = optimal_decisions(solution, games, seed=IMITATION_SEED)
    _, model = load_trained_model(run_dir)
    layout = layout_for(RulesConfig(num_players=1, rack_size=k, deck_size=n))
    slots, glob = rack_features(obs, n, layout)  # the policy's inputs, as FeatureCache's rows
    inputs = np.concatenate([obs, slots.reshape(len(obs), -1), glob], axis=1)
    held = int(IMITATION_HOLDOUT * len(obs))  # the rows clone_actor holds out
    before = agreement(model.policy, inputs[:held], masks[:held], actions[:held])
    fit = clone_actor(
        model.policy, inputs, masks, actions, IMITATION_EPOCHS, 2048, 1e-3, 0, IMITATION_HOLDOUT
    )
    turns = evaluate(make_snapshot(model, "imitation"), k, n, turn_limit=400)
    gap = 100.0 * (turns / solution.expected_turns - 1.0)
    return {"decisions": len(obs), "before": before, "after": fit["agreement"], "gap": gap}


def curve_rows(part: Part, out: Path) -> list[list[Any]]:
    """The run's mean turns and, where solved, exact gap at each of its evaluations against the
    minutes of training before it (the wall minutes less those spent evaluating)."""
    rows = []
    for row in json.loads((out / "eval_history.json").read_text(encoding="utf-8")):
        minutes = row["minutes"] - row.get("eval_minutes", 0.0)
        gap = row.get("learner_gap_percent")
        rows.append([
            part.key, row["timesteps"], round(minutes, 2), None if gap is None else round(gap, 3),
            row["rounds"], round(row["learner"], 3),
        ])  # fmt: skip
    return rows


def ablation(out: Path) -> dict[str, list[list[Any]]]:
    """Each tuning experiment trained at k=4, N=10 and its bot's exact gap: the tuning table's
    rows."""
    from racko_env.solitaire import evaluate, solve

    part = PARTS["k4n10"]
    k, n = part.rack_size, part.deck_size
    optimum = solve(k, n).expected_turns
    rows = []
    for i, (label, changes) in enumerate(ABLATION):
        name = f"tuning{i}"
        run = train(part, out / name, False, changes, name)
        gap = 100.0 * (evaluate(bot_table(out / name, k, n), k, n, turn_limit=400) / optimum - 1)
        now = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
        rows.append([
            "tuning", label, json.dumps(changes, sort_keys=True), run["env_steps"],
            run["wall_s"], run["cpu_s"], run["load"], round(gap, 3), now,
        ])  # fmt: skip
        print(rows[-1], flush=True)
    return {"tuning": rows}


# ----------------------------------------------------------------------------- played parts


def full_part(run: dict[str, Any], rounds: int) -> list[list[Any]]:
    """Mean turns with 95% intervals of the bot, expert and heuristic on the same deals."""
    import agents
    from racko_env.solitaire_env import mean_ci95, play_turns

    rows = []
    minutes = run["wall_s"] / 60
    for name, spec in (
        (
            f"main job ({minutes:.1f} min; CPU {run['cpu_s']:.0f} s, load {run['load']})",
            str(run["bot"]),
        ),
        ("expert", "expert"),
        ("heuristic", "heuristic"),
    ):
        bot = agents.load(spec, num_players=1, rack_size=10, deck_size=40)
        mean, low, high = mean_ci95(play_turns(bot, range(rounds)))
        rows.append([name, rounds, round(mean, 3), round(low, 3), round(high, 3)])
        print(rows[-1], flush=True)
    return rows


def warm_start_row(run_dir: Path) -> list[Any] | None:
    """Where PPO started: the run's first evaluation of its learner (the expert clone) on the
    run's own evaluation deals, the diagnosis of a bot that ends above expert."""
    history = run_dir / "eval_history.json"
    if not history.is_file():
        return None
    first = json.loads(history.read_text(encoding="utf-8"))[0]
    low, high = first["learner_ci95"]
    name = "main job before PPO (its warm start; the run's own deals)"
    return [name, first["rounds"], round(first["learner"], 3), round(low, 3), round(high, 3)]


def two_player_part(part: Part, run: dict[str, Any], rounds: int) -> list[list[Any]]:
    """The bot against expert and heuristic, ``rounds`` duplicate deals each."""
    from racko_eval import run_tournament

    rows = []
    rules = {"rack_size": part.rack_size, "deck_size": part.deck_size}
    for opponent in ("expert", "heuristic"):
        report = run_tournament(
            [str(run["bot"]), opponent], 2, rounds=rounds, seed=0, workers=2, **rules
        )
        me = report["bots"][0]
        low, high = me["win_rate_ci95"]
        rows.append([opponent, rounds, me["played"], me["win_rate"], round(low, 4), round(high, 4)])
        print(rows[-1], flush=True)
    return rows


# ----------------------------------------------------------------------------- the file

TABLES = {
    "exact": {
        "title": "Solitaire solved exactly: the main job's bot against the optimum",
        "columns": [
            "part", "size", "bot's expected turns", "optimum", "gap %", "expert gap %",
            "training s", "CPU s", "env steps", "load", "measured",
        ],
        "note": "expected turns from a uniformly random deal, exact (racko_env.solitaire."
        "evaluate of the trained policy's action at every state, the policy its bot file "
        "exports; rounds cut at 400 turns); training s: "
        "the wall time of `python train/ppo.py --config configs/solitaire_k4.yaml` with the "
        "size's deck (its whole command: warm start, PPO, export; less the curve's "
        "evaluations), CPU s that command's CPU "
        "time and load the machine's 5-minute load average after it (2 cores); the target: a "
        "gap of at most 1% within 5 minutes of training",
    },
    "fixes": {
        "title": "Where the bot loses turns: its exact gap with the solver's action in one "
        "decision",
        "columns": ["part", "size", "gap %", "draw fixed: gap %", "keep or discard fixed: gap %",
                    "place fixed: gap %"],
        "note": "the bot's policy with the optimal action at every state of one decision of "
        "the turn (the other two decisions the bot's), evaluated exactly: the decision whose "
        "fix closes the most of the gap is where the bot's turns go",
    },
    "curve": {
        "title": "Learning curves",
        "columns": ["part", "env steps", "minutes", "gap %", "deals", "mean turns"],
        "note": "the k=4, N=10 and full-size runs' learner evaluated at every eighth of the run: "
        "exactly where solved (gap %), and its mean turns over the deals played; minutes: of "
        "training before the evaluation (the wall time less the evaluations')",
    },
    "imitation": {
        "title": "The bot taught the optimum directly",
        "columns": ["part", "decisions", "agreement before %", "agreement after %", "gap %",
                    "gap after %"],
        "note": "the k=4, N=10 bot cloned further onto the solver's own decisions (the warm "
        f"start's behaviour cloning, {IMITATION_EPOCHS} epochs) over "
        f"{IMITATION_GAMES:,} deals of optimal play; agreement: its action is the solver's, on "
        "held-out games; gap after: its exact gap once cloned. Agreeing with the solver on "
        "the states optimal play reaches does not bound the gap: the turns are lost in the "
        "states the bot's own play reaches, which on-policy PPO sees and cloning does not",
    },
    "tuning": {
        "title": "Tuning the k=4 recipe: the exact gap of each experiment",
        "columns": ["part", "experiment", "changes to configs/solitaire_k4.yaml", "env steps",
                    "training s", "CPU s", "load", "gap %", "measured"],
        "note": "`python -m benchmarks.variants --ablation`: each experiment the shipped config "
        "with its changes, trained at k=4, N=10 (its whole command: warm start, PPO, export) "
        "and its bot graded exactly like the k4n10 part; training s and CPU s as above",
    },
    "full": {
        "title": "Full-size solitaire (k=10, N=40), played",
        "columns": ["part", "bot", "rounds", "mean turns", "95% low", "95% high", "measured"],
        "note": "the same deals for each bot (env seeds 0..rounds-1, the solitaire_full "
        "rubric's practice deals), rounds cut at 400 turns; the main job: "
        "`python train/ppo.py --config configs/solitaire.yaml`, its wall time in brackets; "
        "the target: below expert's mean turns with the intervals apart, within 10 minutes",
    },
    "2p_k5": {
        "title": "2 players, racks of 5, the cards 1-20: the main job's bot",
        "columns": ["part", "against", "deals", "seated rounds", "win rate", "95% low",
                    "95% high", "training s", "measured"],
        "note": "racko_eval's duplicate tournament (racko evaluate's), each deal in both "
        "seatings; the main job: `python train/ppo.py --config configs/2p_k5.yaml`; the "
        "target: at least 52% against expert",
    },
}  # fmt: skip


def measure(key: str, out: Path, args: argparse.Namespace) -> tuple[dict, dict]:
    """One part: train, measure; its rows by table and its figures."""
    part = PARTS[key]
    curve = key in CURVE_PARTS and not args.no_curve
    run = train(part, out / key, curve)
    now = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    rows: dict[str, list[list[Any]]] = {}
    figures: dict[str, Any] = {f"{key}_training_s": run["wall_s"]}
    if part.exact:
        r = exact_part(part, run)
        rows["exact"] = [
            [key, part.label, round(r["turns"], 6), round(r["optimum"], 6), round(r["gap"], 3),
             round(r["expert_gap"], 3), run["wall_s"], run["cpu_s"], run["env_steps"],
             run["load"], now],
        ]  # fmt: skip
        rows["fixes"] = [
            [key, part.label, round(r["gap"], 3), *(round(g, 3) for g in r["fixed_gaps"])]
        ]
        figures.update({f"{key}_gap_percent": round(r["gap"], 3)})
        if curve:
            rows["curve"] = curve_rows(part, out / key)
            i = imitation(out / key, part.rack_size, part.deck_size)
            rows["imitation"] = [
                [key, i["decisions"], round(100 * i["before"], 2), round(100 * i["after"], 2),
                 round(r["gap"], 3), round(i["gap"], 3)],
            ]  # fmt: skip
    elif key == "full":
        played = full_part(run, args.rounds)
        warm = warm_start_row(out / key)
        played += [warm] if warm is not None else []
        rows["full"] = [[key, *row, now] for row in played]
        figures.update(full_mean_turns=played[0][2], full_expert_mean_turns=played[1][2])
        if curve:
            rows["curve"] = curve_rows(part, out / key)
    else:
        played = two_player_part(part, run, args.duplicate_rounds)
        rows["2p_k5"] = [[key, *row, run["wall_s"], now] for row in played]
        figures.update({"2p_k5_vs_expert": played[0][3], "2p_k5_vs_heuristic": played[1][3]})
    return rows, figures


def write(parts: dict[str, tuple[dict, dict]], command: str, folder: Path | None = None) -> Path:
    """The results file (in ``folder``, default docs/results): the measured parts' rows and
    figures, the other parts' kept."""
    from racko_eval.results import ResultsError, load_results, write_results

    try:
        old = load_results(NAME, folder)
    except ResultsError:
        old = {"tables": [], "figures": {}}
    kept = {t["title"]: t["rows"] for t in old["tables"]}
    figures = {k: v for k, v in old["figures"].items() if not any(k.startswith(p) for p in parts)}
    tables = []
    for key, spec in TABLES.items():
        rows = [r for r in kept.get(spec["title"], []) if r[0] not in parts]
        for part_rows, _ in parts.values():
            rows += part_rows.get(key, [])
        order = list(PARTS)
        rows.sort(key=lambda r: order.index(r[0]) if r[0] in order else len(order))
        if rows:
            tables.append({**spec, "rows": rows})
    for _, part_figures in parts.values():
        figures.update(part_figures)
    return write_results(NAME, command=command, figures=figures, tables=tables, folder=folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.variants")
    parser.add_argument(
        "--only", action="append", choices=list(PARTS), help="run this part only (repeatable)"
    )
    parser.add_argument("--rounds", type=int, default=1000, help="deals of full-size solitaire")
    parser.add_argument(
        "--duplicate-rounds", type=int, default=2000, help="duplicate deals of 2p_k5 per opponent"
    )
    parser.add_argument("--no-curve", action="store_true", help="skip the learning curve")
    parser.add_argument(
        "--ablation", action="store_true", help="also train the k=4 recipe's tuning experiments"
    )
    parser.add_argument("--out", type=Path, default=Path("runs/variants"))
    parser.add_argument("--results-dir", type=Path, help="write variants.json here instead")
    args = parser.parse_args(argv)
    keys = args.only or list(PARTS)
    out = args.out.resolve()
    measured, failed = {}, []
    for key in keys:  # a part that fails is reported and leaves the others' rows standing
        try:
            measured[key] = measure(key, out, args)
        except (subprocess.CalledProcessError, OSError, ValueError) as err:
            print(f"{key}: failed: {err}", file=sys.stderr, flush=True)
            failed.append(key)
    if args.ablation:
        try:
            measured["tuning"] = (ablation(out), {})
        except (subprocess.CalledProcessError, OSError, ValueError) as err:
            print(f"tuning: failed: {err}", file=sys.stderr, flush=True)
            failed.append("tuning")
    if measured:
        parts = [k for k in measured if k in PARTS]
        only = "" if len(parts) == len(PARTS) else "".join(f" --only {k}" for k in parts)
        command = "python -m benchmarks.variants" + only + (" --ablation" if args.ablation else "")
        print(f"wrote {write(measured, command, args.results_dir)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
