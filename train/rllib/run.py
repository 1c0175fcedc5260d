"""The RLlib trainer's front door (``python train/rllib_ppo.py --config configs/2p_rllib.yaml``,
``racko train-rllib``): self-play PPO on Ray RLlib, on one machine or a cluster
(docs/training/rllib.md).

RLlib's env runners step either the batched engine with its opponents inside, through
Gymnasium's vector API (``env: vector``, ``train.rllib.vector``), or ``racko_v1`` one decision at
a time (``env: multi_agent``, ``train.rllib.env``); the masked module (``train.rllib.module``)
trains against bots and frozen snapshots of itself, and the run ends with the same bot files as
``train/ppo.py``. Local by default; ``--address auto`` (or ``RAY_ADDRESS``) joins a cluster."""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

from train.common import front_door

front_door.thread_defaults()  # before numpy and torch load: they read them once

from racko_env.files import write_text_atomic  # noqa: E402
from train.common.progress import RunLog  # noqa: E402
from train.common.runs import Checkpoints, RunKind  # noqa: E402
from train.rllib.cluster import UserError, start_ray  # noqa: E402
from train.rllib.config import RLlibConfig  # noqa: E402
from train.rllib.finish import EvalHistory  # noqa: E402

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
STATE_FILE = "trainer.json"  # the trainer's counters, in every checkpoint beside RLlib's own files
CHECKPOINTS = Checkpoints("iter_", (STATE_FILE,), digits=6)  # written whole or not at all
VECTOR_ENV = "racko_vector"  # the name the vector path's env creator is registered under


def ray_temp_dir() -> Path:
    """Ray's session files: ``$RAY_TMPDIR`` or ``<system temp>/ray`` (short: Ray puts unix
    sockets in it, and their paths may not exceed ~107 characters)."""
    return Path(os.environ.get("RAY_TMPDIR") or os.path.join(tempfile.gettempdir(), "ray"))


def init_ray(address: str | None, run_dir: Path, cfg: RLlibConfig) -> None:
    """Start a local Ray instance with room for every runner and learner actor (even past the
    cores: they then share them), or join the cluster at ``address``."""
    r = cfg.resources
    cpus = max(os.cpu_count() or 1, math.ceil(r.env_runners * r.cpus_per_env_runner) + r.learners)
    gpus = 0 if r.gpus_per_learner == 0 else None
    start_ray(address, run_dir, ray_temp_dir(), cpus, gpus)


def keep_logs_in(run_dir: Path) -> None:
    """RLlib's Algorithm (a Tune Trainable) makes a log folder under ``~/ray_results`` when built
    outside Tune; point that default at the run folder instead."""
    import ray.tune.trainable.trainable as trainable

    trainable.DEFAULT_STORAGE_PATH = str((run_dir / "ray").resolve())


def build_algo_config(cfg: RLlibConfig, salt: int = 0) -> Any:
    """The PPOConfig of a run: env, modules, resources, hyperparameters."""
    import gymnasium as gym
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from racko_env.actions import NUM_ACTIONS
    from racko_env.rules import deck_size
    from train.rllib.env import (
        MAIN,
        RackoMultiAgentEnv,
        league_module,
        observation_space,
        policy_mapping_fn,
    )
    from train.rllib.module import MaskedActorCritic
    from train.rllib.vector import make_vector_env

    model = {**cfg.model.model_dump(), "num_cards": deck_size(cfg.num_players)}

    def module_spec() -> RLModuleSpec:
        return RLModuleSpec(
            module_class=MaskedActorCritic,
            observation_space=observation_space(features=True),
            action_space=gym.spaces.Discrete(NUM_ACTIONS),
            model_config=model,
        )

    r, p = cfg.resources, cfg.ppo
    config = PPOConfig()
    if cfg.env == "vector":  # one module; bots and snapshots inside the VectorEnv
        from ray.tune.registry import register_env

        register_env(VECTOR_ENV, make_vector_env)  # RLlib takes a creator by registered name
        config = config.environment(
            VECTOR_ENV, env_config=cfg.env_config(salt), disable_env_checking=True
        ).rl_module(rl_module_spec=module_spec())
    else:
        module_ids = [MAIN] + [league_module(s) for s in range(cfg.league.size)]
        spec = MultiRLModuleSpec(rl_module_specs={m: module_spec() for m in module_ids})
        config = (
            # RLlib's env checker steps random unmasked actions (the env then logs illegal
            # moves); tests/train/test_rllib_ppo.py and the env's own suite check the env instead
            config.environment(
                RackoMultiAgentEnv, env_config=cfg.env_config(salt), disable_env_checking=True
            )
            .multi_agent(
                policies=set(module_ids),
                policy_mapping_fn=policy_mapping_fn,
                policies_to_train=[MAIN],
            )
            .rl_module(rl_module_spec=spec)
        )
    return (
        config.framework("torch", torch_compile_learner=False)
        .env_runners(
            num_env_runners=r.env_runners,
            num_envs_per_env_runner=r.envs_per_runner,
            num_cpus_per_env_runner=r.cpus_per_env_runner,
            custom_resources_per_env_runner=dict(r.env_runner_resources),
            rollout_fragment_length=r.rollout_fragment_length,
            episodes_to_numpy=False,  # measured faster here (docs/training/rllib.md)
            # the vector path: RLlib calls make_vector_env(config | {"num_envs": N}) once
            gym_env_vectorize_mode="vector_entry_point" if cfg.env == "vector" else "sync",
        )
        .learners(num_learners=r.learners, num_gpus_per_learner=r.gpus_per_learner)
        .training(  # the section's keys are PPOConfig.training's, but for the batch size
            **p.model_dump(exclude={"train_batch_size"}),
            train_batch_size_per_learner=p.train_batch_size,
        )
        .debugging(seed=cfg.seed, log_level="ERROR")
        .reporting(metrics_num_episodes_for_smoothing=100)
    )


def record_placement(algo: Any, run_dir: Path, address: str | None) -> None:
    """``cluster.json``: the node of the driver and of every env runner (checked by tests)."""
    import ray

    def node_of(runner: Any) -> str:
        import ray as _ray

        return _ray.get_runtime_context().get_node_id()

    runners = algo.env_runner_group.foreach_env_runner(node_of, local_env_runner=False)
    info = {
        "driver_node": ray.get_runtime_context().get_node_id(),
        "env_runner_nodes": list(runners),
        "nodes": len([n for n in ray.nodes() if n.get("Alive")]),
        "address": address or "local",
    }
    write_text_atomic(run_dir / "cluster.json", json.dumps(info, indent=1) + "\n")


def _scalars(result: dict[str, Any], module_id: str = "main") -> dict[str, float]:
    """The numbers worth a TensorBoard curve from one ``algo.train()`` result."""
    out: dict[str, float] = {}
    for key, value in result.get("env_runners", {}).items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[f"env_runners/{key}"] = float(value)
    for key, value in result.get("learners", {}).get(module_id, {}).items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[f"learner/{key}"] = float(value)
    return out


def _env_steps(result: dict[str, Any], lifetime_before: float | None) -> tuple[int, float | None]:
    """Env steps sampled in this iteration, and the lifetime count to compare the next one with: the
    difference of RLlib's lifetime counter from ``lifetime_before`` (0 for a fresh algorithm, None
    after a restore). An iteration whose results lack the counter counts 0 and keeps the baseline;
    without a baseline, RLlib's per-iteration count."""
    er = result.get("env_runners", {})
    lifetime = er.get("num_env_steps_sampled_lifetime")
    finite = isinstance(lifetime, int | float) and math.isfinite(lifetime)
    if finite and lifetime_before is not None:
        return max(int(lifetime - lifetime_before), 0), float(lifetime)
    if lifetime_before is not None:
        return 0, lifetime_before
    value = er.get("num_env_steps_sampled", 0) or 0
    steps = int(value) if isinstance(value, int | float) and math.isfinite(value) else 0
    return steps, float(lifetime) if finite else None


class Trainer:
    """One run: Ray up, algorithm built (or restored), iterations, league, eval, export."""

    def __init__(
        self, cfg: RLlibConfig, run_dir: Path, resume: bool, address: str | None = None
    ) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.resume = resume
        self.address = address
        self.stop_requested = False
        self.state: dict[str, Any] = dict(iteration=0, env_steps=0, next_slot=0, seconds=0.0)
        self.module_id = cfg.learner_module
        self.league: Any = None  # the vector path's snapshots (after Ray is imported)
        self._lifetime: float | None = None  # RLlib's lifetime env-step count, last iteration

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.stop_requested:  # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        self.stop_requested = True
        self.log.info("stopping after this iteration: checkpoint + export ...")

    def run(self) -> Path:
        self.log = RunLog(self.run_dir / "train.log")
        self.evals = EvalHistory(self.cfg, self.run_dir, self.log)
        try:
            return self._run()
        finally:
            self.log.close()

    def _run(self) -> Path:
        import torch
        from torch.utils.tensorboard import SummaryWriter

        from train.rllib.finish import finish_run

        torch.set_num_threads(self.cfg.torch_threads)
        cfg, run_dir = self.cfg, self.run_dir
        ckpt = CHECKPOINTS.latest(run_dir) if self.resume else None
        if self.resume and ckpt is None:  # prepare_run checked it; the folder changed since
            raise UserError(f"--resume: no complete checkpoint in {run_dir}")
        if ckpt is not None:
            self.state.update(json.loads((ckpt / STATE_FILE).read_text()))
            self.evals.resume(self.state["iteration"])
        init_ray(self.address, run_dir, cfg)
        import ray

        from train.rllib.vector import SnapshotLeague

        self.league = SnapshotLeague(cfg.league.size, cfg.league.latest_weight)
        keep_logs_in(run_dir)
        previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
        for s in STOP_SIGNALS:
            signal.signal(s, self._on_signal)
        try:
            algo = build_algo_config(cfg, salt=self.state["iteration"]).build_algo()
            self._lifetime = 0.0 if ckpt is None else None  # RLlib's counter starts at 0
            if ckpt is not None:
                algo.restore_from_path(str(ckpt.resolve()))
                if cfg.env == "vector":
                    self.league.load(ckpt)
                    self.league.push(algo)
                self.log.info(f"resumed from {ckpt} (iteration {self.state['iteration']})")
            record_placement(algo, run_dir, self.address)
            writer = SummaryWriter(str(run_dir / "tb"))
            try:
                self._loop(algo, writer)
                self._checkpoint(algo)
                finish_run(algo, writer, cfg, self.state, self.evals, self.log)
            finally:
                writer.close()
                algo.stop()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            ray.shutdown()
        return run_dir

    def _loop(self, algo: Any, writer: Any) -> None:
        cfg = self.cfg
        while self.state["iteration"] < cfg.iterations and not self.stop_requested:
            start = time.perf_counter()
            result = algo.train()
            seconds = time.perf_counter() - start
            it = self.state["iteration"] = self.state["iteration"] + 1
            steps, self._lifetime = _env_steps(result, self._lifetime)
            self.state["env_steps"] += steps
            self.state["seconds"] += seconds
            total = self.state["env_steps"]
            for key, value in _scalars(result, self.module_id).items():
                writer.add_scalar(key, value, total)
            writer.add_scalar("time/env_steps_per_s", steps / max(seconds, 1e-9), total)
            runners = result.get("env_runners", {})
            if cfg.env == "vector":  # one agent: the learner
                ret = runners.get("episode_return_mean")
            else:
                ret = runners.get("agent_episode_returns_mean", {}).get("main@0")
            learner = "" if ret is None else f", learner seat's mean return {ret:+.3f}"
            self.log.info(
                f"iteration {it}/{cfg.iterations}: {total} env steps, "
                f"{steps / max(seconds, 1e-9):.0f}/s{learner}"
            )
            if it % cfg.league.snapshot_every == 0:
                self._snapshot(algo)
            if cfg.eval.rounds and it % cfg.eval.every_iterations == 0:
                self.evals.evaluate(algo, writer, self.state)
            if it % cfg.checkpoint_every == 0 and it < cfg.iterations:
                self._checkpoint(algo)

    def _snapshot(self, algo: Any) -> None:
        """Freeze a copy of the learner: on the vector path into the snapshots the env runners
        seat; on the multi-agent path into the next league slot (round robin)."""
        from train.rllib.env import MAIN, league_module

        if self.cfg.env == "vector":
            it = self.state["iteration"]
            self.league.add(algo.get_module(self.module_id), f"snapshot@{it}")
            self.league.push(algo)
            return

        slot = self.state["next_slot"]
        main_state = algo.get_module(MAIN).get_state()
        algo.set_state(
            {"learner_group": {"learner": {"rl_module": {league_module(slot): main_state}}}}
        )
        self.state["next_slot"] = (slot + 1) % self.cfg.league.size

    def _checkpoint(self, algo: Any) -> Path:
        """``checkpoints/iter_NNNNNN``: RLlib's checkpoint, the vector path's snapshots and the
        counters, renamed into place when complete; the newest ``keep_checkpoints`` are kept."""
        number = self.state["iteration"]
        with CHECKPOINTS.write(self.run_dir, number, self.cfg.keep_checkpoints) as tmp:
            algo.save_to_path(str(tmp.resolve()))
            if self.cfg.env == "vector":
                self.league.save(tmp)
            (tmp / STATE_FILE).write_text(json.dumps(self.state, indent=1) + "\n")
        final = CHECKPOINTS.path(self.run_dir, number)
        self.log.info(f"checkpoint {final}")
        return final


def _holds_a_run(run_dir: Path) -> bool:
    return CHECKPOINTS.latest(run_dir) is not None


RLLIB_RUN = RunKind(
    command="python train/rllib_ppo.py",
    schema=RLlibConfig,
    length="iterations",
    holds_a_run=_holds_a_run,
    example="configs/2p_rllib.yaml",
    stale_files=("eval_history.json", "final_eval.json"),
)


def _train(run: front_door.Launch) -> None:
    Trainer(run.cfg, run.run_dir, run.args.resume, run.args.address).run()


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--address",
        default=os.environ.get("RAY_ADDRESS") or None,
        help="join a running Ray cluster: 'auto' or HOST:PORT of its head (default: $RAY_ADDRESS,"
        " else a local Ray instance)",
    )


RLLIB = front_door.FrontDoor(
    RLLIB_RUN,
    "Train a Rack-O bot with self-play PPO on Ray RLlib (local or on a cluster).",
    _train,
    _options,
    seed=False,
    errors=(UserError,),
)
main = RLLIB.main
