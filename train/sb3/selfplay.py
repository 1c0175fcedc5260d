"""Self-play: the MLP snapshot of a model, and the training callbacks (snapshots, checkpoints,
evaluation); the snapshot pool itself is every trainer's (``train.common.snapshot_pool``).

All three callbacks act at rollout boundaries (``_on_rollout_start``), where the rollout buffer
is empty and the model has just been updated, so a checkpoint taken there loses nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from train.common.snapshot import SnapshotPolicy
from train.common.snapshot_pool import SnapshotPool


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
            self.training_env.set_opponent_pool(*self.pool.mix(self.opponents))
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
