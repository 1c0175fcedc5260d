"""Train a Rack-O bot with MaskablePPO and self-play: ``python train/ppo.py --config configs/2p.yaml``.

The run folder (``out`` in the config, ``--out``) receives: ``config.yaml`` (the resolved config,
``kind: ppo``), ``tb/`` (TensorBoard logs), ``checkpoints/`` (every ``checkpoint_every`` steps, at
rollout boundaries, in data-only formats: train/checkpoint.py), ``eval_history.json`` (periodic
win rates of the quick batched check, train/quick_eval.py), ``final_model.pt`` (the policy's
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

from train.config import (
    ConfigError,
    TrainConfig,
    config_data,
    config_differences,
    load_config,
    parse_config,
    read_yaml,
)
from train.files import (
    RunFolderError,
    write_json_atomic,
    write_yaml_atomic,
)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
FINAL_MODEL = "final_model.pt"
# config keys a resumed run may change (they do not change what has been trained so far)
RESUME_MAY_CHANGE = ("total_steps", "progress_bar")


# ----------------------------------------------------------------- the model: build, save, load


def policy_spec(cfg: TrainConfig) -> tuple[Any, dict[str, Any]]:
    """The policy class (or SB3 name) and its keyword arguments for the config's network."""
    import torch

    p = cfg.ppo
    act = torch.nn.Tanh if p.activation == "tanh" else torch.nn.ReLU
    return "MlpPolicy", {"net_arch": list(p.net_arch), "activation_fn": act}


def build_model(cfg: TrainConfig, env: Any = None, tensorboard_log: str | None = None) -> Any:
    """A fresh MaskablePPO with the config's hyperparameters and policy (CPU, seeded).

    Every model of a run is built here, also when loading: weights files hold data only, so a
    saved model is this model with its weights copied in (``train.checkpoint``). ``env=None``
    builds on a one-game batched env (for loading and exporting, where no training happens).
    """
    from sb3_contrib import MaskablePPO

    if env is None:
        from train.sb3_vec_env import RackoVecEnv

        env = RackoVecEnv(1, cfg.num_players, seed=cfg.seed, **cfg.rules_options())
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
    from train.checkpoint import copy_policy_weights, load_weights

    data = load_weights(path, "init_from")
    copy_policy_weights(model, data["policy"], f"init_from {path}")


def load_trained_model(run_dir: Path) -> tuple[TrainConfig, Any]:
    """A PPO run's config and model: ``final_model.pt``, else the newest checkpoint's policy."""
    from train.checkpoint import (
        copy_policy_weights,
        latest_checkpoint,
        load_torch_data,
        load_weights,
    )

    cfg = load_config(run_dir / "config.yaml")
    model = build_model(cfg)
    final = run_dir / FINAL_MODEL
    if final.is_file():
        data = load_weights(final, "final model")
        copy_policy_weights(model, data["policy"], str(final))
        model.num_timesteps = int(data["timesteps"])
        return cfg, model
    ckpt = latest_checkpoint(run_dir)
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

    from train.onnx_export import export_model

    cfg, model = load_trained_model(run_dir)
    evaluation: dict[str, Any] = {}
    for name in ("final_eval.json", "eval_history.json"):
        path = run_dir / name
        if path.is_file():
            evaluation[name.removesuffix(".json")] = json.loads(path.read_text(encoding="utf-8"))
    training = {
        "config": config_data(cfg),
        "seed": cfg.seed,
        "timesteps": int(model.num_timesteps),
        "algorithm": "MaskablePPO (sb3-contrib)",
    }
    return export_model(
        model, run_dir, cfg.num_players, cfg.rules_options(), evaluation, training, check
    )


# ----------------------------------------------------------------- evaluation


def final_evaluation(model: Any, cfg: TrainConfig, run_dir: Path) -> dict[str, Any]:
    """A duplicate tournament of the deterministic policy against each ``final_eval`` opponent
    (``train.tournament``: the same deals in every seating), saved to ``final_eval.json``."""
    from train.selfplay import snapshot_from_model
    from train.tournament import run_tournament

    policy = snapshot_from_model(model, "final")
    f = cfg.final_eval
    results = {}
    for opp in f.opponents:
        report = run_tournament(
            [policy, opp],
            cfg.num_players,
            rounds=f.rounds if cfg.episode == "round" else None,
            games=f.rounds if cfg.episode == "game" else None,
            seed=f.seed,
            workers=f.workers,
            **cfg.rules_options(),
        )
        me = report["bots"][0]
        results[opp] = {
            "opponent": opp,
            "deals": f.rounds,
            "played": me["played"],
            "wins": me["wins"],
            "win_rate": me["win_rate"],
            "ci95": me["win_rate_ci95"],
            "format": "duplicate (train/tournament.py)",
        }
    write_json_atomic(run_dir / "final_eval.json", results)
    return results


class Trainer:
    """One training run: builds or resumes the model, wires callbacks, trains, exports."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, resume: bool) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.resume = resume
        self.eval_history: list[dict[str, Any]] = []
        self.last_checkpoint: Path | None = None

    def run(self) -> Path:
        import torch

        from train.checkpoint import latest_checkpoint, load_checkpoint, restore_rngs
        from train.envs import make_vec_env, restore_env_states
        from train.selfplay import SELF, SnapshotPool, StopOnSignal, push_pool, snapshot_from_model

        cfg = self.cfg
        torch.set_num_threads(cfg.torch_threads)
        self.pool = SnapshotPool(cfg.selfplay.pool_size, cfg.selfplay.latest_weight)
        base = {k: v for k, v in cfg.opponents.items() if k != SELF and v > 0}
        first_specs, first_weights = (
            (list(base), list(base.values())) if base else (["random"], [1])
        )
        vec_env = make_vec_env(cfg, first_specs, first_weights)
        model = build_model(cfg, vec_env, tensorboard_log=str(self.run_dir / "tb"))
        state: dict[str, Any] = {}
        ckpt = latest_checkpoint(self.run_dir) if self.resume else None
        if self.resume and ckpt is None:  # prepare_run checked it; the folder changed since
            raise RunFolderError(f"--resume: no complete checkpoint in {self.run_dir}")
        if ckpt is not None:
            print(f"resuming from {ckpt}")
            state = load_checkpoint(ckpt, model, self.pool)
            self.last_checkpoint = ckpt
            self.eval_history = state["extra"]["eval_history"]
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
            self._pretrain(model)
            self.pool.add(snapshot_from_model(model, "snapshot@0"))
            push_pool(vec_env, *self.pool.mix(cfg.opponents))
        self.model, self.vec_env = model, vec_env
        callbacks = self._callbacks(state.get("extra", {}))
        remaining = cfg.total_steps - model.num_timesteps
        t0, steps0 = time.time(), model.num_timesteps
        stopper = StopOnSignal(on_stop=self._checkpoint)
        old = {sig: signal.signal(sig, stopper.request_stop) for sig in STOP_SIGNALS}
        try:
            if remaining > 0:
                model.learn(
                    remaining,
                    callback=[*callbacks, stopper],
                    reset_num_timesteps=ckpt is None,
                    tb_log_name="ppo",
                    progress_bar=cfg.progress_bar,
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
        from train.checkpoint import save_weights

        save_weights(model, self.run_dir / FINAL_MODEL, timesteps)
        vec_env.close()
        self._final_eval()
        onnx_path, _ = export_ppo_run(self.run_dir)
        print(f"exported {onnx_path}")
        return onnx_path

    def _pretrain(self, model: Any) -> None:
        """Behaviour cloning from the teacher bot (config ``pretrain``), logged to pretrain.json."""
        from train.pretrain import agreement, behaviour_clone, collect_teacher_data

        cfg, pre = self.cfg, self.cfg.pretrain
        if pre.decisions == 0:
            return
        t0 = time.time()
        obs, masks, actions = collect_teacher_data(
            pre.teacher, cfg.num_players, cfg.rules_options(), pre.decisions, cfg.seed, cfg.episode
        )
        t1 = time.time()
        losses = behaviour_clone(
            model, obs, masks, actions, pre.epochs, pre.batch_size, pre.learning_rate, cfg.seed
        )
        info = {
            "teacher": pre.teacher,
            "decisions": pre.decisions,
            "collect_seconds": round(t1 - t0, 1),
            "fit_seconds": round(time.time() - t1, 1),
            "losses": losses,
            "agreement": agreement(model, obs, masks, actions),
        }
        write_json_atomic(self.run_dir / "pretrain.json", info)
        print(f"behaviour cloning from {pre.teacher}: agreement {info['agreement']:.3f}")

    # ----------------------------------------------------------------- callbacks

    def _callbacks(self, extra: dict[str, Any]) -> list[Any]:
        from train.selfplay import PeriodicCallback, SelfPlayCallback

        cfg = self.cfg
        self.selfplay = SelfPlayCallback(self.pool, cfg.opponents, cfg.selfplay.every_updates)
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
        from train.checkpoint import save_checkpoint
        from train.envs import env_states

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
        from train.quick_eval import quick_win_rate
        from train.selfplay import snapshot_from_model

        cfg = self.cfg
        policy = snapshot_from_model(self.model, "eval")
        row: dict[str, Any] = {"timesteps": int(self.model.num_timesteps)}
        for opp in cfg.eval.opponents:
            res = quick_win_rate(
                policy,
                opp,
                cfg.eval.episodes,
                cfg.eval.seed,
                cfg.num_players,
                cfg.rules_options(),
                cfg.episode,
            )
            row[opp] = res["win_rate"]
            cb.logger.record(f"eval/win_rate_vs_{opp}", res["win_rate"])
        self.eval_history.append(row)
        write_json_atomic(self.run_dir / "eval_history.json", self.eval_history)

    def _final_eval(self) -> None:
        cfg = self.cfg
        if cfg.final_eval.rounds == 0:
            return
        results = final_evaluation(self.model, cfg, self.run_dir)
        for opp, res in results.items():
            lo, hi = res["ci95"]
            print(f"final eval vs {opp}: win rate {res['win_rate']:.3f} (95% CI {lo:.3f}-{hi:.3f})")

    def _write_timing(self, seconds: float, steps: int) -> None:
        import json

        path = self.run_dir / "timing.json"
        sessions = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
        seconds = max(seconds, 1e-9)
        sessions.append(
            {"seconds": round(seconds, 1), "env_steps": steps, "steps_per_s": steps / seconds}
        )
        write_json_atomic(path, sessions)
        print(f"trained {steps} env steps in {seconds:.0f} s ({steps / seconds:.0f}/s)")


# ----------------------------------------------------------------- the run folder

STALE_RUN_FILES = ("eval_history.json", "timing.json", "pretrain.json", "final_eval.json")


def holds_a_run(run_dir: Path) -> bool:
    """A folder holds a run once it has a complete checkpoint or a final model."""
    from train.checkpoint import latest_checkpoint

    return (run_dir / FINAL_MODEL).is_file() or latest_checkpoint(run_dir) is not None


def prepare_run(
    config: str | None,
    out: str | None,
    seed: int | None,
    total_steps: int | None,
    resume: bool,
) -> tuple[TrainConfig, Path]:
    """Resolve the config (a resumed run reads its own saved config) and the run folder.

    A folder a killed run left behind is always usable: half-written ``.tmp_*`` files are
    removed; without a complete checkpoint it starts over (``--resume`` says so), with one it
    resumes. A resumed run refuses a config that differs from the one its checkpoint was made
    with (only ``total_steps`` may change).
    """
    from train.checkpoint import (
        latest_checkpoint,
        old_format_checkpoints,
        read_checkpoint_state,
        remove_stale_temps,
    )

    def refuse_old_format(run_dir: Path) -> None:
        if old_format_checkpoints(run_dir):
            raise RunFolderError(
                f"{run_dir} holds checkpoints in the earlier pickled format (state.pkl), which "
                "are not loaded (they could run code); train into another --out"
            )

    if resume:
        if out is None and config is None:
            raise RunFolderError("--resume needs --out RUN_DIR or the --config that names it")
        run_dir = Path(out) if out else Path(load_config(config).out)
        saved = run_dir / "config.yaml"
        if not saved.is_file():
            raise RunFolderError(f"--resume: {saved} not found: {run_dir} holds no run to resume")
        refuse_old_format(run_dir)
        remove_stale_temps(run_dir)
        ckpt = latest_checkpoint(run_dir)
        if ckpt is None:
            raise RunFolderError(
                f"--resume: {run_dir} has no complete checkpoint (the run stopped before its "
                f"first one); start it over with: python train/ppo.py --config {saved} "
                f"--out {run_dir}"
            )
        cfg = load_config(saved, total_steps=total_steps)
        theirs = read_checkpoint_state(ckpt)["config"]
        _same_config(config_data(cfg), theirs, f"{saved}", f"checkpoint {ckpt.name}")
        if config is not None:
            given = load_config(config, out=str(run_dir), total_steps=cfg.total_steps)
            _same_config(config_data(given), theirs, config, f"checkpoint {ckpt.name}")
        if seed is not None and seed != cfg.seed:
            raise RunFolderError(f"--resume: the run was started with seed {cfg.seed}, not {seed}")
        if total_steps is not None and read_yaml(saved).get("total_steps") != total_steps:
            write_yaml_atomic(saved, config_data(cfg))
        return cfg, run_dir
    if config is None:
        raise RunFolderError("--config is required (e.g. configs/2p.yaml)")
    cfg = load_config(config, seed=seed, total_steps=total_steps, out=out)
    run_dir = Path(cfg.out)
    refuse_old_format(run_dir)
    if holds_a_run(run_dir):
        raise RunFolderError(
            f"{run_dir} already holds a run; use --resume to continue it or --out for a new one"
        )
    if cfg.init_from is not None and not Path(cfg.init_from).is_file():
        raise RunFolderError(f"init_from: no file at {cfg.init_from}")
    remove_stale_temps(run_dir)
    for name in STALE_RUN_FILES:  # from a run killed before its first checkpoint
        (run_dir / name).unlink(missing_ok=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_yaml_atomic(run_dir / "config.yaml", config_data(cfg))
    return cfg, run_dir


def _same_config(ours: dict[str, Any], theirs: Any, what: str, other: str) -> None:
    if not isinstance(theirs, dict):
        raise RunFolderError(f"--resume: {other} does not record its config")
    parse_config(theirs, other)  # the checkpoint's own config must still be valid
    diff = [
        k for k in config_differences(ours, theirs) if k not in RESUME_MAY_CHANGE and k != "out"
    ]
    if diff:
        raise RunFolderError(
            f"--resume: {what} differs from the config {other} was made with in "
            f"{', '.join(diff)}; resume with that config or start a new run with --out"
        )


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
