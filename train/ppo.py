"""Train a Rack-O bot with MaskablePPO and self-play: ``python train/ppo.py --config configs/2p.yaml``.

The run folder (``out`` in the config, ``--out``) receives: ``config.yaml`` (the resolved config,
``kind: ppo``), ``tb/`` (TensorBoard logs), ``checkpoints/`` (every ``checkpoint_every`` steps, at
rollout boundaries, in data-only formats: train/sb3/checkpoint.py), ``eval_history.json`` (periodic
win rates of the quick batched check, racko_eval/quick_eval.py), ``final_model.pt`` (the policy's
weights only), ``final_eval.json`` (a duplicate tournament) and the exported bot ``bot.onnx`` +
``bot.json``. Every file is written atomically.

Same seed + config -> same run (on the same machine, same VecEnv kind and ``n_envs``). Ctrl-C
finishes the rollout in progress, checkpoints at the rollout boundary and exports; ``--resume``
then continues bit for bit as if the run had not stopped (with ``vec_env: batched``, whose games
are saved in the checkpoint; Dummy/Subproc VecEnvs are dealt afresh on resume).
"""

from __future__ import annotations

import argparse
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
from stable_baselines3.common.callbacks import BaseCallback

from train.common.config import (
    ConfigError,
    TrainConfig,
    config_data,
    load_config,
    parse_config,
)
from train.common.eval_record import opponent_result, write_final
from train.common.files import RunFolderError, write_json_atomic
from train.common.runs import FINAL_MODEL, RunKind
from train.common.runs import prepare_run as prepare_run_folder

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


# ----------------------------------------------------------------- the model: build, save, load


def policy_spec(cfg: TrainConfig) -> tuple[Any, dict[str, Any]]:
    """The policy class (or SB3 name) and its keyword arguments for the config's network:
    ``ppo.policy: structured`` (train/sb3/policy.py) or ``flat`` (an MLP, the baseline)."""
    import torch

    from train.sb3.policy import policy_kwargs

    p = cfg.ppo
    if p.policy == "structured":
        return policy_kwargs(
            "structured", cfg.num_players, slot_hidden=p.slot_hidden, trunk_hidden=p.net_arch
        )
    act = torch.nn.Tanh if p.activation == "tanh" else torch.nn.ReLU
    return policy_kwargs("flat", cfg.num_players, net_arch=list(p.net_arch), activation_fn=act)


def wrap_features(cfg: TrainConfig, vec_env: Any) -> Any:
    """The structured policy's features computed once per observation (``train.sb3.feature_cache``)."""
    if cfg.ppo.policy != "structured":
        return vec_env
    from racko_env.rules import deck_size
    from train.sb3.feature_cache import FeatureCache

    return FeatureCache(vec_env, deck_size(cfg.num_players))


def make_snapshot(model: Any, name: str = "snapshot") -> Any:
    """A frozen copy of the learner that plays batches: a self-play opponent, the evaluated bot."""
    from train.sb3.policy import FrozenPolicy, StructuredPolicy
    from train.sb3.selfplay import snapshot_from_model

    if isinstance(model.policy, StructuredPolicy):
        return FrozenPolicy(model.policy, name)
    return snapshot_from_model(model, name)


def build_model(cfg: TrainConfig, env: Any = None, tensorboard_log: str | None = None) -> Any:
    """A fresh MaskablePPO with the config's hyperparameters and policy (CPU, seeded).

    Every model of a run is built here, also when loading: weights files hold data only, so a
    saved model is this model with its weights copied in (``train.sb3.checkpoint``). ``env=None``
    builds on a one-game batched env (for loading and exporting, where no training happens).
    """
    from sb3_contrib import MaskablePPO

    if env is None:
        from train.sb3.vec_env import RackoVecEnv

        env = wrap_features(
            cfg, RackoVecEnv(1, cfg.num_players, seed=cfg.seed, **cfg.rules_options())
        )
    p = cfg.ppo
    policy, policy_kwargs = policy_spec(cfg)
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
        policy_kwargs=policy_kwargs,
        tensorboard_log=tensorboard_log,
        seed=cfg.seed,
        device="cpu",
        verbose=0,
    )


def init_policy_from(model: Any, path: str | Path) -> None:
    """Copy a run's saved policy weights (actor and critic, ``final_model.pt``) into ``model``.

    The file is read as data only (a pickle inside is refused, never run); a network of another
    shape is refused naming both shapes.
    """
    from train.sb3.checkpoint import copy_policy_weights, load_weights

    data = load_weights(path, "init_from")
    copy_policy_weights(model, data["policy"], f"init_from {path}")


def load_trained_model(run_dir: Path) -> tuple[TrainConfig, Any]:
    """A PPO run's config and model: ``final_model.pt``, else the newest checkpoint's policy."""
    from train.sb3.checkpoint import CHECKPOINTS, copy_policy_weights, load_torch_data, load_weights

    cfg = load_config(run_dir / "config.yaml")
    model = build_model(cfg)
    final = run_dir / FINAL_MODEL
    if final.is_file():
        data = load_weights(final, "final model")
        copy_policy_weights(model, data["policy"], str(final))
        model.num_timesteps = int(data["timesteps"])
        return cfg, model
    ckpt = CHECKPOINTS.latest(run_dir)
    if ckpt is None:
        raise RunFolderError(f"no {FINAL_MODEL} and no complete checkpoint in {run_dir}")
    tensors = load_torch_data(ckpt / "model.pt", f"checkpoint {ckpt}")
    if not isinstance(tensors, dict) or "policy" not in tensors:
        raise RunFolderError(f"checkpoint {ckpt}: model.pt holds no policy")
    copy_policy_weights(model, tensors["policy"], f"checkpoint {ckpt}")
    model.num_timesteps = int(ckpt.name.removeprefix("step_"))
    return cfg, model


def export_ppo_run(run_dir: Path, check: int = 300) -> tuple[Path, Path]:
    """Write ``RUN_DIR/bot.onnx`` + ``bot.json`` from a PPO run folder (checked on ``check`` obs)."""
    import json

    from train.common.onnx_export import export_module
    from train.sb3.export import export_model
    from train.sb3.policy import PolicyGraph, StructuredPolicy

    cfg, model = load_trained_model(run_dir)
    evaluation: dict[str, Any] = {}
    for name in ("final_eval.json", "eval_history.json", "warmstart.json"):
        path = run_dir / name
        if path.is_file():
            evaluation[name.removesuffix(".json")] = json.loads(path.read_text(encoding="utf-8"))
    training = {
        "config": config_data(cfg),
        "seed": cfg.seed,
        "timesteps": int(model.num_timesteps),
        "algorithm": "MaskablePPO (sb3-contrib)",
        "policy": cfg.ppo.policy,
    }
    if isinstance(model.policy, StructuredPolicy):  # features and heads in one traced graph
        graph = PolicyGraph(model.policy)
        return export_module(
            graph, run_dir, cfg.num_players, cfg.rules_options(), evaluation, training, check
        )
    return export_model(
        model, run_dir, cfg.num_players, cfg.rules_options(), evaluation, training, check
    )


# ----------------------------------------------------------------- evaluation


def evaluate_against(
    player: Any,
    cfg: TrainConfig,
    opponents: list[str],
    rounds: int,
    seed: int,
    log: Any = None,
) -> dict[str, Any]:
    """Duplicate rounds of a batch policy against fixed bots (the quick batched check,
    ``racko_eval.quick_eval``).

    2 players: head to head with each opponent. 3-4 players: one table of the player and all the
    opponents together, in every distinct seating (with 4 players and 2 opponents, each of the
    three tables that fill the seats). Per opponent: the player's win rate with its 95% interval
    and that opponent's; a table's win rates add up to 1.
    """
    from agents.batched import load_batch
    from racko_eval import play_duplicate

    rules = cfg.rules_options()
    groups = [[opp] for opp in opponents] if cfg.num_players == 2 else [list(opponents)]
    out: dict[str, Any] = {}
    for group in groups:
        bots = [load_batch(o, cfg.num_players, seed=seed, **rules) for o in group]
        labels = ["learner", *group]
        name = f"evaluation vs {' + '.join(group)}"
        with _maybe_phase(log, name, rounds, "deals") as phase:
            rep = play_duplicate(
                [player, *bots],
                labels,
                cfg.num_players,
                rules,
                rounds,
                seed,
                episode=cfg.episode,
                progress=None if phase is None else phase.update,
            )
        me = rep["bots"]["learner"]
        for opp in group:
            out[opp] = opponent_result(
                opp,
                rounds,
                me["win_rate"],
                me["ci95"],
                seed,
                table=labels,
                opponent_win_rate=rep["bots"][opp]["win_rate"],
                opponent_ci95=rep["bots"][opp]["ci95"],
                seats=me["seats"],
                format=rep["format"],
            )
    return out


def _maybe_phase(log: Any, name: str, total: int, unit: str) -> Any:
    """``log.phase(...)`` when there is a run log, else a context that yields None."""
    import contextlib

    return contextlib.nullcontext() if log is None else log.phase(name, total, unit)


def final_evaluation(
    model: Any, cfg: TrainConfig, run_dir: Path, log: Any = None
) -> dict[str, Any]:
    """``final_eval.rounds`` duplicate rounds of the deterministic policy against the
    ``final_eval`` opponents (``evaluate_against``), saved to ``final_eval.json``."""
    f = cfg.final_eval
    player = make_snapshot(model, "final")
    results = evaluate_against(player, cfg, f.opponents, f.rounds, f.seed, log)
    write_final(run_dir, results)
    return results


def describe_eval(results: dict[str, Any]) -> str:
    """``vs heuristic 83.1% (81.4%-84.7%), vs expert 49.2% (47.0%-51.4%)``; at a table of 3-4
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


def load_policy_state(run_dir: Path) -> dict[str, Any]:
    """The trained policy's weights (actor and critic) of a finished run, by name."""
    from train.sb3.checkpoint import load_weights

    return dict(load_weights(Path(run_dir) / FINAL_MODEL, "final model")["policy"])


class ProgressCallback(BaseCallback):
    """Moves the run's PPO phase to the model's step count (the whole run's, on resume)."""

    def __init__(self, phase: Any) -> None:
        super().__init__()
        self.phase = phase

    def _on_step(self) -> bool:
        self.phase.update(self.num_timesteps)
        return True


class Trainer:
    """One training run: builds or resumes the model, wires callbacks, trains, exports."""

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

        from train.sb3.checkpoint import CHECKPOINTS, load_checkpoint, restore_rngs
        from train.sb3.envs import make_vec_env, restore_env_states
        from train.sb3.selfplay import SELF, SnapshotPool, StopOnSignal, push_pool

        cfg, log = self.cfg, self.log
        torch.set_num_threads(cfg.torch_threads)
        log.info(
            f"racko PPO: {cfg.num_players} players, {cfg.ppo.policy} policy, "
            f"{cfg.total_steps:,} env steps, run folder {self.run_dir}"
        )
        self.pool = SnapshotPool(cfg.selfplay.pool_size, cfg.selfplay.latest_weight)
        base = {k: v for k, v in cfg.opponents.items() if k != SELF and v > 0}
        first_specs, first_weights = (
            (list(base), list(base.values())) if base else (["random"], [1])
        )
        vec_env = wrap_features(cfg, make_vec_env(cfg, first_specs, first_weights))
        model = build_model(cfg, vec_env, tensorboard_log=str(self.run_dir / "tb"))
        state: dict[str, Any] = {}
        ckpt = CHECKPOINTS.latest(self.run_dir) if self.resume else None
        if self.resume and ckpt is None:  # prepare_run checked it; the folder changed since
            raise RunFolderError(f"--resume: no complete checkpoint in {self.run_dir}")
        if ckpt is not None:
            log.info(f"resuming from {ckpt}")
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
        else:
            if cfg.init_from is not None:
                init_policy_from(model, cfg.init_from)
                log.info(f"started from the actor and critic of {cfg.init_from}")
            self._clone(model, vec_env)
            self.pool.add(make_snapshot(model, "snapshot@0"))
            push_pool(vec_env, *self.pool.mix(cfg.opponents))
            self._warm_critic(model, vec_env)
        self.model, self.vec_env = model, vec_env
        if ckpt is None and cfg.eval.opponents:
            self._evaluate(None)  # where PPO starts from: the warm start's strength
        callbacks = self._callbacks(state.get("extra", {}))
        remaining = cfg.total_steps - model.num_timesteps
        t0, steps0 = time.time(), model.num_timesteps
        stopper = StopOnSignal(on_stop=self._checkpoint)
        old = {sig: signal.signal(sig, stopper.request_stop) for sig in STOP_SIGNALS}
        try:
            with log.phase("PPO", cfg.total_steps, "env steps", start=model.num_timesteps) as phase:
                if remaining > 0:
                    model.learn(
                        remaining,
                        callback=[*callbacks, stopper, ProgressCallback(phase)],
                        reset_num_timesteps=ckpt is None,
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
        from train.sb3.checkpoint import save_weights

        save_weights(model, self.run_dir / FINAL_MODEL, timesteps)
        vec_env.close()
        self._final_eval()
        log.info("export: tracing the policy to ONNX and checking it on 300 observations")
        onnx_path, _ = export_ppo_run(self.run_dir)
        log.info(f"exported {onnx_path} (its manifest: {onnx_path.with_suffix('.json')})")
        return onnx_path

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


# ----------------------------------------------------------------- the run folder


def holds_a_run(run_dir: Path) -> bool:
    """A folder holds a run once it has a complete checkpoint or a final model."""
    from train.sb3.checkpoint import CHECKPOINTS

    return (run_dir / FINAL_MODEL).is_file() or CHECKPOINTS.latest(run_dir) is not None


def _refuse_old_format(run_dir: Path) -> None:
    from train.sb3.checkpoint import old_format_checkpoints

    if old_format_checkpoints(run_dir):
        raise RunFolderError(
            f"{run_dir} holds checkpoints in the earlier pickled format (state.pkl), which "
            "are not loaded (they could run code); train into another --out"
        )


def _checkpoint_config(run_dir: Path) -> tuple[str, dict[str, Any]] | None:
    """The config the latest checkpoint was made with (itself checked to be a valid config)."""
    from train.sb3.checkpoint import CHECKPOINTS, read_checkpoint_state

    ckpt = CHECKPOINTS.latest(run_dir)
    if ckpt is None:
        return None
    name = f"checkpoint {ckpt.name}"
    theirs = read_checkpoint_state(ckpt)["config"]
    if not isinstance(theirs, dict):
        raise RunFolderError(f"--resume: {name} does not record its config")
    parse_config(theirs, name)
    return name, theirs


def _init_from_exists(cfg: TrainConfig) -> None:
    if cfg.init_from is not None and not Path(cfg.init_from).is_file():
        raise RunFolderError(f"init_from: no file at {cfg.init_from}")


PPO_RUN = RunKind(
    kind="ppo",
    command="python train/ppo.py",
    schema=TrainConfig,
    length="total_steps",
    holds_a_run=holds_a_run,
    example="configs/2p.yaml",
    stale_files=("eval_history.json", "timing.json", "warmstart.json", "final_eval.json"),
    may_change=("out", "progress_bar"),
    recorded_config=_checkpoint_config,
    check_folder=_refuse_old_format,
    check_config=_init_from_exists,
)


def prepare_run(
    config: str | None,
    out: str | None,
    seed: int | None,
    total_steps: int | None,
    resume: bool,
) -> tuple[TrainConfig, Path]:
    """The config and the run folder of a command line (``train.common.runs.prepare_run``): a
    resumed run may only change ``total_steps``; a folder a killed run left before its first
    checkpoint starts over."""
    return prepare_run_folder(PPO_RUN, config, out, resume, seed=seed, total_steps=total_steps)


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
    try:
        cfg, run_dir = prepare_run(args.config, args.out, args.seed, args.total_steps, args.resume)
        if args.no_progress:
            cfg = cfg.model_copy(update={"progress_bar": False})
        Trainer(cfg, run_dir, args.resume).run()
    except (ConfigError, RunFolderError, FileNotFoundError) as exc:
        print(f"ppo: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
