"""The PPO update's own speed: what the structured policy's gradient steps cost, and the env steps/s
ceiling that puts on PPO with a recipe's epochs.

One PPO update of ``configs/2p.yaml`` is ``n_epochs`` passes over a 16,384-step rollout in minibatches
of ``batch_size``: for each minibatch the actor's and the critic's towers forward (ten slots each),
the masked distribution, the loss and its backward pass, and an Adam step. This times exactly that
(``MaskableActorCriticPolicy.evaluate_actions`` on cached features, as in training) with 1 and 2
torch threads, side by side in one run, and prints per thread count:

- ms per minibatch and seconds per update (``--epochs`` x 16,384 / ``--batch``);
- the arithmetic rate (multiply-adds counted from the layer shapes, forward + backward = 3x forward);
- the ceiling on PPO's env steps/s if the update had the machine to itself (rollout free), and with
  ``--rollout-us`` microseconds of single-thread rollout per env step (the main job's, measured by
  ``benchmarks/time_to_expert.py``) run before each update.

    python -m benchmarks.update_speed                  # the main job's recipe (4 epochs)
    python -m benchmarks.update_speed --epochs 2 --rollout-us 90

Timings are wall clock on this machine: quote them with the machine's load.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402

STEPS_PER_UPDATE = 16_384


def forward_macs(slot_in: int, glob: int, slot_hidden: list[int], trunk: list[int]) -> int:
    """Multiply-adds of one row's forward through both towers and the heads (train/network/structured.py:
    the first slot layer's global half once per row, the slot network on ten slots)."""
    slots = 10
    first = slots * slot_in * slot_hidden[0] + glob * slot_hidden[0]
    rest = sum(slots * a * b for a, b in zip(slot_hidden[:-1], slot_hidden[1:], strict=True))
    dims = [glob + 2 * slot_hidden[-1], *trunk]
    trunk_macs = sum(a * b for a, b in zip(dims[:-1], dims[1:], strict=True))
    tower = first + rest + trunk_macs
    heads = slots * (slot_hidden[-1] + trunk[-1]) + trunk[-1] * 4 + trunk[-1]  # logits + value
    return 2 * tower + heads


def time_minibatch(threads: int, batch: int, repeats: int) -> float:
    """Best wall seconds of one minibatch's gradient step over ``repeats`` tries."""
    from gymnasium import spaces

    from agents.features import GLOBAL_FEATURES, RACK_SIZE, SLOT_FEATURES
    from racko_env.observation import OBS_SIZE
    from train.sb3.policy import StructuredPolicy

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    width = OBS_SIZE + RACK_SIZE * SLOT_FEATURES + GLOBAL_FEATURES
    policy = StructuredPolicy(
        spaces.Box(-np.inf, np.inf, (width,), np.float32),
        spaces.Discrete(14),
        lambda _: 3e-4,
        num_cards=40,
        slot_hidden=(64, 64),
        trunk_hidden=(128, 128),
    )
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(batch, width, generator=gen)
    masks = (torch.rand(batch, 14, generator=gen) > 0.3).numpy()
    masks[:, 0] = True
    actions = torch.zeros(batch, dtype=torch.long)
    best = float("inf")
    for i in range(repeats + 1):
        t0 = time.perf_counter()
        values, log_prob, entropy = policy.evaluate_actions(x, actions, action_masks=masks)
        loss = -log_prob.mean() + values.mean() - entropy.mean()
        policy.optimizer.zero_grad()
        loss.backward()
        policy.optimizer.step()
        if i:  # the first is warm-up
            best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--epochs", type=int, default=4, help="PPO epochs per update (configs/2p.yaml: 4)"
    )
    ap.add_argument(
        "--batch", type=int, default=4096, help="minibatch size (configs/2p.yaml: 4096)"
    )
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument(
        "--rollout-us",
        type=float,
        default=0.0,
        help="single-thread rollout microseconds per env step to add before each update",
    )
    args = ap.parse_args(argv)
    from agents.features import GLOBAL_FEATURES, SLOT_FEATURES

    macs = forward_macs(SLOT_FEATURES, GLOBAL_FEATURES, [64, 64], [128, 128])
    minibatches = args.epochs * STEPS_PER_UPDATE / args.batch
    rows = []
    print(
        f"forward {macs / 1e3:.0f}k multiply-adds per row; {args.epochs} epochs, batch {args.batch}"
    )
    for threads in args.threads:
        sec = time_minibatch(threads, args.batch, args.repeats)
        update = sec * minibatches
        gflops = 3 * 2 * macs * args.batch / sec / 1e9
        alone = STEPS_PER_UPDATE / update
        with_rollout = STEPS_PER_UPDATE / (update + STEPS_PER_UPDATE * args.rollout_us / 1e6)
        rows.append(
            {
                "threads": threads,
                "ms_per_minibatch": round(sec * 1e3, 1),
                "s_per_update": round(update, 2),
                "gflops": round(gflops, 1),
                "steps_per_s_update_only": round(alone),
                "steps_per_s_with_rollout": round(with_rollout),
            }
        )
        print(
            f"{threads} thread(s): {sec * 1e3:.0f} ms per minibatch, {update:.2f} s per update, "
            f"{gflops:.1f} GFLOP/s; PPO ceiling {alone:,.0f} env steps/s (update only), "
            f"{with_rollout:,.0f} with {args.rollout_us:.0f} us of rollout per step"
        )
    return rows


if __name__ == "__main__":
    main()
