"""Seeds and sweeps of the main job on Ray Tune: ``racko sweep --config configs/sweep_2p.yaml
[--address auto]`` (docs/training/rllib.md).

Every trial is one ordinary run of ``train/ppo.py`` in ``<out>/trials/<name>/``. The sweep config
names the run config, the seeds, and optionally a grid and random samples over dotted keys of it
(``ppo.learning_rate``), checked against its schema before anything starts. Trials are planned
here, deterministically, and named by a hash of their settings, so a re-run finds the same
folders: a trial with its bot is not trained again, one with a checkpoint resumes. The results
table goes to ``<out>/results.md`` and ``<out>/results.json``; nothing goes to the user's home."""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from train.common import front_door

front_door.thread_defaults()  # before numpy and torch load: they read them once

REPO = Path(__file__).resolve().parents[2]

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator  # noqa: E402

from train.common.config import (  # noqa: E402
    MAX_SEED,
    ConfigError,
    TrainConfig,
    config_data,
    parse_config,
    read_yaml,
)
from train.common.files import (  # noqa: E402
    RunFolderError,
    write_json_atomic,
    write_text_atomic,
    write_yaml_atomic,
)
from train.rllib.cluster import start_ray  # noqa: E402

MAX_TEMP_DIR = 40  # Ray's socket paths (<temp>/session_<date>_<pid>/sockets/plasma_store) < 108
RESERVED_KEYS = ("seed", "out", "kind")  # set by the sweep itself


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RandomSpace(_Strict):
    """One key's distribution: exactly one of ``uniform``/``loguniform`` [low, high] or ``choice``."""

    uniform: tuple[float, float] | None = None
    loguniform: tuple[float, float] | None = None
    choice: list[Any] | None = None

    @model_validator(mode="after")
    def _one(self) -> RandomSpace:
        given = [k for k in ("uniform", "loguniform", "choice") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of uniform, loguniform, choice")
        if self.loguniform is not None and not 0 < self.loguniform[0] <= self.loguniform[1]:
            raise ValueError("loguniform needs 0 < low <= high")
        if self.uniform is not None and not self.uniform[0] <= self.uniform[1]:
            raise ValueError("uniform needs low <= high")
        if self.choice is not None and not self.choice:
            raise ValueError("choice must not be empty")
        return self

    def sample(self, rng: Any) -> Any:
        if self.uniform is not None:
            return float(rng.uniform(*self.uniform))
        if self.loguniform is not None:
            lo, hi = self.loguniform
            return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))
        assert self.choice is not None
        return self.choice[int(rng.integers(len(self.choice)))]


class RandomSection(_Strict):
    samples: int = Field(0, ge=0)  # points drawn (each crossed with the grid and the seeds)
    space: dict[str, RandomSpace] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _space_if_samples(self) -> RandomSection:
        if self.samples and not self.space:
            raise ValueError("samples > 0 needs a space")
        return self


class SweepConfig(_Strict):
    """A sweep (``configs/sweep_2p.yaml``): the run config, the seeds, a grid, random samples."""

    config: str  # the run config of train/ppo.py every trial starts from
    seeds: list[int] = Field(default_factory=lambda: [0])
    grid: dict[str, list[Any]] = Field(default_factory=dict)  # dotted key -> values (crossed)
    random: RandomSection = RandomSection()
    search_seed: int = 0  # the random samples' generator: the same sweep plans the same trials
    cpus_per_trial: float = Field(1.0, gt=0)
    max_concurrent: int = Field(0, ge=0)  # 0: as many as the CPUs allow
    out: str = "runs/sweep"

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: list[int]) -> list[int]:
        if not v:
            raise ValueError("name at least one seed")
        if len(set(v)) != len(v) or any(not 0 <= s <= MAX_SEED for s in v):
            raise ValueError(f"seeds must be distinct integers in 0..{MAX_SEED}")
        return v

    @field_validator("grid")
    @classmethod
    def _grid(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for key, values in v.items():
            if not values:
                raise ValueError(f"grid[{key!r}]: give at least one value")
        return v


def check_key(key: str, schema: type[BaseModel] = TrainConfig) -> None:
    """Raise ValueError unless ``key`` (dotted) names a setting of the run config's schema."""
    if key.split(".", 1)[0] in RESERVED_KEYS:
        raise ValueError(f"{key!r} is set by the sweep itself (use seeds: / out:)")
    model: Any = schema
    parts = key.split(".")
    for i, part in enumerate(parts):
        fields = getattr(model, "model_fields", None)
        if fields is None:  # a dict-valued setting (opponents): any name one level down
            if getattr(model, "__origin__", None) is dict and i == len(parts) - 1:
                return
            raise ValueError(f"{key!r}: {'.'.join(parts[:i])} has no sub-keys")
        if part not in fields:
            where = ".".join(parts[:i]) or "the run config"
            raise ValueError(f"{key!r}: {where} has no key {part!r} (known: {', '.join(fields)})")
        model = fields[part].annotation
    if isinstance(model, type) and issubclass(model, BaseModel):
        raise ValueError(f"{key!r} is a section; name one of its keys")


def set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    for part in parts[:-1]:
        data = data.setdefault(part, {})
    data[parts[-1]] = value


def trial_name(params: dict[str, Any], seed: int) -> str:
    """``seed3-1a2b3c4d``: readable seed, hash of the other settings (stable across re-runs)."""
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8]
    return f"seed{seed}-{digest}"


def find_file(path: str, base: Path) -> Path:
    """A path as given (relative to the current folder), else relative to the repository."""
    p = Path(path)
    if p.is_file() or p.is_absolute():
        return p
    for root in (base, REPO):
        if (root / p).is_file():
            return root / p
    return p


def plan_trials(sweep: SweepConfig, sweep_path: Path) -> list[dict[str, Any]]:
    """Every trial's name, settings, seed and validated run config (plain data), in order. Raises
    ``ConfigError`` naming the first bad key or the first trial whose config is invalid."""
    import numpy as np

    base_path = find_file(sweep.config, sweep_path.parent)
    base = read_yaml(base_path)
    for key in [*sweep.grid, *sweep.random.space]:
        try:
            check_key(key)
        except ValueError as exc:
            raise ConfigError(f"{sweep_path}: {exc}") from None
    grid_keys = list(sweep.grid)
    points = [
        dict(zip(grid_keys, vals, strict=True)) for vals in itertools.product(*sweep.grid.values())
    ]
    if sweep.random.samples:
        rng = np.random.default_rng(sweep.search_seed)
        drawn = [
            {k: space.sample(rng) for k, space in sweep.random.space.items()}
            for _ in range(sweep.random.samples)
        ]
        points = [{**p, **d} for p in points for d in drawn]
    out = Path(sweep.out).resolve()
    trials = []
    for params in points:
        for seed in sweep.seeds:
            name = trial_name(params, seed)
            data = json.loads(json.dumps(base))
            for key, value in params.items():
                set_dotted(data, key, value)
            data.update(seed=seed, out=str(out / "trials" / name), progress_bar=False)
            setting = ", ".join([f"seed={seed}", *(f"{k}={v}" for k, v in params.items())])
            what = f"{sweep_path}: trial {name} ({setting}) of {base_path}"
            cfg = parse_config(data, what)
            trials.append(
                {"name": name, "params": params, "seed": seed, "config": config_data(cfg)}
            )
    return trials


def trial_finished(run_dir: Path) -> bool:
    """A trial is finished once its bot is written (``train/ppo.py`` exports last)."""
    return (run_dir / "bot.json").is_file() and (run_dir / "bot.onnx").is_file()


def run_trial(trial: dict[str, Any], config_file: Path) -> dict[str, Any]:
    """Train one trial to its end (or find it finished) and return its record; ``train/ppo.py``'s
    run-folder contract decides a new run or a resume, with its checks."""
    import torch

    from train.common.runs import prepare_run
    from train.sb3.run import PPO_RUN, Trainer, holds_a_run

    run_dir = Path(trial["config"]["out"])
    status = "finished before"
    if not trial_finished(run_dir):
        resume = holds_a_run(run_dir)
        status = "resumed" if resume else "trained"
        torch.set_num_threads(1)
        cfg, run_dir = prepare_run(PPO_RUN, str(config_file), str(run_dir), resume)
        Trainer(cfg, run_dir, resume).run()
    return trial_record(trial, run_dir, status)


def trial_record(trial: dict[str, Any], run_dir: Path, status: str) -> dict[str, Any]:
    final = run_dir / "final_eval.json"
    results = json.loads(final.read_text()) if final.is_file() else {}
    return {
        "name": trial["name"],
        "seed": trial["seed"],
        "params": trial["params"],
        "status": status,
        "run_dir": str(run_dir),
        "bot": str(run_dir / "bot.onnx"),
        "final_eval": {
            opp: {"win_rate": r["win_rate"], "ci95": list(r["ci95"]), "rounds": r["rounds"]}
            for opp, r in results.items()
        },
    }


def _trainable() -> Any:
    """The Tune trainable: a class (its ``step`` runs on the actor's main thread, where
    ``train/ppo.py`` installs its Ctrl-C handlers; a function trainable runs in a thread). Tune's
    config holds only the trial's name (its status tables stay short); the plan comes with
    ``tune.with_parameters``."""
    from ray import tune

    class MainJobTrial(tune.Trainable):
        def setup(self, config: dict[str, Any], plan: dict[str, dict[str, Any]]) -> None:
            self.trial = plan[config["trial"]]

        def step(self) -> dict[str, Any]:
            record = run_trial(self.trial, Path(self.trial["config_file"]))
            return {"status": record["status"], "done": True}

        # the trial's state is its run folder (train/ppo.py's checkpoints): Tune's checkpoint
        # of a trial, which it takes when it pauses or restores one, only names that folder
        def save_checkpoint(self, checkpoint_dir: str) -> dict[str, Any]:
            return {"run_dir": self.trial["config"]["out"]}

        def load_checkpoint(self, checkpoint: Any) -> None:
            pass

    return MainJobTrial


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Across the seeds of each point: per opponent the mean and standard deviation of the
    win rates; and the best bot (the highest mean win rate over the opponents)."""
    import numpy as np

    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(json.dumps(r["params"], sort_keys=True), []).append(r)
    points = []
    for key, rs in groups.items():
        opps = sorted({o for r in rs for o in r["final_eval"]})
        stats = {}
        for opp in opps:
            rates = np.array(
                [r["final_eval"][opp]["win_rate"] for r in rs if opp in r["final_eval"]]
            )
            stats[opp] = {
                "mean": float(rates.mean()),
                "std": float(rates.std(ddof=1)) if len(rates) > 1 else 0.0,
                "seeds": len(rates),
            }
        points.append({"params": json.loads(key), "trials": len(rs), "win_rates": stats})

    def score(r: dict[str, Any]) -> float:
        fe = r["final_eval"]
        return float(np.mean([v["win_rate"] for v in fe.values()])) if fe else -1.0

    best = max(records, key=score) if records else None
    return {
        "points": points,
        "best": None if best is None else best["name"],
        "best_bot": None if best is None else best["bot"],
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def render_table(records: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    """The results as Markdown: one row per trial, then the mean and std across seeds."""
    opps = sorted({o for r in records for o in r["final_eval"]})
    keys = sorted({k for r in records for k in r["params"]})
    lines = [_row(["trial", "seed", *keys, *(f"vs {o} (95% CI)" for o in opps), "status"])]
    lines.append("|" + "---|" * (3 + len(keys) + len(opps)))
    for r in records:
        cells = [r["name"], str(r["seed"]), *(str(r["params"].get(k, "")) for k in keys)]
        for o in opps:
            fe = r["final_eval"].get(o)
            lo, hi = fe["ci95"] if fe else (0, 0)
            cells.append(f"{_pct(fe['win_rate'])} ({_pct(lo)}-{_pct(hi)})" if fe else "-")
        lines.append(_row([*cells, r["status"]]))
    lines += ["", _row(["setting", "seeds", *(f"vs {o}: mean ± std" for o in opps)])]
    lines.append("|" + "---|" * (2 + len(opps)))
    for p in summary["points"]:
        desc = ", ".join(f"{k}={v}" for k, v in p["params"].items()) or "(base config)"
        rates = p["win_rates"]
        cells = [
            f"{_pct(rates[o]['mean'])} ± {_pct(rates[o]['std'])}" if o in rates else "-"
            for o in opps
        ]
        lines.append(_row([desc, str(p["trials"]), *cells]))
    if summary["best"]:
        lines += ["", f"best bot: {summary['best_bot']} (trial {summary['best']})"]
    return "\n".join(lines) + "\n"


def ray_temp_dir(out: Path) -> Path:
    """``<out>/.ray`` when short enough for Ray's socket paths, else a short temp folder."""
    here = out / ".ray"
    if len(str(here)) <= MAX_TEMP_DIR:
        return here
    key = hashlib.sha256(str(out).encode()).hexdigest()[:8]
    return Path(tempfile.gettempdir()) / f"racko-sweep-{key}"


def run_sweep(sweep_path: Path, address: str | None = None) -> list[dict[str, Any]]:
    """Plan, run (or resume) every trial on Ray Tune, write and return the records."""
    sweep = parse_config(read_yaml(sweep_path), str(sweep_path), SweepConfig)
    trials = plan_trials(sweep, sweep_path)
    out = Path(sweep.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for t in trials:  # each trial's run config, as train/ppo.py --config would read it
        t["config_file"] = str(out / "configs" / f"{t['name']}.yaml")
        write_yaml_atomic(t["config_file"], t["config"])
    write_json_atomic(out / "plan.json", trials)
    print(f"sweep: {len(trials)} trials ({len(sweep.seeds)} seeds) in {out}", flush=True)
    # one experiment per plan: a changed sweep config is a new experiment (the trials' run
    # folders, named by their settings, are still found and reused)
    digest = hashlib.sha256(json.dumps(trials, sort_keys=True).encode()).hexdigest()[:8]
    storage, name = out / "tune", f"sweep-{digest}"
    temp = ray_temp_dir(out)
    if not address and temp != out / ".ray":
        print(f"Ray's session files: {temp} ({out / '.ray'} is too long for its sockets)")
    start_ray(address, out, temp, os.cpu_count() or 1, 0)  # before Ray is imported here
    import ray
    from ray import tune
    from ray.tune import RunConfig, TuneConfig

    try:
        plan = {t["name"]: t for t in trials}
        trainable = tune.with_resources(
            tune.with_parameters(_trainable(), plan=plan), {"cpu": sweep.cpus_per_trial}
        )
        space = {"trial": tune.grid_search(list(plan))}
        if tune.Tuner.can_restore(str(storage / name)):
            print(f"sweep: resuming {storage / name}", flush=True)
            tuner = tune.Tuner.restore(
                str(storage / name), trainable, resume_unfinished=True, restart_errored=True
            )
        else:
            tuner = tune.Tuner(
                trainable,
                param_space=space,
                tune_config=TuneConfig(
                    max_concurrent_trials=sweep.max_concurrent or None, reuse_actors=False
                ),
                run_config=RunConfig(
                    name=name, storage_path=str(storage), verbose=1, log_to_file=True
                ),
            )
        grid = tuner.fit()
        errors = [r.error for r in grid if r.error is not None]
    finally:
        ray.shutdown()
    if errors:
        last = str(errors[0]).strip().splitlines()[-1]
        raise RunFolderError(
            f"{len(errors)} trial(s) failed (logs in {storage / name}); first: {last}"
        )
    records = []
    for t in trials:
        run_dir = Path(t["config"]["out"])
        status = "finished" if trial_finished(run_dir) else "unfinished"
        records.append(trial_record(t, run_dir, status))
    summary = summarize(records)
    table = render_table(records, summary)
    write_json_atomic(out / "results.json", {"trials": records, **summary})
    write_text_atomic(out / "results.md", table)
    print(table, flush=True)
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Seeds and sweeps of train/ppo.py's main job as Ray Tune trials."
    )
    parser.add_argument("--config", required=True, help="sweep config (configs/sweep_2p.yaml)")
    parser.add_argument(
        "--address",
        default=os.environ.get("RAY_ADDRESS") or None,
        help="join a running Ray cluster: 'auto' or HOST:PORT (default: a local Ray instance)",
    )
    args = parser.parse_args(argv)
    from train.rllib.cluster import UserError

    try:
        run_sweep(Path(args.config), args.address)
    except (*front_door.user_errors(), UserError) as exc:
        return front_door.fail("sweep", exc)
    return 0
