"""Weights as data (train/common/weights.py): a state dict round-trips, a file that does not fit
the network or is not data is refused in one line naming it, and nothing in it runs."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import torch
from torch import nn

from train.common.files import RunFolderError
from train.common.weights import load_state_dict, save_state_dict


def test_a_state_dict_round_trips_and_a_wrong_file_is_one_line(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net, path = nn.Linear(3, 2), tmp_path / "net.pt"
    save_state_dict(net, path)
    again = load_state_dict(nn.Linear(3, 2), path, "value net")
    assert torch.equal(again.weight, net.weight) and not again.training
    with pytest.raises(RunFolderError, match="value net .* does not fit the config's net") as err:
        load_state_dict(nn.Linear(4, 2), path, "value net")
    assert len(str(err.value).splitlines()) == 1
    ran = tmp_path / "ran"
    pickled = tmp_path / "code.pt"
    pickled.write_bytes(pickle.dumps(Path.touch.__get__(ran)))  # would create `ran` if loaded
    with pytest.raises(RunFolderError, match="not a data-only weights file"):
        load_state_dict(nn.Linear(3, 2), pickled, "value net")
    assert not ran.exists()
