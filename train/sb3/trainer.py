"""One PPO training run (``train/ppo.py``), by phase: build, resume or warm start, learn, finish
(final weights, final evaluation, export)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from train.common.config import TrainConfig
from train.common.files import RunFolderError
from train.common.runs import FINAL_MODEL
from train.sb3.callbacks import Checkpointer
from train.sb3.export import export_ppo_run
from train.sb3.model import (
    build_model,
    init_policy_from,
    make_snapshot,
    make_vec_env,
    wrap_features,
)


class Trainer:
    """One training run: build, then resume from a checkpoint or warm start, learn, finish."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, resume: bool) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.resume = resume
        self.warmstart: dict[str, Any] = {}

    def run(self) -> Path:
        from train.common.progress import RunLog
        from train.sb3.evaluation import EvalHistory

        self.log = RunLog(self.run_dir / "train.log", bars=self.cfg.progress_bar)
        self.evals = EvalHistory(self.cfg, self.run_dir, self.log)
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
            if cfg.eval.opponents or cfg.num_players == 1:  # solitaire grades the learner alone
                self.evals.evaluate(self.model, None)  # where PPO starts: the warm start's strength
        timesteps = self._learn(state.get("extra", {}), fresh=ckpt is None)
        return self._finish(timesteps)

    def _build(self) -> None:
        """The snapshot pool, the VecEnv (the config's opponents first) and a fresh model."""
        from train.common.config import SELF
        from train.common.snapshot import SnapshotPool

        cfg = self.cfg
        self.pool = SnapshotPool(cfg.selfplay.pool_size, cfg.selfplay.latest_weight)
        base = {k: v for k, v in cfg.opponents.items() if k != SELF and v > 0}
        first_specs, first_weights = (
            (list(base), list(base.values())) if base else (["random"], [1])
        )
        self.vec_env = wrap_features(cfg, make_vec_env(cfg, first_specs, first_weights))
        self.model = build_model(cfg, self.vec_env, tensorboard_log=str(self.run_dir / "tb"))
        self.checkpoints = Checkpointer(cfg, self.run_dir, self.model, self.pool, self.vec_env)

    def _resume_from(self, ckpt: Path) -> dict[str, Any]:
        """Model, optimizer, pool, games and random streams as the checkpoint left them."""
        from train.sb3.checkpoint import resume_run

        self.log.info(f"resuming from {ckpt}")
        state = resume_run(ckpt, self.cfg, self.model, self.pool, self.vec_env)
        self.checkpoints.last_checkpoint = ckpt
        self.evals.resume(state["extra"]["eval_history"])
        return state

    def _warm_start(self) -> None:
        """A new run: ``init_from``, cloning the teacher, the first snapshot, the critic."""
        from train.sb3.warmstart import clone_teacher, warm_up_critic

        cfg, model, vec_env, log = self.cfg, self.model, self.vec_env, self.log
        if cfg.init_from is not None:
            init_policy_from(model, cfg.init_from)
            log.info(f"started from the actor and critic of {cfg.init_from}")
        self.warmstart = clone_teacher(cfg, model, vec_env, log, self.run_dir)
        self.pool.add(make_snapshot(model, "snapshot@0"))
        vec_env.set_opponent_pool(*self.pool.mix(cfg.opponents))
        warm_up_critic(cfg, model, vec_env, log, self.run_dir, self.warmstart)

    def _learn(self, extra: dict[str, Any], fresh: bool) -> int:
        """PPO up to ``total_steps`` (Ctrl-C stops at the next rollout boundary, checkpointed);
        the env steps trained."""
        from train.sb3.callbacks import StopOnSignal, learn_until_stop, write_timing

        model, checkpoints = self.model, self.checkpoints
        callbacks = checkpoints.callbacks(extra, self.evals)
        t0, steps0 = time.time(), model.num_timesteps
        stopper = StopOnSignal(on_stop=checkpoints.checkpoint)
        learn_until_stop(model, self.cfg.total_steps, callbacks, stopper, self.log, fresh)
        if stopper.stopped_at is None:  # finished: this is a rollout boundary
            checkpoints.checkpoint()
            timesteps = int(model.num_timesteps)
        else:  # stopped: the checkpoint at the boundary holds; one discarded step came after it
            timesteps = stopper.stopped_at
        write_timing(self.run_dir, time.time() - t0, timesteps - steps0, self.log)
        return timesteps

    def _finish(self, timesteps: int) -> Path:
        """The final weights, the final evaluation and the bot files."""
        from train.sb3.checkpoint import save_weights

        save_weights(self.model, self.run_dir / FINAL_MODEL, timesteps)
        self.vec_env.close()
        self.evals.final(self.model)
        self.log.info("export: tracing the policy to ONNX and checking it on 300 observations")
        onnx_path, _ = export_ppo_run(self.run_dir)
        self.log.info(f"exported {onnx_path} (its manifest: {onnx_path.with_suffix('.json')})")
        return onnx_path
