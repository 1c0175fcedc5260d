"""The learn phase of a PPO run (``train.sb3.trainer``): its callbacks (self-play snapshots,
periodic evaluation and checkpoints, progress, the stop on Ctrl-C) and the session's timing.json.
They act at rollout boundaries (``_on_rollout_start``): the rollout buffer is empty there and the
model just updated, so a checkpoint taken there loses nothing."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from train.common.config import TrainConfig, config_data
from train.common.files import write_json_atomic
from train.common.snapshot import SnapshotPool
from train.sb3.evaluation import EvalHistory
from train.sb3.model import make_snapshot

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class ProgressCallback(BaseCallback):
    """Moves the run's PPO phase to the model's step count (the whole run's, on resume)."""

    def __init__(self, phase: Any) -> None:
        super().__init__()
        self.phase = phase

    def _on_step(self) -> bool:
        self.phase.update(self.num_timesteps)
        return True


class Checkpointer:
    """The callbacks whose state a checkpoint carries, and the checkpoint itself: the learner, its
    pool and games, the evaluation record and where each periodic callback left off."""

    def __init__(
        self, cfg: TrainConfig, run_dir: Path, model: Any, pool: Any, vec_env: Any
    ) -> None:
        self.cfg, self.run_dir = cfg, run_dir
        self.model, self.pool, self.vec_env = model, pool, vec_env
        self.last_checkpoint: Path | None = None

    def callbacks(self, extra: dict[str, Any], evals: EvalHistory) -> list[Any]:
        """Self-play snapshots, periodic evaluation and checkpoints, resumed from ``extra``."""
        cfg = self.cfg
        self.evals = evals
        self.selfplay = SelfPlayCallback(self.pool, cfg.opponents, cfg.selfplay.every_updates)
        self.selfplay.last_update = extra.get("selfplay_last_update", 0)
        self.periodic = {
            "eval": PeriodicCallback(
                cfg.eval.every_steps, lambda cb: evals.evaluate(self.model, cb)
            ),
            "checkpoint": PeriodicCallback(cfg.checkpoint_every, lambda cb: self.checkpoint()),
        }
        for key, cb in self.periodic.items():
            cb.last_mark = extra.get(f"{key}_last_mark", 0)
        return [self.selfplay, *self.periodic.values()]

    def checkpoint(self) -> Path:
        """A checkpoint at this rollout boundary (written once, also when asked twice here)."""
        from train.sb3.checkpoint import save_checkpoint

        done = self.last_checkpoint
        if done is not None and done.name == f"step_{self.model.num_timesteps:012d}":
            return done  # rewriting it would open a moment with no complete checkpoint

        extra = {
            "selfplay_last_update": self.selfplay.last_update,
            "eval_history": self.evals.rows,
            **{f"{k}_last_mark": cb.last_mark for k, cb in self.periodic.items()},
        }
        self.last_checkpoint = save_checkpoint(
            self.run_dir,
            self.model,
            self.pool,
            getattr(self.vec_env, "venv", self.vec_env).get_state(),  # under the feature cache
            extra,
            config_data(self.cfg),
        )
        return self.last_checkpoint


class SelfPlayCallback(BaseCallback):
    """Every ``every_updates`` PPO updates, freeze the learner into the pool and push the pool."""

    def __init__(self, pool: SnapshotPool, opponents: dict[str, float], every_updates: int):
        super().__init__()
        self.pool = pool
        self.opponents = opponents
        self.every_updates = every_updates
        self.last_update = 0  # the update count of the newest snapshot

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        updates = self.model.num_timesteps // (self.model.n_steps * self.model.n_envs)
        if updates > self.last_update and updates % self.every_updates == 0:
            self.pool.add(make_snapshot(self.model, f"snapshot@{self.num_timesteps}"))
            self.last_update = updates
            self.training_env.set_opponent_pool(*self.pool.mix(self.opponents))
            self.logger.record("selfplay/pool_size", len(self.pool.snapshots))


class StopOnSignal(BaseCallback):
    """Ends training on SIGINT/SIGTERM (Ctrl-C) at the next rollout boundary: there (after the
    other callbacks) ``on_stop()`` writes the checkpoint a resume continues from bit for bit, and
    collection stops after one more env step, which is discarded. A second Ctrl-C aborts at once."""

    def __init__(self, on_stop: Callable[[], Any] | None = None) -> None:
        super().__init__()
        self.on_stop = on_stop
        self.stop_requested = False
        self.stopped_at: int | None = None  # the boundary (timesteps) where the run stopped

    def request_stop(self, signum: int, frame: Any) -> None:
        if self.stop_requested:  # a second Ctrl-C aborts at once
            raise KeyboardInterrupt
        print(
            "stop requested: finishing this rollout and update, then checkpoint and export "
            "(Ctrl-C again aborts at once)",
            flush=True,
        )
        self.stop_requested = True

    def _on_rollout_start(self) -> None:
        if self.stop_requested and self.stopped_at is None:
            self.stopped_at = int(self.num_timesteps)
            if self.on_stop is not None:
                self.on_stop()

    def _on_step(self) -> bool:
        return self.stopped_at is None


class PeriodicCallback(BaseCallback):
    """Call ``fn(self)`` at the first rollout boundary after every ``every_steps`` env steps.
    ``last_mark`` (the multiple of ``every_steps`` last served) is saved in checkpoints so that a
    resumed run fires exactly where the uninterrupted run would have."""

    def __init__(self, every_steps: int, fn: Callable[[PeriodicCallback], None]):
        super().__init__()
        self.every_steps = every_steps
        self.fn = fn
        self.last_mark = 0

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        mark = self.num_timesteps // self.every_steps
        if mark > self.last_mark:
            self.last_mark = mark
            self.fn(self)


def learn_until_stop(
    model: Any, total_steps: int, callbacks: list[Any], stopper: Any, log: Any, fresh: bool
) -> None:
    """``model.learn`` up to ``total_steps``, with ``stopper`` on SIGINT/SIGTERM for the while
    (it stops at the next rollout boundary) and the PPO phase on the run's log."""
    remaining = total_steps - model.num_timesteps
    old = {sig: signal.signal(sig, stopper.request_stop) for sig in STOP_SIGNALS}
    try:
        with log.phase("PPO", total_steps, "env steps", start=model.num_timesteps) as phase:
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


def write_timing(run_dir: Path, seconds: float, steps: int, log: Any) -> None:
    """This session's speed, appended to timing.json (one entry per session of the run)."""
    path = run_dir / "timing.json"
    sessions = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    seconds = max(seconds, 1e-9)
    sessions.append(
        {"seconds": round(seconds, 1), "env_steps": steps, "steps_per_s": steps / seconds}
    )
    write_json_atomic(path, sessions)
    log.info(f"trained {steps:,} env steps in {seconds:.0f} s ({steps / seconds:.0f}/s)")
