"""Checkpoints and weight files (train/sb3/checkpoint.py): data only, no pickle on any load path;
crafted files are refused without running them."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from train.sb3 import export
from train.sb3 import run as ppo

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke.yaml"


class Payload:
    """A pickle that writes a marker file when it is unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "code ran"))


def _crafted_weights(path: Path, marker: Path) -> Path:
    torch.save({"format": "racko-ppo-weights", "version": 1, "policy": Payload(marker)}, path)
    return path


def test_the_crafted_pickle_would_run_code(tmp_path):
    """The control: loading the crafted file the unsafe way does run its code."""
    marker = tmp_path / "marker"
    path = _crafted_weights(tmp_path / "evil.pt", marker)
    torch.load(path, weights_only=False)
    assert marker.read_text() == "code ran"
    marker.unlink()
    pickle.loads(pickle.dumps(Payload(marker)))
    assert marker.exists()


def test_a_crafted_init_from_is_refused_without_running_it(tmp_path, capsys):
    marker = tmp_path / "marker"
    evil = _crafted_weights(tmp_path / "evil.pt", marker)
    cfg = yaml.safe_load(SMOKE.read_text())
    cfg["init_from"] = str(evil)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    assert ppo.main(["--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "init_from" in err and "refused without running it" in err
    assert not marker.exists()
    # an SB3 .zip (a pickle inside) is not even opened
    cfg["init_from"] = str(tmp_path / "model.zip")
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    assert ppo.main(["--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "r2")]) == 2
    assert "pickled .zip models are not loaded" in capsys.readouterr().err


@pytest.mark.slow
def test_a_crafted_checkpoint_or_final_model_is_refused_without_running_it(
    short_run, tmp_path, capsys
):
    marker = tmp_path / "marker"
    ckpt = short_run / "checkpoints" / "step_000000000512"
    args = ["--resume", "--out", str(short_run), "--total-steps", "1024", "--no-progress"]
    good = (ckpt / "model.pt").read_bytes()
    torch.save({"policy": Payload(marker), "optimizer": {}, "torch_rng": None}, ckpt / "model.pt")
    assert ppo.main(args) == 2
    assert "refused without running it" in capsys.readouterr().err
    (ckpt / "model.pt").write_bytes(good)
    # an object array in the numpy state is refused too (np.load without pickle)
    arrays = dict(np.load(ckpt / "arrays.npz"))
    arrays["model/last_obs"] = np.array([Payload(marker)], dtype=object)
    np.savez(ckpt / "arrays.npz", **arrays)
    assert ppo.main(args) == 2
    assert "arrays.npz refused" in capsys.readouterr().err
    # export of a run whose final model is crafted
    _crafted_weights(short_run / "final_model.pt", marker)
    assert export.main([str(short_run), "--check", "10"]) == 2
    assert "refused without running it" in capsys.readouterr().err
    assert not marker.exists()
