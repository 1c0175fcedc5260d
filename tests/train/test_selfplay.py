"""Self-play (train/common/snapshot.py): the snapshot pool's mix."""

from __future__ import annotations

import numpy as np
import pytest

from train.common.snapshot import SnapshotPolicy, SnapshotPool


def test_pool_mix_shares_the_self_weight() -> None:
    layer = [(np.zeros((14, 177), np.float32), np.zeros(14, np.float32))]
    pool = SnapshotPool(size=3, latest_weight=0.5)
    with pytest.raises(ValueError, match="empty"):
        pool.mix({"self": 1.0})
    snaps = [SnapshotPolicy(layer, "tanh", f"s{i}") for i in range(4)]
    pool.add(snaps[0])
    specs, w = pool.mix({"heuristic": 1.0, "self": 2.0, "expert": 0.0})
    assert specs == ["heuristic", snaps[0]] and w == [1.0, 2.0]
    for s in snaps[1:]:
        pool.add(s)
    specs, w = pool.mix({"heuristic": 1.0, "self": 2.0})
    assert specs == ["heuristic", snaps[3], snaps[1], snaps[2]]  # the oldest dropped out
    assert w == [1.0, 1.0, 0.5, 0.5]
