"""Minutes and env steps the main job needs to reach 40%, 45% and 48% against ``expert``.

Runs the main job (``configs/2p.yaml`` unless told otherwise) as ``python train/ppo.py`` does,
with stopwatches around its parts (rollout, of which the learner's features, the opponents' moves
and the snapshots' share of them; PPO's update; the evaluations), and reads the first periodic
evaluation at or above each win rate from the run's ``eval_history.json``.

    python -m benchmarks.time_to_expert                       # the main job (configs/2p.yaml)
    python -m benchmarks.time_to_expert --total-steps 300000 --out /tmp/tte   # a shorter look

The run folder (``--out``, default ``runs/time_to_expert``) is written afresh. Writes
``docs/results/time_to_expert.json`` and the run's curve, ``docs/results/learning_curves.json``.
Times are wall clock: on a shared machine they measure the machine too (its load is recorded).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
# OpenMP threads sleep instead of spinning between parallel regions: with update_threads > 1
# spinning threads took the cores from each other (and from the rollout) whenever the machine
# was busy (docs/training/main-job.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

REPO = Path(__file__).resolve().parent.parent
TARGETS = (0.40, 0.45, 0.48)


class Stopwatches:
    """Wall seconds spent inside wrapped methods, by part (re-entrant calls are counted once); a
    part ``within`` another counts only while that one runs (the rollout's share of the env's
    work, not the warm start's or the evaluation's)."""

    def __init__(self, clock: Any = time.perf_counter, cpu_clock: Any = time.process_time) -> None:
        self.clock = clock
        self.cpu_clock = cpu_clock
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)
        self._depth: dict[str, int] = defaultdict(int)

    def wrap(self, owner: Any, name: str, part: str, within: str | None = None) -> None:
        method = getattr(owner, name)

        @functools.wraps(method)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if within is not None and self._depth[within] == 0:
                return method(*args, **kwargs)
            self._depth[part] += 1
            t0, c0 = self.clock(), self.cpu_clock()
            try:
                return method(*args, **kwargs)
            finally:
                self._depth[part] -= 1
                if self._depth[part] == 0:
                    self.seconds[part] += self.clock() - t0
                    self.cpu_seconds[part] += self.cpu_clock() - c0

        setattr(owner, name, timed)


def curve_table(run: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    """A run's learning curve: env steps, minutes, rounds and its win rate against each opponent
    at every evaluation of its ``eval_history.json`` (``train.common.eval_record``)."""
    from benchmarks import rate_text

    skip = {"timesteps", "minutes", "eval_minutes", "rounds", "final", "unit"}
    opponents = [k for k in history[0] if k not in skip and not k.endswith("_ci95")]
    rows = [
        [row.get("timesteps"), row.get("minutes"), row.get("rounds")]
        + [rate_text(row[o], row[f"{o}_ci95"]) if o in row else None for o in opponents]
        for row in history
    ]
    return {
        "title": f"Learning curve of {run}",
        "columns": ["env steps", "minutes", "rounds", *(f"vs `{o}`" for o in opponents)],
        "rows": rows,
        "note": "the learner's win rate (95% CI) in duplicate rounds at each evaluation; the last "
        "row is the final evaluation",
    }


def first_reaching(history: list[dict[str, Any]], opponent: str, rate: float) -> dict | None:
    """The first periodic evaluation at or above ``rate`` against ``opponent`` (None: never)."""
    for row in history:
        if not row.get("final") and row.get(opponent, -1.0) >= rate:
            return row
    return None


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "2p.yaml"))
    ap.add_argument("--out", default=str(REPO / "runs" / "time_to_expert"))
    ap.add_argument("--total-steps", type=int, help="override the config's total env steps")
    ap.add_argument("--results-dir", metavar="DIR", help="default docs/results")
    args = ap.parse_args(argv)

    from sb3_contrib import MaskablePPO

    from benchmarks import publish, shown
    from train.sb3 import run as ppo
    from train.sb3.evaluation import EvalHistory
    from train.sb3.feature_cache import FeatureCache
    from train.sb3.vec_env import RackoVecEnv

    watch = Stopwatches()
    cpu0 = time.process_time()
    watch.wrap(MaskablePPO, "collect_rollouts", "rollout")
    watch.wrap(FeatureCache, "augment", "features", within="rollout")
    watch.wrap(RackoVecEnv, "_advance", "opponents", within="rollout")
    watch.wrap(RackoVecEnv, "_act_grouped", "snapshots", within="rollout")
    watch.wrap(MaskablePPO, "train", "update")
    watch.wrap(EvalHistory, "evaluate", "evaluation")
    watch.wrap(EvalHistory, "final", "evaluation")

    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    cli = ["--config", args.config, "--out", str(out), "--no-progress"]
    if args.total_steps is not None:
        cli += ["--total-steps", str(args.total_steps)]
    t0 = time.perf_counter()
    if ppo.main(cli) != 0:
        raise SystemExit("time_to_expert: the training run failed (see above)")
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0

    history_file = out / "eval_history.json"  # absent when the config evaluates nothing
    history = json.loads(history_file.read_text(encoding="utf-8")) if history_file.is_file() else []
    timing = json.loads((out / "timing.json").read_text(encoding="utf-8"))
    steps = sum(s["env_steps"] for s in timing)
    ppo_seconds = sum(s["seconds"] for s in timing)
    reached = {}
    for rate in TARGETS:
        row = first_reaching(history, "expert", rate)
        reached[f"{rate:.0%}"] = (
            None if row is None else {"minutes": row["minutes"], "env_steps": row["timesteps"]}
        )
    final = [r for r in history if r.get("final")]
    parts = ("rollout", "features", "opponents", "snapshots", "update", "evaluation")
    result = {
        "config": shown(args.config),
        "wall_minutes": round(wall / 60, 2),
        "cpu_minutes": round(cpu / 60, 2),
        "env_steps": steps,
        "ppo_steps_per_s": round(steps / max(ppo_seconds, 1e-9)),
        "reached_vs_expert": reached,
        "final": final[-1] if final else None,
        "wall_seconds": {part: round(watch.seconds.get(part, 0.0), 2) for part in parts},
        "cpu_seconds": {part: round(watch.cpu_seconds.get(part, 0.0), 2) for part in parts},
    }
    publish("time_to_expert", argv, results_tables(result), figures(result), args.results_dir)
    curve = [curve_table(shown(out), history)] if history else []
    publish("time_to_expert", argv, curve, folder=args.results_dir, name="learning_curves")
    return result


def results_tables(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets against ``expert`` and where the wall and CPU time went."""
    targets = [
        [
            f"{rate} vs `expert`",
            None if hit is None else hit["minutes"],
            None if hit is None else hit["env_steps"],
        ]
        for rate, hit in result["reached_vs_expert"].items()
    ]
    parts = [
        [part, result["wall_seconds"][part], result["cpu_seconds"][part]]
        for part in result["wall_seconds"]
    ]
    final = result["final"] or {}
    note = (
        f"{result['config']}: {result['env_steps']:,} env steps in {result['wall_minutes']} min "
        f"wall, {result['ppo_steps_per_s']:,} env steps/s in PPO; the first periodic evaluation "
        "at or above each target (1,000 duplicate rounds each)."
    )
    if final:
        note += (
            " Final: "
            + ", ".join(
                f"{100 * final[k]:.1f}% vs `{k}`" for k in ("heuristic", "expert") if k in final
            )
            + f" ({final['rounds']:,} duplicate rounds)."
        )
    return [
        {
            "title": "Time to expert's level",
            "columns": ["target", "minutes", "env steps"],
            "rows": targets,
            "note": note,
        },
        {
            "title": "Where the time went",
            "columns": ["part", "wall seconds", "CPU seconds"],
            "rows": parts,
            "note": "features, opponents and snapshots are part of rollout",
        },
    ]


def figures(result: dict[str, Any]) -> dict[str, Any]:
    """The headline figures: expert's level is the last target (48%)."""
    level = result["reached_vs_expert"][f"{TARGETS[-1]:.0%}"] or {}
    final = result["final"] or {}
    return {
        "minutes": level.get("minutes"),
        "env_steps": level.get("env_steps"),
        "run_minutes": result["wall_minutes"],
        "final_vs_heuristic": final.get("heuristic"),
        "final_vs_expert": final.get("expert"),
    }


if __name__ == "__main__":
    main()
