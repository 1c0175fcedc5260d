"""The self-play pool of every trainer: the newest snapshots of the learner, saved as plain arrays.

Each snapshot is saved as ``.npz`` arrays with its kind, a name of ``racko_env.learner_games.
STATE_POLICIES`` (``"snapshot"``: the numpy MLP, ``train.common.snapshot``; ``"structured"``: the
structured network, ``train.network.frozen``), and rebuilt from them without pickle.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from racko_env.learner_games import STATE_POLICIES, state_kind
from train.common.config import SELF  # the opponents key that stands for the snapshot pool


class SnapshotPool:
    """The newest ``size`` snapshots; ``mix`` turns them and the baselines into a weighted pool.

    The ``"self"`` weight of the opponents mix is shared out: ``latest_weight`` of it to the newest
    snapshot, the rest equally over the older ones (all to the newest while it is alone).
    """

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
        """Each snapshot as ``.npz`` arrays with its kind (``racko_env.learner_games.STATE_POLICIES``)."""
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
