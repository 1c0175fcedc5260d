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

from train.config import TrainConfig, load_config
from train.snapshot import SnapshotPolicy
from train.tournament import wilson_interval

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def build_model(cfg: TrainConfig, env: Any, tensorboard_log: str | None = None) -> Any:
    """A fresh MaskablePPO with the config's hyperparameters and network (CPU, seeded)."""
    import torch
    from sb3_contrib import MaskablePPO

    p = cfg.ppo
    act = torch.nn.Tanh if p.activation == "tanh" else torch.nn.ReLU
    return MaskablePPO(
        "MlpPolicy",
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
        policy_kwargs={"net_arch": list(p.net_arch), "activation_fn": act},
        tensorboard_log=tensorboard_log,
        seed=cfg.seed,
        device="cpu",
        verbose=0,
    )


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


def final_evaluation(model: Any, cfg: TrainConfig, run_dir: Path) -> dict[str, Any]:
    """The deterministic policy against each ``final_eval`` opponent, saved to final_eval.json."""
    from train.selfplay import snapshot_from_model

    policy = snapshot_from_model(model, "final")
    results = {
        opp: evaluate_vs(
            policy,
            opp,
            cfg.final_eval.rounds,
            cfg.final_eval.seed,
            cfg.num_players,
            cfg.rules_options(),
            cfg.episode,
        )
        for opp in cfg.final_eval.opponents
    }
    (run_dir / "final_eval.json").write_text(json.dumps(results, indent=1))
    return results


def evaluate_vs(
    policy: SnapshotPolicy,
    opponent: str,
    episodes: int,
    seed: int,
    num_players: int,
    rules: dict[str, Any],
    episode: str = "round",
) -> dict[str, Any]:
    """Deterministic play of ``policy`` against ``opponent`` in every other seat, seats rotating.

    A win is a positive ``reward="win"`` return: the learner (alone) won the round or game.
    The same ``seed`` gives the same deals, so successive evaluations are comparable.
    """
    from racko_env.gym_env import RackoGymEnv

    env = RackoGymEnv(
        num_players=num_players, opponents=[opponent], reward="win", episode=episode, **rules
    )
    wins, returns, lengths = 0, [], []
    obs, _ = env.reset(seed=seed)
    for _ in range(episodes):
        total, steps, done = 0.0, 0, False
        while not done:
            action = policy.act({"observation": obs, "action_mask": env.action_masks()})
            obs, r, term, trunc, _ = env.step(action)
            total += r
            steps += 1
            done = term or trunc
        wins += total > 0
        returns.append(total)
        lengths.append(steps)
        obs, _ = env.reset()
    lo, hi = wilson_interval(wins, episodes)
    return {
        "opponent": opponent,
        "episodes": episodes,
        "wins": int(wins),
        "win_rate": wins / episodes,
        "ci95": [lo, hi],
        "mean_return": float(np.mean(returns)),
        "mean_learner_steps": float(np.mean(lengths)),
    }


class Trainer:
    """One training run: builds or resumes the model, wires callbacks, trains, exports."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, resume: bool) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.resume = resume
        self.eval_history: list[dict[str, Any]] = []

    def run(self) -> Path:
        import torch
        from sb3_contrib import MaskablePPO

        from train.checkpoint import latest_checkpoint, load_state, restore_rngs
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
        state: dict[str, Any] = {}
        ckpt = latest_checkpoint(self.run_dir) if self.resume else None
        if self.resume and ckpt is None:
            raise FileNotFoundError(f"--resume: no checkpoint in {self.run_dir / 'checkpoints'}")
        if ckpt is not None:
            print(f"resuming from {ckpt}")
            model = MaskablePPO.load(
                ckpt / "model.zip",
                env=vec_env,
                force_reset=False,
                device="cpu",
                tensorboard_log=str(self.run_dir / "tb"),
            )
            self.pool.load(ckpt / "pool")
            state = load_state(ckpt)
            self.eval_history = state["extra"]["eval_history"]
            push_pool(vec_env, *self.pool.mix(cfg.opponents))
            restore_env_states(vec_env, state["env_states"])
            if hasattr(vec_env, "last_obs"):  # the shaping wrapper's view of the last step
                vec_env.last_obs = model._last_obs.copy()
            restore_rngs(state)
        else:
            model = build_model(cfg, vec_env, tensorboard_log=str(self.run_dir / "tb"))
            if cfg.init_from is not None:
                init_policy_from(model, cfg.init_from)
            self._pretrain(model)
            self.pool.add(snapshot_from_model(model, "snapshot@0"))
            push_pool(vec_env, *self.pool.mix(cfg.opponents))
        self.model, self.vec_env = model, vec_env
        callbacks = self._callbacks(state.get("extra", {}))
        remaining = cfg.total_steps - model.num_timesteps
        t0, steps0 = time.time(), model.num_timesteps
        stopper = StopOnSignal()
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
        elapsed = time.time() - t0
        self._write_timing(elapsed, model.num_timesteps - steps0)
        self._checkpoint()
        model.save(self.run_dir / "final_model.zip")
        vec_env.close()
        self._final_eval()
        from train.export import export_run

        onnx_path, _ = export_run(self.run_dir)
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
        (self.run_dir / "pretrain.json").write_text(json.dumps(info, indent=1))
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
        from train.checkpoint import save_checkpoint
        from train.envs import env_states

        extra = {
            "selfplay_last_update": self.selfplay.last_update,
            "eval_history": self.eval_history,
            **{f"{k}_last_mark": cb.last_mark for k, cb in self.periodic.items()},
        }
        return save_checkpoint(self.run_dir, self.model, self.pool, env_states(self.vec_env), extra)

    def _evaluate(self, cb: Any) -> None:
        from train.selfplay import snapshot_from_model

        cfg = self.cfg
        policy = snapshot_from_model(self.model, "eval")
        row: dict[str, Any] = {"timesteps": int(self.model.num_timesteps)}
        for opp in cfg.eval.opponents:
            res = evaluate_vs(
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
        (self.run_dir / "eval_history.json").write_text(json.dumps(self.eval_history, indent=1))

    def _final_eval(self) -> None:
        from sb3_contrib import MaskablePPO

        cfg = self.cfg
        if cfg.final_eval.rounds == 0:
            return
        model = MaskablePPO.load(self.run_dir / "final_model.zip", device="cpu")
        results = final_evaluation(model, cfg, self.run_dir)
        for opp, res in results.items():
            lo, hi = res["ci95"]
            print(f"final eval vs {opp}: win rate {res['win_rate']:.3f} (95% CI {lo:.3f}-{hi:.3f})")

    def _write_timing(self, seconds: float, steps: int) -> None:
        path = self.run_dir / "timing.json"
        sessions = json.loads(path.read_text()) if path.is_file() else []
        sessions.append(
            {"seconds": round(seconds, 1), "env_steps": steps, "steps_per_s": steps / seconds}
        )
        path.write_text(json.dumps(sessions, indent=1))
        print(f"trained {steps} env steps in {seconds:.0f} s ({steps / max(seconds, 1e-9):.0f}/s)")


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
