"""Self-play: the snapshot pool, and the training callbacks (snapshots, checkpoints, evaluation).

All three callbacks act at rollout boundaries (``_on_rollout_start``), where the rollout buffer
is empty and the model has just been updated, so a checkpoint taken there loses nothing.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from train.common.config import SELF  # the opponents key that stands for the snapshot pool
from train.common.snapshot import SnapshotPolicy


def snapshot_from_model(model: Any, name: str = "snapshot") -> SnapshotPolicy:
    """Copy the policy head of a MaskablePPO MLP policy into a numpy ``SnapshotPolicy``."""
    import torch.nn as nn

    policy = model.policy
    if not isinstance(policy.pi_features_extractor, nn.Flatten | type(None)) and any(
        True for _ in policy.pi_features_extractor.parameters()
    ):
        raise ValueError("only MLP policies over the flat observation can be snapshot/exported")
    layers: list[tuple[np.ndarray, np.ndarray]] = []
    activation = None
    for module in policy.mlp_extractor.policy_net:
        if isinstance(module, nn.Linear):
            layers.append(_linear(module))
        elif isinstance(module, nn.Tanh | nn.ReLU):
            kind = "tanh" if isinstance(module, nn.Tanh) else "relu"
            if activation not in (None, kind):
                raise ValueError("mixed activations are not supported")
            activation = kind
        else:
            raise ValueError(f"unsupported layer in the policy network: {module!r}")
    layers.append(_linear(policy.action_net))
    return SnapshotPolicy(layers, activation or "tanh", name)


def _linear(module: Any) -> tuple[np.ndarray, np.ndarray]:
    return (
        module.weight.detach().cpu().numpy().astype(np.float32).copy(),
        module.bias.detach().cpu().numpy().astype(np.float32).copy(),
    )


class SnapshotPool:
    """The newest ``size`` snapshots; ``mix`` turns them and the baselines into a weighted pool.

    The ``"self"`` weight of the opponents mix is shared out: ``latest_weight`` of it to the newest
    snapshot, the rest equally over the older ones (all to the newest while it is alone).
    """

    def __init__(self, size: int, latest_weight: float) -> None:
        self.size = size
        self.latest_weight = latest_weight
        self.snapshots: list[Any] = []  # SnapshotPolicy, or train.sb3.policy.FrozenPolicy

    def add(self, snapshot: Any) -> None:
        self.snapshots.append(snapshot)
        del self.snapshots[: -self.size]

    def mix(self, opponents: dict[str, float]) -> tuple[list[Any], list[float]]:
        specs: list[Any] = []
        weights: list[float] = []
        for spec, w in opponents.items():
            if spec != SELF and w > 0:
                specs.append(spec)
                weights.append(float(w))
        w_self = float(opponents.get(SELF, 0.0))
        if w_self > 0 and self.snapshots:
            *older, newest = self.snapshots
            share_new = w_self if not older else w_self * self.latest_weight
            specs.append(newest)
            weights.append(share_new)
            for snap in older:
                specs.append(snap)
                weights.append((w_self - share_new) / len(older))
        if not specs:
            raise ValueError(
                "the opponent pool is empty: give a baseline a weight or add snapshots"
            )
        return specs, weights

    def save(self, folder: Path) -> None:
        """Each snapshot as ``.npz`` arrays with its kind (``train.sb3.vec_env.STATE_POLICIES``)."""
        from train.common.files import write_bytes_atomic

        folder.mkdir(parents=True, exist_ok=True)
        names = []
        for i, snap in enumerate(self.snapshots):
            fname = f"snapshot_{i:03d}.npz"
            buf = io.BytesIO()
            np.savez(buf, kind=np.array(_kind(snap)), name=np.array(snap.name), **snap.to_arrays())
            write_bytes_atomic(folder / fname, buf.getvalue())
            names.append(fname)
        (folder / "pool.json").write_text(json.dumps({"snapshots": names}, indent=1))

    def load(self, folder: Path) -> None:
        """Snapshots from a ``save`` folder (numpy ``.npz`` without pickle; plain names only)."""
        from train.sb3.vec_env import STATE_POLICIES

        names = json.loads((folder / "pool.json").read_text())["snapshots"]
        for n in names:
            if not isinstance(n, str) or Path(n).name != n:
                raise ValueError(f"{folder / 'pool.json'}: bad snapshot file name {n!r}")
        snapshots = []
        for n in names:
            with np.load(folder / n, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
            kind = str(arrays.pop("kind", "snapshot"))
            if kind not in STATE_POLICIES:
                raise ValueError(f"{folder / n}: unknown snapshot kind {kind!r}")
            snapshots.append(STATE_POLICIES[kind].from_arrays(arrays, str(arrays.pop("name"))))
        self.snapshots = snapshots


def _kind(snapshot: Any) -> str:
    from train.sb3.vec_env import STATE_POLICIES

    for kind, cls in STATE_POLICIES.items():
        if type(snapshot) is cls:
            return kind
    raise ValueError(f"cannot save snapshot {snapshot!r}: its class is not in STATE_POLICIES")


def push_pool(vec_env: Any, specs: list[Any], weights: list[float]) -> None:
    """Hand the pool to every env of a VecEnv (SB3 VecEnvs and the batched ``RackoVecEnv``)."""
    if hasattr(vec_env, "set_opponent_pool") and not hasattr(vec_env, "envs"):
        vec_env.set_opponent_pool(specs, weights)  # the batched VecEnv
    else:
        vec_env.env_method("set_opponent_pool", specs, weights)


class SelfPlayCallback(BaseCallback):
    """Every ``every_updates`` PPO updates, freeze the learner into the pool and push the pool."""

    def __init__(
        self,
        pool: SnapshotPool,
        opponents: dict[str, float],
        every_updates: int,
        snapshot: Callable[[Any, str], Any] = snapshot_from_model,
    ):
        super().__init__()
        self.snapshot = snapshot  # learner model -> frozen batch policy
        self.pool = pool
        self.opponents = opponents
        self.every_updates = every_updates
        self.last_update = 0  # the update count of the newest snapshot

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        updates = rollouts_done(self.model)
        if updates > self.last_update and updates % self.every_updates == 0:
            self.pool.add(self.snapshot(self.model, f"snapshot@{self.num_timesteps}"))
            self.last_update = updates
            push_pool(self.training_env, *self.pool.mix(self.opponents))
            self.logger.record("selfplay/pool_size", len(self.pool.snapshots))


class StopOnSignal(BaseCallback):
    """Ends training cleanly on SIGINT/SIGTERM (Ctrl-C) at the next rollout boundary.

    The rollout in progress is finished and trained on; at the next boundary (after the other
    callbacks) ``on_stop()`` runs (the trainer writes a checkpoint there) and collection stops
    after one more env step, which is discarded. ``--resume`` from that checkpoint continues bit
    for bit as if the run had never stopped. A second Ctrl-C aborts at once (KeyboardInterrupt);
    the newest periodic checkpoint then holds.
    """

    def __init__(self, on_stop: Callable[[], Any] | None = None) -> None:
        super().__init__()
        self.on_stop = on_stop
        self.stop_requested = False
        self.stopped_at: int | None = None  # the boundary (timesteps) where the run stopped

    def request_stop(self, signum: int, frame: Any) -> None:
        if self.stop_requested:  # a second Ctrl-C aborts at once
            raise KeyboardInterrupt
        print(
            "stop requested: finishing this rollout and update, then checkpoint and export "
            "(Ctrl-C again aborts at once)",
            flush=True,
        )
        self.stop_requested = True

    def _on_rollout_start(self) -> None:
        if self.stop_requested and self.stopped_at is None:
            self.stopped_at = int(self.num_timesteps)
            if self.on_stop is not None:
                self.on_stop()

    def _on_step(self) -> bool:
        return self.stopped_at is None


def rollouts_done(model: Any) -> int:
    return model.num_timesteps // (model.n_steps * model.n_envs)


class PeriodicCallback(BaseCallback):
    """Call ``fn(self)`` at the first rollout boundary after every ``every_steps`` env steps.

    ``last_mark`` (the multiple of ``every_steps`` last served) is saved in checkpoints so that a
    resumed run fires exactly where the uninterrupted run would have.
    """

    def __init__(self, every_steps: int, fn: Callable[[PeriodicCallback], None]):
        super().__init__()
        self.every_steps = every_steps
        self.fn = fn
        self.last_mark = 0

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        mark = self.num_timesteps // self.every_steps
        if mark > self.last_mark:
            self.last_mark = mark
            self.fn(self)
