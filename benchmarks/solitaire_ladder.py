"""The solitaire ladder, exactly: for each size, its state count, the time and memory of the
exact solve, the optimum, ``expert``'s exact gap, and each tabular baseline's gap and time;
writes ``docs/results/solitaire_ladder.json``.

    python -m benchmarks.solitaire_ladder                 # the whole ladder (about 25 min)
    python -m benchmarks.solitaire_ladder --quick         # the solves, and the racks of 3's baselines
    python -m benchmarks.solitaire_ladder --full-size     # k=10, N=40 played: solitaire_full_size.json
    python -m benchmarks.solitaire_ladder --full-size --ppo   # and step 2's PPO, trained first

Full-size solitaire has no exact solve: ``--full-size`` plays ``heuristic`` and ``expert`` on the
same 1,000 deals and writes their mean turns with 95% intervals, the yardstick of the course's
step 2 (function approximation); ``--ppo`` first runs step 2's command (``PPO_COMMAND``) and
plays the bot file it writes on the same deals.

The baselines run on every size of the ladder: with their own defaults on the racks of 3 (to
convergence: the 2% target on k=3, N=8) and for ``--budget`` seconds of learning on the racks of
4 (2 minutes by default), each evaluated exactly
(``racko_env.solitaire.evaluate``) in rounds cut at the env's turn limit. Memory is the peak of
numpy's allocations during the solve (``tracemalloc``).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from racko_env.solitaire import evaluate, solve

LADDER = ((3, 5), (3, 6), (3, 8), (4, 10), (4, 11))
# The ladder's step 2 (docs/coursework/ladder.md): PPO on full-size solitaire, a few minutes.
PPO_FLAGS = (
    "--num-players 1 --shaping 20 --turn-cost 0.05 --num-envs 1 --rollout-steps 256 --learning-rate 1e-3 "
    "--total-timesteps 300000 --eval-opponent expert --eval-rounds 0"
).split()
PPO_COMMAND = "python train/reference/cleanrl_ppo.py " + " ".join(PPO_FLAGS)
BUDGETED = 4  # racks of 4 and more: the baselines learn for --budget seconds, not to convergence


def solve_row(k: int, n: int) -> tuple[list[Any], Any]:
    """One size's row: states, solve time and memory, the optimum."""
    tracemalloc.start()
    start = time.perf_counter()
    solution = solve(k, n)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    sp = solution.space
    row = [
        f"k={k}, N={n}",
        sp.num_states,
        sp.num_observations,
        round(seconds, 2),
        round(peak / 2**20, 1),
        round(solution.expected_turns, 6),
        solution.iterations,
    ]
    return row, solution


def expert_gap(k: int, n: int, optimum: float) -> float | str:
    """``expert``'s exact gap to the optimum in percent, or why it has none: the batched
    expert (``agents.batched``, the per-game bot's twin) asked at every state at once, since
    asking the per-game bot state by state takes hours past a million states."""
    try:
        from agents.batched import load_batch

        bot = load_batch("expert", 1, rack_size=k, deck_size=n)
        turns = evaluate(bot, k, n, turn_limit=400)
    except Exception as err:  # a size expert does not play is a cell, not a crash
        return "not played: " + " ".join(str(err).split())[:80]
    return round(100.0 * (turns / optimum - 1.0), 3)


def baseline_rows(quick: bool, budget: float, out: Path) -> list[list[Any]]:
    """Each tabular baseline on every size of the ladder: gap, steps, learning time, table size
    (``--quick``: the sizes that converge, racks of 3)."""
    from train.common.tabular import parse_args
    from train.reference import tabular_mc, tabular_q_learning, tabular_sarsa

    rows = []
    for k, n in LADDER:
        limit = budget if k >= BUDGETED else None
        if quick and limit is not None:
            continue
        for module in (tabular_mc, tabular_q_learning, tabular_sarsa):
            defaults = dict(getattr(module, "DEFAULTS", {}))
            flags = ["--rack-size", str(k), "--deck-size", str(n), "--quiet"]
            flags += ["--out", str(out / f"{module.NAME}_{k}_{n}")]
            if limit is not None:
                defaults.update(time_limit=limit, total_steps=10**12, eval_points=1)
            args = parse_args(module.NAME, "", flags, **defaults)
            if limit is not None:  # one evaluation, at the end of the time budget
                args = dataclasses.replace(args, eval_points=1)
            result = module.train(args)
            rows.append(
                [
                    module.NAME.removeprefix("tabular_"),
                    f"k={k}, N={n}",
                    round(result["gap_percent"], 3),
                    result["steps"],
                    round(result["seconds"], 1),
                    round(result["q_table_mb"], 1),
                ]
            )
            print(rows[-1], flush=True)
    return rows


def train_ppo(out: Path) -> tuple[Path, float]:
    """Step 2's command, run here: the bot file it writes and its seconds of training."""
    from train.reference import cleanrl_ppo

    start = time.perf_counter()
    cleanrl_ppo.main([*PPO_FLAGS, "--quiet", "--out", str(out)])
    return out / "bot.onnx", time.perf_counter() - start


def full_size(rounds: int, ppo: Path | None = None, seconds: float = 0.0) -> Path:
    """Mean turns of the baselines (and of ``ppo``, a bot file) on full-size solitaire (k=10,
    N=40), the same deals each: env seeds 0..rounds-1, the solitaire_full rubric's practice."""
    import agents
    from racko_env.solitaire_env import SOLITAIRE_DECK, mean_ci95, play_turns
    from racko_eval.results import write_results

    rows = []
    bots = {"heuristic": "heuristic", "expert": "expert"}
    if ppo is not None:
        bots[f"PPO (step 2, {seconds / 60:.1f} min of training)"] = str(ppo)
    for name, spec in bots.items():
        bot = agents.load(spec, num_players=1, rack_size=10, deck_size=SOLITAIRE_DECK)
        mean, low, high = mean_ci95(play_turns(bot, range(rounds)))
        rows.append([name, rounds, round(mean, 3), round(low, 3), round(high, 3)])
        print(rows[-1], flush=True)
    names = ["heuristic", "expert", "ppo"][: len(rows)]
    command = "python -m benchmarks.solitaire_ladder --full-size" + (" --ppo" if ppo else "")
    return write_results(
        "solitaire_full_size",
        command=command,
        figures={f"{n}_mean_turns": r[2] for n, r in zip(names, rows, strict=True)},
        tables=[
            {
                "title": "Full-size solitaire (k=10, N=40), played",
                "columns": ["bot", "rounds", "mean turns", "95% low", "95% high"],
                "rows": rows,
                "note": "the same deals for each bot (env seeds 0..rounds-1); rounds cut at "
                f"400 turns; PPO: the bot file of `{PPO_COMMAND}`",
            }
        ],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.solitaire_ladder")
    parser.add_argument("--full-size", action="store_true", help="play k=10, N=40 instead")
    parser.add_argument("--rounds", type=int, default=1000, help="deals for --full-size")
    parser.add_argument("--ppo", action="store_true", help="with --full-size: train step 2's PPO")
    parser.add_argument("--quick", action="store_true", help="skip the racks of 4's baselines")
    parser.add_argument("--budget", type=float, default=120.0, help="seconds on racks of 4")
    parser.add_argument("--out", type=Path, default=Path("runs/solitaire_ladder"))
    args = parser.parse_args(argv)
    if args.full_size:
        ppo, seconds = train_ppo(args.out / "ppo") if args.ppo else (None, 0.0)
        print(f"wrote {full_size(args.rounds, ppo, seconds)}")
        return 0
    sizes, figures = [], {}
    for k, n in LADDER:
        row, solution = solve_row(k, n)
        row.append(expert_gap(k, n, solution.expected_turns))
        sizes.append(row)
        figures[f"optimum_k{k}_n{n}"] = row[5]
        print(row, flush=True)
    baselines = baseline_rows(args.quick, args.budget, args.out)
    from racko_eval.results import write_results

    command = "python -m benchmarks.solitaire_ladder" + (" --quick" if args.quick else "")
    path = write_results(
        "solitaire_ladder",
        command=command,
        figures=figures,
        tables=[
            {
                "title": "Solitaire solved exactly",
                "columns": [
                    "size",
                    "states per decision",
                    "tabular observations",
                    "solve s",
                    "solve MB",
                    "optimal expected turns",
                    "sweeps",
                    "expert gap %",
                ],
                "rows": sizes,
                "note": "expected turns from a uniformly random deal, the Rack-O turn counted; "
                "memory: peak numpy allocations of the solve; expert gap: the exact "
                "expected turns of expert's action at every state (rounds cut at 400 turns)",
            },
            {
                "title": "Tabular baselines, exact gap to the optimum",
                "columns": ["baseline", "size", "gap %", "steps", "learning s", "Q-table MB"],
                "rows": baselines,
                "note": "the greedy policy of the table, evaluated exactly in rounds cut at "
                "400 turns; the racks of 4 after the time budget of learning",
            },
        ],
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
