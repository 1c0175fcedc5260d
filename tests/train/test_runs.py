"""The run-folder contract every trainer keeps (train/common/runs.py), on a toy trainer: create,
refuse a folder holding a run, resume with the same config (only the length may change), the
latest complete checkpoint, atomic checkpoint folders, ``kind:`` recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from train.common.config import TrainConfig
from train.common.files import RunFolderError
from train.common.runs import CONFIG_FILE, Checkpoints, RunKind, prepare_run

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "configs" / "smoke.yaml"
CKPTS = Checkpoints("iter_", ("state.json",), digits=3)
TOY = RunKind(
    command="python train/ppo.py",
    schema=TrainConfig,
    length="total_steps",
    holds_a_run=lambda run_dir: CKPTS.latest(run_dir) is not None,
    example="configs/2p.yaml",
    stale_files=("history.json",),
)


def _checkpoint(run: Path, number: int, keep: int = 2) -> Path:
    with CKPTS.write(run, number, keep) as tmp:
        (tmp / "state.json").write_text("{}")
    return CKPTS.path(run, number)


def test_a_new_run_writes_its_config_with_its_kind(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / ".tmp_config.yaml.x").write_text("half")  # a killed writer's leftover
    (run / "history.json").write_text("[]")  # a run killed before its first checkpoint
    cfg, run_dir = prepare_run(TOY, str(CONFIG), str(run), False, seed=3, total_steps=None)
    assert run_dir == run and cfg.seed == 3
    saved = yaml.safe_load((run / CONFIG_FILE).read_text())
    assert saved["kind"] == "ppo" and saved["seed"] == 3 and saved["out"] == str(run)
    assert sorted(p.name for p in run.iterdir()) == [CONFIG_FILE]
    with pytest.raises(RunFolderError, match="--config is required .*configs/2p.yaml"):
        prepare_run(TOY, None, str(run), False)


def test_a_folder_holding_a_run_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    prepare_run(TOY, str(CONFIG), str(run), False)
    _checkpoint(run, 1)
    with pytest.raises(RunFolderError, match="already holds a run; use --resume"):
        prepare_run(TOY, str(CONFIG), str(run), False)


def test_resume_keeps_the_config_and_lets_only_the_length_change(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with pytest.raises(RunFolderError, match="config.yaml not found"):
        prepare_run(TOY, None, str(run), True)
    prepare_run(TOY, str(CONFIG), str(run), False)
    with pytest.raises(RunFolderError, match="no complete checkpoint.*start it over with: python"):
        prepare_run(TOY, None, str(run), True)
    _checkpoint(run, 1)
    other = tmp_path / "other.yaml"
    other.write_text(CONFIG.read_text().replace("n_envs: 8", "n_envs: 6"))
    with pytest.raises(RunFolderError, match="differs from the run's .* in n_envs;"):
        prepare_run(TOY, str(other), str(run), True)
    with pytest.raises(RunFolderError, match="started with seed 0, not 9"):
        prepare_run(TOY, None, str(run), True, seed=9)
    longer = tmp_path / "longer.yaml"
    longer.write_text(CONFIG.read_text().replace("total_steps: 2048", "total_steps: 4096"))
    cfg, _ = prepare_run(TOY, str(longer), str(run), True, total_steps=8192)
    assert cfg.total_steps == 8192
    assert yaml.safe_load((run / CONFIG_FILE).read_text())["total_steps"] == 8192


def test_the_recorded_config_of_a_checkpoint_must_match_too(tmp_path: Path) -> None:
    run = tmp_path / "run"
    prepare_run(TOY, str(CONFIG), str(run), False)
    _checkpoint(run, 1)
    saved = yaml.safe_load((run / CONFIG_FILE).read_text())
    recorded = {**saved, "n_envs": 1}
    kind = RunKind(**{**TOY.__dict__, "recorded_config": lambda d: ("checkpoint x", recorded)})
    with pytest.raises(RunFolderError, match="differs from the config checkpoint x was made with"):
        prepare_run(kind, None, str(run), True)


def test_latest_checkpoint_is_the_newest_complete_one_and_old_ones_go(tmp_path: Path) -> None:
    assert CKPTS.latest(tmp_path) is None
    for n in (1, 2, 3):
        _checkpoint(tmp_path, n, keep=2)
    root = tmp_path / "checkpoints"
    assert sorted(p.name for p in root.iterdir()) == ["iter_002", "iter_003"]
    (root / "iter_004").mkdir()  # no state.json: not complete
    (root / ".tmp_iter_005").mkdir()
    (root / ".tmp_iter_005" / "state.json").write_text("{}")
    assert CKPTS.latest(tmp_path) == root / "iter_003"
    with pytest.raises(ZeroDivisionError), CKPTS.write(tmp_path, 6, keep=2) as tmp:
        (tmp / "state.json").write_text("{}")
        raise ZeroDivisionError  # a crash while writing leaves the last whole one in place
    assert CKPTS.latest(tmp_path) == root / "iter_003"
