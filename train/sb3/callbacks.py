"""The learn phase of a PPO run (``train.sb3.trainer``): its callbacks (self-play snapshots,
periodic evaluation and checkpoints, progress), the checkpoint at a rollout boundary, the stop on
Ctrl-C or SIGTERM, and the session's timing record (timing.json)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from train.common.config import TrainConfig, config_data
from train.common.files import write_json_atomic
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
        from train.sb3.selfplay import PeriodicCallback, SelfPlayCallback

        cfg = self.cfg
        self.evals = evals
        self.selfplay = SelfPlayCallback(
            self.pool, cfg.opponents, cfg.selfplay.every_updates, make_snapshot
        )
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


__all__ = ["STOP_SIGNALS", "Checkpointer", "ProgressCallback", "learn_until_stop", "write_timing"]
