"""Observations per second of the structured policy's features: the kernel against the torch module.

The compiled kernel ``agents.features.rack_features`` (what training, the self-play snapshots and
the quick evaluation use) and the torch module ``train.network.features.RackFeatures`` (what the exported
ONNX graph computes) on the same observations from real play, one thread each, at batch sizes
16 / 256 / 1024 / 4096, side by side in one run. Each cell is the best of ``--repeats`` timings of
at least ``--seconds`` each, interleaved so that load from other processes hits both alike.

    python -m benchmarks.feature_speed                 # 2 players
    python -m benchmarks.feature_speed --players 3 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np
import torch

from agents.features import rack_features
from racko_env.rules import deck_size
from train.common.onnx_export import sample_observations
from train.network.features import RackFeatures

BATCHES = (16, 256, 1024, 4096)


def rate(fn, obs: np.ndarray, seconds: float) -> float:
    """Observations per second of ``fn(obs)`` over at least ``seconds``."""
    fn(obs)  # warm (compiles the kernel on its first call)
    calls, t0 = 0, time.perf_counter()
    while True:
        fn(obs)
        calls += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return calls * len(obs) / elapsed


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batches", type=int, nargs="+", default=list(BATCHES))
    ap.add_argument("--json", type=Path, help="also write the table here")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    n = deck_size(args.players)
    obs, _ = sample_observations(args.players, {}, max(args.batches), seed=1)
    module = RackFeatures(n)

    def kernel(x: np.ndarray) -> None:
        rack_features(x, n)

    def torch_module(x: np.ndarray) -> None:
        with torch.no_grad():
            module(torch.as_tensor(x))

    rows = []
    print(f"{args.players} players, observations/s on one thread (best of {args.repeats})")
    print(f"{'batch':>6} {'kernel':>10} {'torch':>10} {'ratio':>7}")
    for b in args.batches:
        x = obs[:b]
        k = t = 0.0
        for _ in range(args.repeats):
            k = max(k, rate(kernel, x, args.seconds))
            t = max(t, rate(torch_module, x, args.seconds))
        rows.append({"batch": b, "kernel_obs_per_s": round(k), "torch_obs_per_s": round(t)})
        print(f"{b:>6} {k:>10,.0f} {t:>10,.0f} {k / t:>6.1f}x", flush=True)
    result = {"players": args.players, "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
