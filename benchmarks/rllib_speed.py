"""Training speed of the RLlib trainer beside the SB3 trainer, in one run (docs/cluster.md).

    nice python -m benchmarks.rllib_speed                    # ~10 min on a 2-core machine
    nice python -m benchmarks.rllib_speed --quick            # ~4 min
    nice python -m benchmarks.rllib_speed --quick --no-sb3 --runners 1   # the two RLlib paths
    nice python -m benchmarks.rllib_speed --runners 0 1 2 4  # more env runners than cores

Every side trains 2-player PPO with the same update (8,192 env steps per update, minibatches of
1,024, 8 epochs; ``--quick``: 2,048, 512, 2). The SB3 lines use two 128x128 tanh MLPs; the RLlib
lines the structured network (``--encoder mlp``: the MLPs):

1. SB3 MaskablePPO over ``RackoVecEnv`` (the batched numpy engine, 128 games, heuristic
   opponents): the SB3 trainer's default (``configs/2p.yaml``).
2. SB3 MaskablePPO over 8 copies of the Gymnasium view of the AEC env (``DummyVecEnv``): SB3 on the
   same env code RLlib steps.
3. RLlib PPO (``train/rllib_ppo.py``'s algorithm, ``configs/2p_rllib.yaml``'s opponents) on
   both env paths, side by side: ``env: vector`` (``RackoVectorEnv`` through gymnasium's vector
   API, ``--vector-envs`` games per runner) and ``env: multi_agent`` (``racko_v0`` one decision
   at a time, 8 envs per runner), with 0, 1, 2, ... env runners: env steps/s of whole iterations
   (sample + learn), of sampling alone (in total and per env runner), and the iteration's sample /
   learn times (RLlib's timers), which give the scaling model in docs/cluster.md.

Env steps count every decision of every seat that a policy makes (on RLlib's multi-agent path also the
league seats' moves, RLModules there); seats played inside the env are not counted. One torch thread per process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")


def bench_sb3(kind: str, steps: int, batch: int, minibatch: int, epochs: int) -> float:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    if kind == "batched":
        from train.sb3.vec_env import RackoVecEnv

        env = RackoVecEnv(128, num_players=2, opponents="heuristic", seed=0)
        n_steps = batch // 128
    else:
        from stable_baselines3.common.vec_env import DummyVecEnv

        from racko_env.gym_env import RackoGymEnv

        env = DummyVecEnv([lambda: RackoGymEnv(num_players=2, opponents=["heuristic"])] * 8)
        n_steps = batch // 8
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=n_steps,
        batch_size=minibatch,
        n_epochs=epochs,
        policy_kwargs={"net_arch": [128, 128], "activation_fn": torch.nn.Tanh},
        seed=0,
        device="cpu",
        verbose=0,
    )
    model.learn(total_timesteps=batch)  # warm-up update, not timed
    t0 = time.perf_counter()
    model.learn(total_timesteps=steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - t0)


def bench_rllib(
    path: str,
    runners: int,
    envs: int,
    iterations: int,
    batch: int,
    minibatch: int,
    epochs: int,
    encoder: str,
    run_dir: Path,
) -> dict:
    """RLlib PPO on ``configs/2p_rllib.yaml``'s opponents (heuristic .5, expert .3, league .2) on
    one env path (``vector`` or ``multi_agent``) with ``runners`` env runners of ``envs`` envs."""
    import ray

    from train.rllib.config import load_rllib_config
    from train.rllib_ppo import build_algo_config, keep_logs_in

    repo = Path(__file__).resolve().parent.parent
    base = load_rllib_config(repo / "configs" / "2p_rllib.yaml")
    opponents = dict(base.opponents)
    if encoder != "structured":  # league seats on the vector path are the structured network
        opponents.pop("league", None)
    cfg = base.model_copy(
        update={
            "env": path,
            "opponents": opponents,
            "model": base.model.model_copy(update={"encoder": encoder}),
            "ppo": base.ppo.model_copy(
                update={
                    "train_batch_size": batch,
                    "minibatch_size": minibatch,
                    "num_epochs": epochs,
                }
            ),
            "resources": base.resources.model_copy(
                update={"env_runners": runners, "envs_per_runner": envs}
            ),
        }
    )
    os.environ["PYTHONPATH"] = str(repo)
    ray.init(
        num_cpus=max(os.cpu_count() or 1, runners),
        include_dashboard=False,
        logging_level="ERROR",
        log_to_driver=False,
    )
    keep_logs_in(run_dir)
    try:
        algo = build_algo_config(cfg).build_algo()
        algo.train()  # warm-up: actors started, first weights synced
        steps = seconds = sample_s = learn_s = 0.0
        for _ in range(iterations):
            t0 = time.perf_counter()
            result = algo.train()
            seconds += time.perf_counter() - t0
            steps += result["env_runners"]["num_env_steps_sampled"]
            timers = result.get("timers", {})
            sample_s += timers.get("env_runner_sampling_timer", 0.0)
            learn_s += timers.get("learner_update_timer", 0.0)
        per_runner = batch // max(runners, 1)

        def sample(runner: object) -> tuple[int, float]:
            t = time.perf_counter()
            n = sum(len(e) for e in runner.sample(num_timesteps=per_runner))  # type: ignore[attr-defined]
            return n, time.perf_counter() - t

        t0 = time.perf_counter()
        counts = algo.env_runner_group.foreach_env_runner(sample, local_env_runner=runners == 0)
        sample_only = sum(n for n, _ in counts) / (time.perf_counter() - t0)
        per_runner_rate = [n / t for n, t in counts]
        algo.stop()
    finally:
        ray.shutdown()
    return {
        "path": path,
        "encoder": encoder,
        "env_runners": runners,
        "envs_per_runner": envs,
        "train_env_steps_per_s": steps / seconds,
        "sample_only_env_steps_per_s": sample_only,
        "sample_env_steps_per_s_per_runner": per_runner_rate,
        "sample_s_per_iteration": sample_s / iterations,
        "learn_s_per_iteration": learn_s / iterations,
        "env_steps_per_iteration": steps / iterations,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller batches (~2 min)")
    parser.add_argument("--runners", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--paths",
        nargs="+",
        default=["vector", "multi_agent"],
        choices=["vector", "multi_agent"],
        help="the RLlib env paths to time (config key env)",
    )
    parser.add_argument("--vector-envs", type=int, default=128, help="games per vector runner")
    parser.add_argument("--encoder", default="structured", choices=["structured", "mlp"])
    parser.add_argument("--no-sb3", action="store_true", help="skip the SB3 lines")
    parser.add_argument("--iterations", type=int, default=2, help="timed RLlib iterations")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    batch, minibatch, epochs = (2048, 512, 2) if args.quick else (8192, 1024, 8)
    out: dict = {"batch": batch, "minibatch": minibatch, "epochs": epochs, "cpus": os.cpu_count()}
    if not args.no_sb3:
        out["sb3_batched"] = bench_sb3("batched", 2 * batch, batch, minibatch, epochs)
        print(f"SB3 MaskablePPO, batched engine (128 games): {out['sb3_batched']:,.0f} env steps/s")
        out["sb3_aec"] = bench_sb3("aec", 2 * batch, batch, minibatch, epochs)
        print(f"SB3 MaskablePPO, 8 AEC-env copies (DummyVecEnv): {out['sb3_aec']:,.0f} env steps/s")
    out["rllib"] = []
    from train.rllib_ppo import keep_home_clean

    run_dir = Path(tempfile.mkdtemp(prefix="rllib_speed_"))
    keep_home_clean(run_dir, joining=False)  # before Ray is imported
    for n in args.runners:
        for path in args.paths:
            envs = args.vector_envs if path == "vector" else 8
            r = bench_rllib(
                path, n, envs, args.iterations, batch, minibatch, epochs, args.encoder, run_dir
            )
            out["rllib"].append(r)
            per = ", ".join(f"{x:,.0f}" for x in r["sample_env_steps_per_s_per_runner"])
            print(
                f"RLlib PPO ({args.encoder}), env: {path}, {n} env runners x {envs} envs: "
                f"{r['train_env_steps_per_s']:,.0f} env steps/s training, "
                f"{r['sample_only_env_steps_per_s']:,.0f} sampling alone (per runner: {per}); "
                f"per iteration sample {r['sample_s_per_iteration']:.1f} s + learn "
                f"{r['learn_s_per_iteration']:.1f} s",
                flush=True,
            )
    shutil.rmtree(run_dir, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
