"""Weights as data (train/sb3/checkpoint.py): tensors round-trip, and a file that is not data is
refused in one line naming it, with nothing in it run."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import torch

from train.common.files import RunFolderError
from train.sb3.checkpoint import load_torch_data, torch_bytes


def test_tensors_round_trip_and_a_pickled_file_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "net.pt"
    path.write_bytes(torch_bytes({"w": torch.arange(6.0).reshape(2, 3)}))
    assert torch.equal(load_torch_data(path, "weights")["w"], torch.arange(6.0).reshape(2, 3))
    ran = tmp_path / "ran"
    pickled = tmp_path / "code.pt"
    pickled.write_bytes(pickle.dumps(Path.touch.__get__(ran)))  # would create `ran` if loaded
    with pytest.raises(RunFolderError, match="not a data-only weights file") as err:
        load_torch_data(pickled, "weights")
    assert len(str(err.value).splitlines()) == 1
    assert not ran.exists()
