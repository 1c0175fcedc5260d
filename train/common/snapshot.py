"""A frozen copy of the learner's policy network as plain numpy: a self-play opponent.

Numpy only (no torch), so snapshots pass cheaply into subprocess envs and run there without a
torch thread pool. The forward pass matches SB3's MLP policy head (Linear + activation layers, then
the action layer); masked actions get the same -1e8 logit SB3 uses, and play is the masked argmax
(``model.predict(..., deterministic=True)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

MASKED_LOGIT = -1e8
ACTIVATIONS = ("tanh", "relu")


class SnapshotPolicy:
    """Masked-argmax play of an MLP policy; a per-game bot and a ``BatchPolicy`` at once.

    layers: ``[(W, b), ...]`` with ``W`` shaped ``(out, in)`` (torch's Linear layout); the last
    pair is the action layer (14 outputs), the others are hidden layers followed by ``activation``.
    """

    def __init__(
        self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str, name: str = "snapshot"
    ) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
        if not layers:
            raise ValueError("a snapshot needs at least the action layer")
        self.layers = [
            (np.asarray(w, dtype=np.float32), np.asarray(b, dtype=np.float32)) for w, b in layers
        ]
        for i, (w, b) in enumerate(self.layers):
            if w.ndim != 2 or b.shape != (w.shape[0],):
                raise ValueError(f"layer {i}: weight {w.shape} and bias {b.shape} do not fit")
            if i and w.shape[1] != self.layers[i - 1][0].shape[0]:
                raise ValueError(f"layer {i}: input size {w.shape[1]} != previous output size")
        self.activation = activation
        self.name = name

    def logits(self, obs: np.ndarray) -> np.ndarray:
        h = np.asarray(obs, dtype=np.float32)
        for w, b in self.layers[:-1]:
            h = h @ w.T + b
            h = np.tanh(h) if self.activation == "tanh" else np.maximum(h, 0.0)
        w, b = self.layers[-1]
        return h @ w.T + b

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = self.logits(obs)
        logits = np.where(np.asarray(masks, dtype=bool), logits, np.float32(MASKED_LOGIT))
        return logits.argmax(axis=1).astype(np.int64)

    # per-game bot interface (agents.base.Bot duck type)
    def reset(self) -> None:
        pass

    def act(self, observation: Mapping[str, Any]) -> int:
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        mask = np.asarray(observation["action_mask"], dtype=bool)[None]
        return int(self.act_batch(obs, mask)[0])

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The snapshot as named numpy arrays (data only: saved with ``np.savez``)."""
        arrays = {f"w{i}": w for i, (w, _) in enumerate(self.layers)}
        arrays.update({f"b{i}": b for i, (_, b) in enumerate(self.layers)})
        arrays["activation"] = np.array(self.activation)
        return arrays

    @classmethod
    def from_arrays(cls, data: Mapping[str, np.ndarray], name: str) -> SnapshotPolicy:
        n = sum(1 for k in data if k.startswith("w"))
        layers = [(data[f"w{i}"], data[f"b{i}"]) for i in range(n)]
        return cls(layers, str(data["activation"]), name)

    def __repr__(self) -> str:
        return f"<SnapshotPolicy {self.name!r}>"
