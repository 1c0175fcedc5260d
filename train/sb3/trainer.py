"""One PPO training run (``train/ppo.py``), by phase: resume or warm start, learn, evaluate,
finish (final weights, final evaluation, export)."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from train.common.config import TrainConfig, config_data
from train.common.files import RunFolderError, write_json_atomic
from train.common.runs import FINAL_MODEL
from train.sb3.evaluation import describe_eval, evaluate_against, final_evaluation
from train.sb3.export import export_ppo_run
from train.sb3.model import build_model, init_policy_from, make_snapshot, wrap_features

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class ProgressCallback(BaseCallback):
    """Moves the run's PPO phase to the model's step count (the whole run's, on resume)."""

    def __init__(self, phase: Any) -> None:
        super().__init__()
        self.phase = phase

    def _on_step(self) -> bool:
        self.phase.update(self.num_timesteps)
        return True


class Trainer:
    """One training run: build, then resume from a checkpoint or warm start, learn, finish."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, resume: bool) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.resume = resume
        self.eval_history: list[dict[str, Any]] = []
        self.last_checkpoint: Path | None = None
        self.minutes_before = 0.0  # wall minutes of the earlier sessions of a resumed run
        self.warmstart: dict[str, Any] = {}

    def run(self) -> Path:
        from train.common.progress import RunLog

        self.log = RunLog(self.run_dir / "train.log", bars=self.cfg.progress_bar)
        self.t0 = time.monotonic()
        try:
            return self._run()
        finally:
            self.log.close()

    def _run(self) -> Path:
        import torch

        from train.sb3.checkpoint import CHECKPOINTS

        cfg = self.cfg
        torch.set_num_threads(cfg.torch_threads)
        self.log.info(
            f"racko PPO: {cfg.num_players} players, {cfg.ppo.policy} policy, "
            f"{cfg.total_steps:,} env steps, run folder {self.run_dir}"
        )
        self._build()
        ckpt = CHECKPOINTS.latest(self.run_dir) if self.resume else None
        if self.resume and ckpt is None:  # prepare_run checked it; the folder changed since
            raise RunFolderError(f"--resume: no complete checkpoint in {self.run_dir}")
        if ckpt is not None:
            state = self._resume_from(ckpt)
        else:
            state = {}
            self._warm_start()
            if cfg.eval.opponents:
                self._evaluate(None)  # where PPO starts from: the warm start's strength
        timesteps = self._learn(state.get("extra", {}), fresh=ckpt is None)
        return self._finish(timesteps)

    # ----------------------------------------------------------------- phases

    def _build(self) -> None:
        """The snapshot pool, the VecEnv (the config's opponents first) and a fresh model."""
        from train.sb3.envs import make_vec_env
        from train.sb3.selfplay import SELF, SnapshotPool

        cfg = self.cfg
        self.pool = SnapshotPool(cfg.selfplay.pool_size, cfg.selfplay.latest_weight)
        base = {k: v for k, v in cfg.opponents.items() if k != SELF and v > 0}
        first_specs, first_weights = (
            (list(base), list(base.values())) if base else (["random"], [1])
        )
        self.vec_env = wrap_features(cfg, make_vec_env(cfg, first_specs, first_weights))
        self.model = build_model(cfg, self.vec_env, tensorboard_log=str(self.run_dir / "tb"))

    def _resume_from(self, ckpt: Path) -> dict[str, Any]:
        """Model, optimizer, pool, games and random streams as the checkpoint left them."""
        from train.sb3.checkpoint import load_checkpoint, restore_rngs
        from train.sb3.envs import restore_env_states
        from train.sb3.selfplay import push_pool

        cfg, model, vec_env = self.cfg, self.model, self.vec_env
        self.log.info(f"resuming from {ckpt}")
        state = load_checkpoint(ckpt, model, self.pool)
        self.last_checkpoint = ckpt
        self.eval_history = state["extra"]["eval_history"]
        self.minutes_before = max((r.get("minutes", 0.0) for r in self.eval_history), default=0)
        push_pool(vec_env, *self.pool.mix(cfg.opponents))
        if restore_env_states(vec_env, state["env_state"]):
            if hasattr(vec_env, "last_obs"):  # the shaping wrapper's view of the last step
                vec_env.last_obs = model._last_obs.copy()
        else:  # no saved games (Dummy/Subproc VecEnv): deal afresh, seeded by the step
            vec_env.seed(cfg.seed + model.num_timesteps)
            model._last_obs = None
        restore_rngs(state)
        return state

    def _warm_start(self) -> None:
        """A new run: ``init_from``, cloning the teacher, the first snapshot, the critic."""
        from train.sb3.selfplay import push_pool

        cfg, model, vec_env = self.cfg, self.model, self.vec_env
        if cfg.init_from is not None:
            init_policy_from(model, cfg.init_from)
            self.log.info(f"started from the actor and critic of {cfg.init_from}")
        self._clone(model, vec_env)
        self.pool.add(make_snapshot(model, "snapshot@0"))
        push_pool(vec_env, *self.pool.mix(cfg.opponents))
        self._warm_critic(model, vec_env)

    def _learn(self, extra: dict[str, Any], fresh: bool) -> int:
        """PPO up to ``total_steps`` (Ctrl-C stops at the next rollout boundary, checkpointed);
        the env steps trained."""
        from train.sb3.selfplay import StopOnSignal

        cfg, model = self.cfg, self.model
        callbacks = self._callbacks(extra)
        remaining = cfg.total_steps - model.num_timesteps
        t0, steps0 = time.time(), model.num_timesteps
        stopper = StopOnSignal(on_stop=self._checkpoint)
        old = {sig: signal.signal(sig, stopper.request_stop) for sig in STOP_SIGNALS}
        try:
            with self.log.phase(
                "PPO", cfg.total_steps, "env steps", start=model.num_timesteps
            ) as phase:
                if remaining > 0:
                    model.learn(
                        remaining,
                        callback=[*callbacks, stopper, ProgressCallback(phase)],
                        reset_num_timesteps=fresh,
                        tb_log_name="ppo",
                    )
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
        if stopper.stopped_at is None:  # finished: this is a rollout boundary
            self._checkpoint()
            timesteps = int(model.num_timesteps)
        else:  # stopped: the checkpoint at the boundary holds; one discarded step came after it
            timesteps = stopper.stopped_at
        self._write_timing(time.time() - t0, timesteps - steps0)
        return timesteps

    def _finish(self, timesteps: int) -> Path:
        """The final weights, the final evaluation and the bot files."""
        from train.sb3.checkpoint import save_weights

        save_weights(self.model, self.run_dir / FINAL_MODEL, timesteps)
        self.vec_env.close()
        self._final_eval()
        self.log.info("export: tracing the policy to ONNX and checking it on 300 observations")
        onnx_path, _ = export_ppo_run(self.run_dir)
        self.log.info(f"exported {onnx_path} (its manifest: {onnx_path.with_suffix('.json')})")
        return onnx_path

    # ----------------------------------------------------------------- warm start

    def _clone(self, model: Any, vec_env: Any) -> None:
        """Behaviour cloning of the actor from the teacher bot (config ``pretrain``).

        The teacher's decisions are collected in chunks of 10,000 (each its own seeded batch of
        games) so that progress shows; the record goes to warmstart.json.
        """
        from train.sb3.pretrain import BATCHED_TEACHERS, collect_teacher_data
        from train.sb3.warmstart import clone_actor

        cfg, pre = self.cfg, self.cfg.pretrain
        if pre.decisions == 0:
            return
        t0 = time.time()
        parts, chunk = [], 10_000
        with self.log.phase(f"teacher decisions ({pre.teacher})", pre.decisions, "decisions") as ph:
            while ph.done < pre.decisions:
                k = min(chunk, pre.decisions - ph.done)
                parts.append(
                    collect_teacher_data(
                        pre.teacher,
                        cfg.num_players,
                        cfg.rules_options(),
                        k,
                        cfg.seed + ph.done // chunk,
                        cfg.episode,
                        batched=pre.teacher in BATCHED_TEACHERS,
                    )
                )
                ph.advance(k)
        obs, masks, actions = (np.concatenate(x) for x in zip(*parts, strict=True))
        augment = getattr(vec_env, "augment", None)
        inputs = obs
        if augment is not None:  # the structured policy's features, once per decision
            parts = []
            with self.log.phase("features of the decisions", len(obs), "decisions") as ph:
                for i in range(0, len(obs), 8192):
                    parts.append(augment(obs[i : i + 8192]))
                    ph.advance(len(parts[-1]))
            inputs = np.concatenate(parts)
        t1 = time.time()
        with self.log.phase("cloning the actor", pre.epochs, "epochs", every_s=0.0) as ph:
            info = clone_actor(
                model.policy,
                inputs,
                masks,
                actions,
                pre.epochs,
                pre.batch_size,
                pre.learning_rate,
                cfg.seed,
                progress=ph.hook,
            )
        self.warmstart = {
            "teacher": pre.teacher,
            "decisions": pre.decisions,
            "collect_seconds": round(t1 - t0, 1),
            "fit_seconds": round(time.time() - t1, 1),
            **info,
        }
        write_json_atomic(self.run_dir / "warmstart.json", self.warmstart)
        self.log.info(
            f"cloned {pre.teacher}: agreement {info['agreement']:.1%} on {info['holdout']:,} "
            "held-out decisions"
        )

    def _warm_critic(self, model: Any, vec_env: Any) -> None:
        """Fit the critic alone to the returns the (cloned) actor gets in the training env."""
        from train.sb3.warmstart import rollout_returns, warm_critic

        cfg, pre = self.cfg, self.cfg.pretrain
        if pre.critic_steps == 0:
            return
        t0 = time.time()
        with self.log.phase("critic warm-up: playing", pre.critic_steps, "env steps") as ph:
            inputs, returns = rollout_returns(
                model.policy, vec_env, pre.critic_steps, cfg.ppo.gamma, cfg.seed, ph.hook
            )
        with self.log.phase("critic warm-up: fitting", pre.critic_epochs, "epochs", 0.0) as ph:
            info = warm_critic(
                model.policy,
                inputs,
                returns,
                pre.critic_epochs,
                1024,
                1e-3,
                cfg.seed,
                progress=ph.hook,
            )
        self.warmstart["critic"] = {**info, "seconds": round(time.time() - t0, 1)}
        write_json_atomic(self.run_dir / "warmstart.json", self.warmstart)
        self.log.info(
            f"critic warm-up: held-out value loss {info['value_loss_before']:.3f} -> "
            f"{info['value_loss_after']:.3f} ({info['rows']:,} decisions)"
        )

    # ----------------------------------------------------------------- callbacks

    def _callbacks(self, extra: dict[str, Any]) -> list[Any]:
        from train.sb3.selfplay import PeriodicCallback, SelfPlayCallback

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
        """A checkpoint at this rollout boundary (written once, also when asked twice here)."""
        from train.sb3.checkpoint import save_checkpoint
        from train.sb3.envs import env_states

        done = self.last_checkpoint
        if done is not None and done.name == f"step_{self.model.num_timesteps:012d}":
            return done  # rewriting it would open a moment with no complete checkpoint

        extra = {
            "selfplay_last_update": self.selfplay.last_update,
            "eval_history": self.eval_history,
            **{f"{k}_last_mark": cb.last_mark for k, cb in self.periodic.items()},
        }
        self.last_checkpoint = save_checkpoint(
            self.run_dir,
            self.model,
            self.pool,
            env_states(self.vec_env),
            extra,
            config_data(self.cfg),
        )
        return self.last_checkpoint

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
            self.log,
        )
        steps = int(self.model.num_timesteps)
        self._record_eval(results, cfg.eval.rounds)
        if cb is not None:
            for opp, res in results.items():
                cb.logger.record(f"eval/win_rate_vs_{opp}", res["win_rate"])
        self.log.info(
            f"eval at {steps:,} env steps ({cfg.eval.rounds:,} duplicate rounds, "
            f"{time.time() - t0:.0f} s): {describe_eval(results)}"
        )

    def _record_eval(self, results: dict[str, Any], rounds: int, final: bool = False) -> None:
        """A row of eval_history.json: steps, wall-clock minutes, win rates with 95% intervals.

        2 players: the learner's win rate against each opponent, under the opponent's name. 3-4
        players (one table): ``learner`` and each opponent's own win rate at that table.
        """
        from train.common.eval_record import history_row, write_history

        minutes = self.minutes_before + (time.monotonic() - self.t0) / 60
        timesteps = int(self.model.num_timesteps)
        row = history_row(results, minutes, rounds, timesteps=timesteps, final=final)
        self.eval_history.append(row)
        write_history(self.run_dir, self.eval_history)

    def _final_eval(self) -> None:
        cfg = self.cfg
        if cfg.final_eval.rounds == 0:
            return
        self.log.info(
            f"final evaluation: {cfg.final_eval.rounds:,} duplicate rounds against "
            f"{', '.join(cfg.final_eval.opponents)}"
        )
        results = final_evaluation(self.model, cfg, self.run_dir, self.log)
        self.log.info(f"final evaluation: {describe_eval(results)}")
        # the learning curve ends with it (eval_history.json: the run's whole evaluation record)
        self._record_eval(results, cfg.final_eval.rounds, final=True)

    def _write_timing(self, seconds: float, steps: int) -> None:
        import json

        path = self.run_dir / "timing.json"
        sessions = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
        seconds = max(seconds, 1e-9)
        sessions.append(
            {"seconds": round(seconds, 1), "env_steps": steps, "steps_per_s": steps / seconds}
        )
        write_json_atomic(path, sessions)
        self.log.info(f"trained {steps:,} env steps in {seconds:.0f} s ({steps / seconds:.0f}/s)")
