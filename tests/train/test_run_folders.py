"""Run folders that are safe to kill, to resume and to open (issue 12, findings 2, 3, 5 and 9).

The crash tests kill a real training subprocess with SIGKILL at a chosen point (a wrapper script
makes the process kill itself right after the checkpoint's files are written, before the folder
is renamed into place), then check that the folder resumes or restarts, to the same weights as an
uninterrupted run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
import yaml

from train.common.files import RunFolderError
from train.sb3 import export
from train.sb3 import run as ppo

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke.yaml"

KILLER = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, os.environ["REPO"])
    import train.common.snapshot as selfplay

    kill_at, saves = int(os.environ["KILL_AT_SAVE"]), []
    original = selfplay.SnapshotPool.save

    def save(self, folder):  # the last write of a checkpoint, before its folder is renamed
        original(self, folder)
        saves.append(folder)
        if len(saves) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    selfplay.SnapshotPool.save = save
    from train.sb3 import run as ppo
    sys.exit(ppo.main(sys.argv[1:]))
    """
)


def _weights(run_dir: Path) -> tuple[dict, int]:
    data = torch.load(run_dir / "final_model.pt", map_location="cpu", weights_only=True)
    return data["policy"], data["timesteps"]


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def straight(tmp_path_factory) -> Path:
    """The smoke config trained 2048 steps without interruption."""
    out = tmp_path_factory.mktemp("straight") / "run"
    assert ppo.main(["--config", str(SMOKE), "--out", str(out), "--no-progress"]) == 0
    return out


def _train(*args: str, kill_at: int | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "REPO": str(REPO),
        "PYTHONPATH": str(REPO),
        "KILL_AT_SAVE": str(kill_at or 0),
    }
    cmd = [sys.executable, "-c", KILLER] if kill_at else [sys.executable, "train/ppo.py"]
    return subprocess.run(
        [*cmd, *args, "--no-progress"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.slow
def test_kill_during_the_first_checkpoint_leaves_a_folder_that_restarts(straight, tmp_path):
    run = tmp_path / "run"
    killed = _train("--config", str(SMOKE), "--out", str(run), kill_at=1)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert [p.name for p in (run / "checkpoints").iterdir()] == [".tmp_step_000000001024"]
    # --resume says there is nothing to resume and what to do instead
    resumed = _train("--resume", "--out", str(run))
    assert resumed.returncode == 2 and "Traceback" not in resumed.stderr
    assert "no complete checkpoint" in resumed.stderr and "start it over with" in resumed.stderr
    # ... and doing that works: the temp folder is cleaned, the run is the uninterrupted one
    again = _train("--config", str(SMOKE), "--out", str(run))
    assert again.returncode == 0, again.stderr
    assert not list(run.rglob(".tmp_*"))
    assert _same(_weights(run)[0], _weights(straight)[0])


@pytest.mark.slow
def test_kill_during_a_later_checkpoint_resumes_from_the_last_whole_one(
    straight, tmp_path, eval_rows
):
    run = tmp_path / "run"
    killed = _train("--config", str(SMOKE), "--out", str(run), kill_at=2)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    names = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert names == [".tmp_step_000000002048", "step_000000001024"]
    resumed = _train("--resume", "--out", str(run))
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming from" in resumed.stdout and "step_000000001024" in resumed.stdout
    assert not list(run.rglob(".tmp_*"))
    weights, steps = _weights(run)
    assert steps == 2048 and _same(weights, _weights(straight)[0])
    assert eval_rows(run) == eval_rows(straight)


@pytest.mark.slow
def test_ctrl_c_then_resume_is_bit_for_bit_the_uninterrupted_run(tmp_path):
    """README: --resume after Ctrl-C continues bit for bit (the stop waits for a rollout end)."""
    run = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "train/ppo.py", "--config", str(SMOKE), "--out", str(run)]
        + ["--total-steps", "100000000", "--no-progress"],
        cwd=REPO,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
        },  # the checkout under test, not another installed copy
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # not the caller's SIG_IGN
    )
    first = run / "checkpoints" / "step_000000001024"
    while not first.is_dir() and proc.poll() is None:  # an event, not a time budget
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, output
    assert "stop requested" in output and "exported" in output
    stopped = _weights(run)[1]
    assert stopped >= 1024 and stopped % 512 == 0  # a rollout boundary (8 envs x 64 steps)
    assert (run / "checkpoints" / f"step_{stopped:012d}").is_dir()
    total = str(stopped + 1024)
    resumed = _train("--resume", "--out", str(run), "--total-steps", total)
    assert resumed.returncode == 0, resumed.stderr
    straight = tmp_path / "straight"
    assert (
        _train("--config", str(SMOKE), "--out", str(straight), "--total-steps", total).returncode
        == 0
    )
    a, b = _weights(run), _weights(straight)
    assert a[1] == b[1] == stopped + 1024
    assert _same(a[0], b[0])


# ----------------------------------------------------------------- config.yaml of a run


@pytest.mark.slow
def test_resume_refuses_a_changed_or_empty_config(short_run, tmp_path, capsys):
    saved = short_run / "config.yaml"
    original = saved.read_text()
    data = yaml.safe_load(original)
    data["ppo"]["learning_rate"] = 0.1
    saved.write_text(yaml.safe_dump(data))
    args = ["--resume", "--out", str(short_run), "--total-steps", "1024", "--no-progress"]
    assert ppo.main(args) == 2
    err = capsys.readouterr().err
    assert "differs from the config checkpoint step_000000000512 was made with" in err
    assert "ppo.learning_rate" in err
    for empty in ("", "# nothing here\n", "null\n"):
        saved.write_text(empty)
        assert ppo.main(args) == 2
        assert "is empty" in capsys.readouterr().err
    saved.write_text(original)
    other = tmp_path / "other.yaml"
    other.write_text(SMOKE.read_text().replace("seed: 0", "seed: 5"))
    assert ppo.main([*args, "--config", str(other)]) == 2
    assert "differs" in capsys.readouterr().err and saved.read_text() == original
    # resuming with the same config only rewrites total_steps (atomically)
    assert ppo.main(args) == 0
    assert yaml.safe_load(saved.read_text())["total_steps"] == 1024
    assert _weights(short_run)[1] == 1024


# ----------------------------------------------------------------- no pickle on load paths


# ----------------------------------------------------------------- export reads the run's kind


def test_export_reads_the_kind_from_the_config(short_run, tmp_path, capsys):
    assert export.run_kind(short_run) == "ppo"
    onnx_path, _ = export.export_run(short_run, check=20)
    assert json.loads(onnx_path.with_suffix(".json").read_text())["training"]["timesteps"] == 512
    folder = tmp_path / "copy"
    shutil.copytree(short_run, folder)
    data = yaml.safe_load((folder / "config.yaml").read_text())
    del data["kind"]
    (folder / "config.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(RunFolderError, match="kind must be one of"):
        export.run_kind(folder)
    assert export.main([str(folder)]) == 2
    assert "kind must be one of ['ppo']" in capsys.readouterr().err
    assert export.main([str(tmp_path / "nothing")]) == 2
    assert "run folder not found" in capsys.readouterr().err
