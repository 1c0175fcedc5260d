"""Training speed, side by side: the batched engine and VecEnv against the AEC env and SB3 defaults.

    python -m benchmarks.train_speed            # the full run recorded in docs/vector.md (~3 min)
    python -m benchmarks.train_speed --quick    # a smaller run (~40 s)

1. Raw env steps/s, random legal play: the batched engine (``--games`` games, one decision per game
   per step, with and without encoding the acting seat's observation) vs ``racko_v0.raw_env``
   (``env.last()`` + a random legal action, the usual AEC loop).
2. MaskablePPO training env steps/s: SB3's default setup (``MaskablePPO("MlpPolicy", env)`` on the
   single-agent Gymnasium view: one env, default hyperparameters) vs ``RackoVecEnv`` with 1,024
   games (a batch-sized PPO config, and SB3's default minibatch/epochs for comparison).
3. Memory: bytes of the batched state per 1,024 games, and RSS / traced Python memory over a long
   VecEnv run (many episodes per game).

Opponents are ``random`` everywhere. One torch thread.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time
import tracemalloc

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def bench_batched_engine(games: int, steps: int, encode: bool) -> float:
    from racko_env.observation import OBS_SIZE
    from racko_env.vector import VectorRacko

    v = VectorRacko(games, 2, seed=0)
    eng = v.game
    rng = np.random.default_rng(0)
    idx = np.arange(games)
    buf = np.empty((games, OBS_SIZE), np.float32)
    keys = np.empty((games, 14))
    t0 = time.perf_counter()
    for _ in range(steps):
        masks = eng.legal_mask()
        if encode:
            v.observe(idx, eng.current, out=buf)
        rng.random(out=keys)
        keys[~masks] = -1.0
        res = v.step(keys.argmax(axis=1))
        done = res.terminated | res.truncated
        if done.any():
            v.reset(np.flatnonzero(done))
    return games * steps / (time.perf_counter() - t0)


def bench_aec(steps: int) -> float:
    from racko_env import racko_v0

    env = racko_v0.raw_env(num_players=2)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for _ in range(steps):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.reset()
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    return steps / (time.perf_counter() - t0)


def bench_ppo_default(steps: int) -> float:
    from sb3_contrib import MaskablePPO

    from racko_env.gym_env import RackoGymEnv

    env = RackoGymEnv(num_players=2, opponents=["random"])
    model = MaskablePPO("MlpPolicy", env, seed=0, verbose=0)  # SB3 wraps it in DummyVecEnv
    t0 = time.perf_counter()
    model.learn(total_timesteps=steps)
    return model.num_timesteps / (time.perf_counter() - t0)


def bench_ppo_batched(
    games: int, steps: int, batch_size: int, n_epochs: int, n_steps: int
) -> float:
    from sb3_contrib import MaskablePPO

    from train.sb3.vec_env import RackoVecEnv

    env = RackoVecEnv(games, num_players=2, opponents="random", seed=0)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=n_steps,
        batch_size=batch_size,
        n_epochs=n_epochs,
        seed=0,
        verbose=0,
    )
    t0 = time.perf_counter()
    model.learn(total_timesteps=steps)
    return model.num_timesteps / (time.perf_counter() - t0)


def bench_vecenv_rollout(games: int, steps: int) -> float:
    """RackoVecEnv alone (learner random, opponents random): env steps/s without PPO."""
    from train.sb3.vec_env import RackoVecEnv

    env = RackoVecEnv(games, num_players=2, opponents="random", seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for _ in range(steps):
        m = env.action_masks()
        env.step(((rng.random(m.shape) + 0.01) * m).argmax(axis=1))
    return games * steps / (time.perf_counter() - t0)


def state_bytes(games: int) -> dict[str, float]:
    """What ``games`` games cost: the state arrays, and all memory traced while building one."""
    from train.sb3.vec_env import RackoVecEnv

    RackoVecEnv(2, opponents="random").reset()  # imports and first-call caches, not counted
    out = {}
    for players in (2, 4):
        gc.collect()
        tracemalloc.start()
        env = RackoVecEnv(games, num_players=players, opponents="random", seed=0)
        env.reset()
        traced = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        arrays = [v for v in vars(env.games.game).values() if isinstance(v, np.ndarray)]
        arrays += [v for v in vars(env).values() if isinstance(v, np.ndarray)]
        out[f"state_arrays_kib_{players}p"] = sum(a.nbytes for a in arrays) / 1024
        out[f"traced_env_kib_{players}p"] = traced / 1024
        del env
    return out


def memory_over_run(games: int, steps: int, samples: int) -> dict[str, list[float]]:
    """RSS and traced Python memory while the VecEnv plays many episodes per game.

    The learner plays like ``heuristic`` (90%) so that rounds are short and episodes many.
    """
    from agents.batched import BatchHeuristic
    from train.sb3.vec_env import RackoVecEnv

    env = RackoVecEnv(games, num_players=2, opponents=["random", "heuristic"], seed=0)
    obs = env.reset()
    rng = np.random.default_rng(0)
    learner = BatchHeuristic()
    out: dict[str, list[float]] = {"episodes": [], "rss_mib": [], "traced_kib": []}
    tracemalloc.start()
    for i in range(steps):
        m = env.action_masks()
        explore = ((rng.random(m.shape) + 0.01) * m).argmax(axis=1)
        obs, *_ = env.step(np.where(rng.random(games) < 0.9, learner.act_batch(obs, m), explore))
        if (i + 1) % (steps // samples) == 0:
            gc.collect()
            out["episodes"].append(int(env._episodes.sum()))
            out["rss_mib"].append(round(rss_mib(), 1))
            out["traced_kib"].append(round(tracemalloc.get_traced_memory()[0] / 1024, 1))
    tracemalloc.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a smaller run (about 40 s)")
    ap.add_argument("--games", type=int, default=1024, help="games in the batch (default 1024)")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    q = args.quick
    b = args.games
    res: dict[str, object] = {"games": b, "load_avg": os.getloadavg()}

    def show(key: str, value: object) -> None:
        res[key] = value
        print(f"{key:44s} {value:,.0f}" if isinstance(value, float) else f"{key:44s} {value}")

    print("== 1. raw env steps/s, random legal play")
    show("aec_env_steps_per_s", bench_aec(5_000 if q else 30_000))
    show("batched_engine_steps_per_s", bench_batched_engine(b, 300 if q else 2_000, False))
    show("batched_engine_with_obs_steps_per_s", bench_batched_engine(b, 300 if q else 2_000, True))
    show("rackovecenv_steps_per_s (opponents inside)", bench_vecenv_rollout(b, 100 if q else 500))
    print("== 2. MaskablePPO training env steps/s")
    default = bench_ppo_default(2_048 if q else 6_144)
    show("ppo_default_setup_steps_per_s", default)
    fast = bench_ppo_batched(b, b * 64 * (1 if q else 3), 8_192, 4, 64)
    show("ppo_batched_steps_per_s (bs 8192, 4 epochs)", fast)
    show("speedup_batched_vs_default", round(fast / default, 1))
    same = bench_ppo_batched(b, b * 16, 64, 10, 16)
    show("ppo_batched_sb3_minibatch_steps_per_s (bs 64, 10 epochs)", same)
    print("== 3. memory")
    for k, v in state_bytes(b).items():
        show(k, round(v, 1))
    run = memory_over_run(b, 400 if q else 2_000, 5)
    show("memory_over_run", run)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
