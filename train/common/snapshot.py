"""The learner's snapshots: ``SnapshotPolicy``, an MLP policy frozen into numpy (a self-play
opponent that plays as ``model.predict(..., deterministic=True)`` does), and ``SnapshotPool``, the
self-play pool of every trainer, saved as plain arrays with each snapshot's kind
(``racko_env.learner_games.STATE_POLICIES``) and rebuilt from them without pickle."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from racko_env.learner_games import STATE_POLICIES, state_kind
from train.common.config import SELF  # the opponents key that stands for the snapshot pool

MASKED_LOGIT = -1e8
ACTIVATIONS = ("tanh", "relu")


class SnapshotPolicy:
    """Masked-argmax play of an MLP policy; a per-game bot and a ``BatchPolicy`` at once. Its
    layers, ``[(W, b), ...]`` with ``W`` shaped ``(out, in)`` (torch's Linear layout); the last
    pair is the action layer (14 outputs), the others are hidden layers followed by
    ``activation``."""

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


class SnapshotPool:
    """The newest ``size`` snapshots; ``mix`` turns them and the baselines into a weighted pool. The
    ``"self"`` weight of the opponents mix is shared out: ``latest_weight`` of it to the newest
    snapshot, the rest equally over the older ones (all to the newest while it is alone)."""

    def __init__(self, size: int, latest_weight: float) -> None:
        self.size = size
        self.latest_weight = latest_weight
        self.snapshots: list[Any] = []  # SnapshotPolicy, or train.network.FrozenPolicy

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
        """Each snapshot as ``.npz`` arrays with its kind (a name of ``STATE_POLICIES``)."""
        from racko_env.files import write_bytes_atomic

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
    kind = state_kind(snapshot)
    if kind is None:
        raise ValueError(f"cannot save snapshot {snapshot!r}: its class is not in STATE_POLICIES")
    return kind
