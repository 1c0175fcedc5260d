"""Train a Rack-O bot with MaskablePPO and self-play: ``python train/ppo.py --config configs/2p.yaml``.

The run folder (``out`` in the config, ``--out``) receives: ``config.yaml`` (the resolved config),
``tb/`` (TensorBoard logs), ``checkpoints/`` (every ``checkpoint_every`` steps; ``--resume``
continues from the newest with nothing lost), ``eval_history.json`` (periodic win rates),
``final_model.zip``, ``final_eval.json`` and the exported bot ``bot.onnx`` + ``bot.json``.
Same seed + config -> same run (on the same machine, same VecEnv kind and ``n_envs``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np
import yaml
from stable_baselines3.common.callbacks import BaseCallback

from train.config import TrainConfig, load_config

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def build_model(cfg: TrainConfig, env: Any, tensorboard_log: str | None = None) -> Any:
    """A fresh MaskablePPO with the config's hyperparameters and policy (CPU, seeded)."""
    import torch
    from sb3_contrib import MaskablePPO

    from train.policy import policy_kwargs

    p = cfg.ppo
    if p.policy == "structured":
        policy, kwargs = policy_kwargs(
            "structured", cfg.num_players, slot_hidden=p.slot_hidden, trunk_hidden=p.net_arch
        )
    else:
        act = torch.nn.Tanh if p.activation == "tanh" else torch.nn.ReLU
        policy, kwargs = policy_kwargs(
            "flat", cfg.num_players, net_arch=list(p.net_arch), activation_fn=act
        )
    return MaskablePPO(
        policy,
        env,
        learning_rate=p.learning_rate,
        n_steps=p.n_steps,
        batch_size=p.batch_size,
        n_epochs=p.n_epochs,
        gamma=p.gamma,
        gae_lambda=p.gae_lambda,
        clip_range=p.clip_range,
        ent_coef=p.ent_coef,
        vf_coef=p.vf_coef,
        max_grad_norm=p.max_grad_norm,
        target_kl=p.target_kl,
        policy_kwargs=kwargs,
        tensorboard_log=tensorboard_log,
        seed=cfg.seed,
        device="cpu",
        verbose=0,
    )


def wrap_features(cfg: TrainConfig, vec_env: Any) -> Any:
    """The structured policy's features computed once per observation (``train.feature_cache``)."""
    if cfg.ppo.policy != "structured":
        return vec_env
    from racko_env.rules import deck_size
    from train.feature_cache import FeatureCache

    return FeatureCache(vec_env, deck_size(cfg.num_players))


def make_snapshot(model: Any, name: str = "snapshot") -> Any:
    """A frozen copy of the learner that plays batches: a self-play opponent, an evaluated bot."""
    from train.policy import FrozenPolicy, StructuredPolicy
    from train.selfplay import snapshot_from_model

    if isinstance(model.policy, StructuredPolicy):
        return FrozenPolicy(model.policy, name)
    return snapshot_from_model(model, name)


def init_policy_from(model: Any, path: str | Path) -> None:
    """Copy a saved model's policy weights (actor and critic) into ``model``.

    The saved network must have the config's shape; a mismatch names both shapes rather than
    failing inside torch.
    """
    from sb3_contrib import MaskablePPO

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"init_from: no saved model at {path}")
    source = MaskablePPO.load(path, device="cpu").policy.state_dict()
    target = model.policy.state_dict()
    theirs = {k: tuple(v.shape) for k, v in source.items()}
    ours = {k: tuple(v.shape) for k, v in target.items()}
    if theirs != ours:
        diff = sorted(k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k))
        raise ValueError(
            f"init_from {path}: its network does not match ppo.net_arch; first differences: "
            + ", ".join(f"{k} {theirs.get(k)} vs {ours.get(k)}" for k in diff[:3])
        )
    model.policy.load_state_dict(source)


def evaluate_against(
    player: Any, cfg: TrainConfig, opponents: list[str], rounds: int, seed: int
) -> dict[str, Any]:
    """Duplicate rounds of a batch policy against fixed bots (``train.batched_duplicate``).

    2 players: head to head with each opponent. 3-4 players: one table of the player and all the
    opponents together, in every distinct seating (with 4 players and 2 opponents, every table of
    the three that fills the seats). Per opponent: the player's win rate with its 95% interval
    and that opponent's; a table's win rates add up to 1.
    """
    from agents.batched import load_batch
    from train.batched_duplicate import play_duplicate

    rules = cfg.rules_options()
    groups = [[opp] for opp in opponents] if cfg.num_players == 2 else [list(opponents)]
    out: dict[str, Any] = {}
    for group in groups:
        bots = [load_batch(o, cfg.num_players, seed=seed, **rules) for o in group]
        labels = ["learner", *group]
        rep = play_duplicate([player, *bots], labels, cfg.num_players, rules, rounds, seed)
        me = rep["bots"]["learner"]
        for opp in group:
            out[opp] = {
                "opponent": opp,
                "table": labels,
                "rounds": rounds,
                "win_rate": me["win_rate"],
                "ci95": me["ci95"],
                "opponent_win_rate": rep["bots"][opp]["win_rate"],
                "opponent_ci95": rep["bots"][opp]["ci95"],
                "seats": me["seats"],
                "format": rep["format"],
                "seed": seed,
            }
    return out


def final_evaluation(model: Any, cfg: TrainConfig, run_dir: Path) -> dict[str, Any]:
    """The deterministic policy against each ``final_eval`` opponent, saved to final_eval.json."""
    f = cfg.final_eval
    results = evaluate_against(make_snapshot(model, "final"), cfg, f.opponents, f.rounds, f.seed)
    _write_json(run_dir / "final_eval.json", results)
    return results


def describe_eval(results: dict[str, Any]) -> str:
    """``vs heuristic 83.1% (81.4-84.7%), vs expert 49.2% (47.0-51.4%)``; at a table of 3-4
    players, the learner's win rate once and each opponent's beside it."""
    if not results:
        return "no opponents"
    first = next(iter(results.values()))
    if len(first["table"]) > 2:
        lo, hi = first["ci95"]
        others = ", ".join(f"{o} {r['opponent_win_rate']:.1%}" for o, r in results.items())
        return f"at the table: learner {first['win_rate']:.1%} ({lo:.1%}-{hi:.1%}), {others}"
    return ", ".join(
        f"vs {opp} {r['win_rate']:.1%} ({r['ci95'][0]:.1%}-{r['ci95'][1]:.1%})"
        for opp, r in results.items()
    )


def _write_json(path: Path, data: Any) -> None:
    """Write a JSON file whole or not at all (a temporary file renamed over it)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def load_policy_state(run_dir: Path) -> dict[str, Any]:
    """The trained policy's weights (actor and critic) of a finished run, by name."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(Path(run_dir) / "final_model.zip", device="cpu")
    return {k: v.clone() for k, v in model.policy.state_dict().items()}


class ProgressCallback(BaseCallback):
    """Moves the run's PPO progress line to the model's step count (the whole run's, on resume)."""

    def __init__(self, progress: Any) -> None:
        super().__init__()
        self.progress = progress

    def _on_step(self) -> bool:
        self.progress.update(self.num_timesteps)
        return True


class Trainer:
    """One training run: builds or resumes the model, wires callbacks, trains, exports."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, resume: bool) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.resume = resume
        self.eval_history: list[dict[str, Any]] = []
        self.minutes_before = 0.0  # wall minutes of the earlier sessions of a resumed run

    def run(self) -> Path:
        from train.progress import RunProgress

        self.progress = RunProgress(
            self.run_dir / "train.log", live=None if self.cfg.progress_bar else False
        )
        try:
            return self._run()
        finally:
            self.progress.close()

    def _run(self) -> Path:
        import torch
        from sb3_contrib import MaskablePPO

        from train.checkpoint import latest_checkpoint, load_state, restore_rngs
        from train.envs import make_vec_env, restore_env_states
        from train.selfplay import SELF, SnapshotPool, StopOnSignal, push_pool

        cfg, log = self.cfg, self.progress.log
        torch.set_num_threads(cfg.torch_threads)
        log(
            f"racko PPO: {cfg.num_players} players, {cfg.ppo.policy} policy, "
            f"{cfg.total_steps:,} env steps, run folder {self.run_dir}"
        )
        self.pool = SnapshotPool(cfg.selfplay.pool_size, cfg.selfplay.latest_weight)
        base = {k: v for k, v in cfg.opponents.items() if k != SELF and v > 0}
        first_specs, first_weights = (
            (list(base), list(base.values())) if base else (["random"], [1])
        )
        vec_env = wrap_features(cfg, make_vec_env(cfg, first_specs, first_weights))
        state: dict[str, Any] = {}
        ckpt = latest_checkpoint(self.run_dir) if self.resume else None
        if self.resume and ckpt is None:
            raise FileNotFoundError(f"--resume: no checkpoint in {self.run_dir / 'checkpoints'}")
        if ckpt is not None:
            log(f"resuming from {ckpt}")
            model = MaskablePPO.load(
                ckpt / "model.zip",
                env=vec_env,
                force_reset=False,
                device="cpu",
                tensorboard_log=str(self.run_dir / "tb"),
            )
            self.pool.load(ckpt / "pool", template=model.policy)
            state = load_state(ckpt)
            self.eval_history = state["extra"]["eval_history"]
            self.minutes_before = max(
                (r.get("minutes", 0.0) for r in self.eval_history), default=0.0
            )
            push_pool(vec_env, *self.pool.mix(cfg.opponents))
            restore_env_states(vec_env, state["env_states"])
            if hasattr(vec_env, "last_obs"):  # the shaping wrapper's view of the last step
                vec_env.last_obs = model._last_obs.copy()
            restore_rngs(state)
        else:
            model = build_model(cfg, vec_env, tensorboard_log=str(self.run_dir / "tb"))
            if cfg.init_from is not None:
                init_policy_from(model, cfg.init_from)
            self._clone(model, vec_env)
            self.pool.add(make_snapshot(model, "snapshot@0"))
            push_pool(vec_env, *self.pool.mix(cfg.opponents))
            self._warm_critic(model, vec_env)
        self.model, self.vec_env = model, vec_env
        if ckpt is None and cfg.eval.rounds and model.num_timesteps == 0:
            self._evaluate(None)  # where PPO starts from: the warm start's strength
        callbacks = self._callbacks(state.get("extra", {}))
        remaining = cfg.total_steps - model.num_timesteps
        t0, steps0 = time.time(), model.num_timesteps
        stopper = StopOnSignal()
        old = {sig: signal.signal(sig, stopper.request_stop) for sig in STOP_SIGNALS}
        self.progress.start("PPO", cfg.total_steps, "env steps", done=model.num_timesteps)
        try:
            if remaining > 0:
                model.learn(
                    remaining,
                    callback=[*callbacks, stopper, ProgressCallback(self.progress)],
                    reset_num_timesteps=ckpt is None,
                    tb_log_name="ppo",
                )
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
        self.progress.finish()
        elapsed = time.time() - t0
        self._write_timing(elapsed, model.num_timesteps - steps0)
        self._checkpoint()
        model.save(self.run_dir / "final_model.zip")
        vec_env.close()
        self._final_eval()
        from train.export import export_run

        self.progress.start("export", 1, "files")
        onnx_path, _ = export_run(self.run_dir)
        self.progress.update(1)
        self.progress.finish()
        log(f"exported {onnx_path}")
        return onnx_path

    def _clone(self, model: Any, vec_env: Any) -> None:
        """Behaviour cloning of the actor from the teacher bot (config ``pretrain``).

        The teacher's decisions are collected in chunks of 10,000 (each its own seeded batch of
        games) so that the progress line moves; the record goes to warmstart.json.
        """
        from train.pretrain import BATCHED_TEACHERS, collect_teacher_data
        from train.warmstart import clone_actor

        cfg, pre = self.cfg, self.cfg.pretrain
        if pre.decisions == 0:
            return
        t0 = time.time()
        self.progress.start(f"teacher decisions ({pre.teacher})", pre.decisions, "decisions")
        parts, done, chunk = [], 0, 10_000
        while done < pre.decisions:
            k = min(chunk, pre.decisions - done)
            parts.append(
                collect_teacher_data(
                    pre.teacher,
                    cfg.num_players,
                    cfg.rules_options(),
                    k,
                    cfg.seed + done // chunk,
                    cfg.episode,
                    batched=pre.teacher in BATCHED_TEACHERS,
                )
            )
            done += k
            self.progress.update(done)
        obs, masks, actions = (np.concatenate(x) for x in zip(*parts, strict=True))
        inputs = (
            np.concatenate([vec_env.augment(obs[i : i + 8192]) for i in range(0, len(obs), 8192)])
            if hasattr(vec_env, "augment")
            else obs
        )
        t1 = time.time()
        self.progress.start("cloning the actor", pre.epochs, "epochs")
        info = clone_actor(
            model.policy,
            inputs,
            masks,
            actions,
            pre.epochs,
            pre.batch_size,
            pre.learning_rate,
            cfg.seed,
            progress=self.progress.hook,
        )
        self.progress.finish()
        self.warmstart = {
            "teacher": pre.teacher,
            "decisions": pre.decisions,
            "collect_seconds": round(t1 - t0, 1),
            "fit_seconds": round(time.time() - t1, 1),
            **info,
        }
        _write_json(self.run_dir / "warmstart.json", self.warmstart)
        self.progress.log(
            f"cloned {pre.teacher}: agreement {info['agreement']:.1%} on {info['holdout']:,} "
            "held-out decisions"
        )

    def _warm_critic(self, model: Any, vec_env: Any) -> None:
        """Fit the critic alone to the returns the (cloned) actor gets in the training env."""
        from train.warmstart import rollout_returns, warm_critic

        cfg, pre = self.cfg, self.cfg.pretrain
        if pre.critic_steps == 0:
            return
        t0 = time.time()
        self.progress.start("critic warm-up: playing", pre.critic_steps, "env steps")
        inputs, returns = rollout_returns(
            model.policy, vec_env, pre.critic_steps, cfg.ppo.gamma, cfg.seed, self.progress.hook
        )
        self.progress.start("critic warm-up: fitting", pre.critic_epochs, "epochs")
        info = warm_critic(
            model.policy,
            inputs,
            returns,
            pre.critic_epochs,
            1024,
            1e-3,
            cfg.seed,
            progress=self.progress.hook,
        )
        self.progress.finish()
        self.warmstart = {
            **getattr(self, "warmstart", {}),
            "critic": {**info, "seconds": round(time.time() - t0, 1)},
        }
        _write_json(self.run_dir / "warmstart.json", self.warmstart)
        self.progress.log(
            f"critic warm-up: held-out value loss {info['value_loss_before']:.3f} -> "
            f"{info['value_loss_after']:.3f} ({info['rows']:,} decisions)"
        )

    # ----------------------------------------------------------------- callbacks

    def _callbacks(self, extra: dict[str, Any]) -> list[Any]:
        from train.selfplay import PeriodicCallback, SelfPlayCallback

        cfg = self.cfg
        self.selfplay = SelfPlayCallback(
            self.pool, cfg.opponents, cfg.selfplay.every_updates, make_snapshot
        )
        self.selfplay.last_update = extra.get("selfplay_last_update", 0)
        self.periodic = {
            "eval": PeriodicCallback(cfg.eval.every_steps, lambda cb: self._evaluate(cb)),
            "checkpoint": PeriodicCallback(cfg.checkpoint_every, lambda cb: self._checkpoint()),
        }
        for key, cb in self.periodic.items():
            cb.last_mark = extra.get(f"{key}_last_mark", 0)
        return [self.selfplay, *self.periodic.values()]

    def _checkpoint(self) -> Path:
        from train.checkpoint import save_checkpoint
        from train.envs import env_states

        extra = {
            "selfplay_last_update": self.selfplay.last_update,
            "eval_history": self.eval_history,
            **{f"{k}_last_mark": cb.last_mark for k, cb in self.periodic.items()},
        }
        return save_checkpoint(self.run_dir, self.model, self.pool, env_states(self.vec_env), extra)

    def _evaluate(self, cb: Any) -> None:
        """Duplicate rounds against ``eval.opponents``: a line, a history row, TensorBoard."""
        cfg = self.cfg
        t0 = time.time()
        results = evaluate_against(
            make_snapshot(self.model, "eval"),
            cfg,
            cfg.eval.opponents,
            cfg.eval.rounds,
            cfg.eval.seed,
        )
        steps = int(self.model.num_timesteps)
        row: dict[str, Any] = {
            "timesteps": steps,
            "minutes": round(self.minutes_before + (time.monotonic() - self.progress.t0) / 60, 2),
            "rounds": cfg.eval.rounds,
        }
        for opp, res in results.items():
            row[opp] = res["win_rate"]
            row[f"{opp}_ci95"] = res["ci95"]
            if cb is not None:
                cb.logger.record(f"eval/win_rate_vs_{opp}", res["win_rate"])
        self.eval_history.append(row)
        _write_json(self.run_dir / "eval_history.json", self.eval_history)
        self.progress.log(
            f"eval at {steps:,} env steps ({cfg.eval.rounds:,} duplicate rounds, "
            f"{time.time() - t0:.0f} s): {describe_eval(results)}"
        )

    def _final_eval(self) -> None:
        cfg = self.cfg
        if cfg.final_eval.rounds == 0:
            return
        self.progress.log(
            f"final evaluation: {cfg.final_eval.rounds:,} duplicate rounds against "
            f"{', '.join(cfg.final_eval.opponents)}"
        )
        results = final_evaluation(self.model, cfg, self.run_dir)
        self.progress.log(f"final evaluation: {describe_eval(results)}")

    def _write_timing(self, seconds: float, steps: int) -> None:
        path = self.run_dir / "timing.json"
        sessions = json.loads(path.read_text()) if path.is_file() else []
        sessions.append(
            {"seconds": round(seconds, 1), "env_steps": steps, "steps_per_s": steps / seconds}
        )
        path.write_text(json.dumps(sessions, indent=1))
        self.progress.log(
            f"trained {steps:,} env steps in {seconds:.0f} s ({steps / max(seconds, 1e-9):.0f}/s)"
        )


def prepare_run(
    config: str | None,
    out: str | None,
    seed: int | None,
    total_steps: int | None,
    resume: bool,
) -> tuple[TrainConfig, Path]:
    """Resolve the config (a resumed run reads its own saved config) and the run folder."""
    if resume:
        if out is None and config is None:
            raise ValueError("--resume needs --out RUN_DIR or the --config that names it")
        run_dir = Path(out) if out else Path(load_config(config).out)
        saved = run_dir / "config.yaml"
        if not saved.is_file():
            raise FileNotFoundError(f"--resume: {saved} not found")
        cfg = load_config(saved, total_steps=total_steps)
        saved.write_text(yaml.safe_dump(cfg.model_dump(), sort_keys=False))
        if seed is not None and seed != cfg.seed:
            raise ValueError(f"--resume: the run was started with seed {cfg.seed}, not {seed}")
        return cfg, run_dir
    if config is None:
        raise ValueError("--config is required (e.g. configs/2p.yaml)")
    cfg = load_config(config, seed=seed, total_steps=total_steps, out=out)
    run_dir = Path(cfg.out)
    if (run_dir / "checkpoints").is_dir() and any((run_dir / "checkpoints").iterdir()):
        raise FileExistsError(
            f"{run_dir} already holds a run; use --resume to continue it or --out for a new one"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(), sort_keys=False))
    return cfg, run_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Train a Rack-O bot with MaskablePPO + self-play.")
    parser.add_argument("--config", help="YAML config (configs/2p.yaml, configs/smoke.yaml, ...)")
    parser.add_argument("--seed", type=int, help="override the config's seed")
    parser.add_argument("--total-steps", type=int, help="override total env steps")
    parser.add_argument("--out", help="override the run folder")
    parser.add_argument(
        "--resume", action="store_true", help="continue the run in --out (or the config's out)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    cfg, run_dir = prepare_run(args.config, args.out, args.seed, args.total_steps, args.resume)
    if args.no_progress:
        cfg = cfg.model_copy(update={"progress_bar": False})
    Trainer(cfg, run_dir, args.resume).run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
