"""Training pipeline: config validation, the smoke run (train, checkpoint, resume, export), pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import agents
from train.common.config import load_config
from train.sb3 import run as ppo
from train.sb3.model import build_model, init_policy_from

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke.yaml"


def _params(run_dir: Path) -> tuple[dict, int]:
    """The final policy weights of a run and its step count (read as data only)."""
    import torch

    data = torch.load(run_dir / "final_model.pt", map_location="cpu", weights_only=True)
    return data["policy"], data["timesteps"]


def _same(a: dict, b: dict) -> bool:
    return all(bool((a[k] == b[k]).all()) for k in a)


@pytest.mark.slow
def test_smoke_trains_checkpoints_resumes_and_exports(
    tmp_path: Path, assert_plays_legally, capsys, eval_rows
) -> None:
    full, split = tmp_path / "full", tmp_path / "split"
    assert ppo.main(["--config", str(SMOKE), "--out", str(full), "--no-progress"]) == 0
    for name in ("config.yaml", "final_model.pt", "bot.onnx", "bot.json", "eval_history.json"):
        assert (full / name).is_file(), name
    assert sorted(p.name for p in (full / "checkpoints").iterdir()) == [
        "step_000000001024",
        "step_000000002048",
    ]
    assert list((full / "tb").iterdir()), "no TensorBoard logs"
    manifest = json.loads((full / "bot.json").read_text())
    assert manifest["training"]["seed"] == 0 and manifest["training"]["timesteps"] == 2048
    assert "final_eval" in manifest["evaluation"]
    saved = yaml.safe_load((full / "config.yaml").read_text())
    assert saved["total_steps"] == 2048 and saved["kind"] == "ppo"
    assert not list(full.rglob(".tmp_*")), "temporary files left behind"

    # the exported bot loads through agents.load and plays only legal actions
    bot = agents.load(str(full / "bot.onnx"), num_players=2)
    assert_plays_legally(bot, 2, [bot], steps=300, seed=0)

    # stop half way, resume: the same model as the uninterrupted run, bit for bit
    ppo.main(
        ["--config", str(SMOKE), "--out", str(split), "--total-steps", "1024", "--no-progress"]
    )
    assert ppo.main(["--config", str(SMOKE), "--out", str(split), "--no-progress"]) == 2
    assert "already holds a run; use --resume" in capsys.readouterr().err
    ppo.main(["--resume", "--out", str(split), "--total-steps", "2048", "--no-progress"])
    a, steps_a = _params(full)
    b, steps_b = _params(split)
    assert steps_a == steps_b == 2048
    assert _same(a, b)

    assert eval_rows(full) == eval_rows(split)


@pytest.mark.slow
def test_init_from_starts_from_a_saved_policy(tmp_path: Path) -> None:
    """A run warm-started from another run's model begins with exactly its weights."""
    from train.common.files import RunFolderError

    source = tmp_path / "source"
    assert ppo.main(["--config", str(SMOKE), "--out", str(source), "--no-progress"]) == 0
    cfg = load_config(SMOKE, init_from=str(source / "final_model.pt"), total_steps=256)
    from train.sb3.model import make_vec_env

    env = make_vec_env(cfg, ["heuristic"], [1.0])
    model = build_model(cfg, env)
    init_policy_from(model, cfg.init_from)
    want, _ = _params(source)
    got = model.policy.state_dict()
    assert _same(want, got)  # actor and critic
    assert any(k.startswith("value_net") for k in want)
    bigger = load_config(SMOKE, ppo={"net_arch": [64, 64]})
    other = build_model(bigger, env)
    with pytest.raises(RunFolderError, match="does not match the config's policy"):
        init_policy_from(other, source / "final_model.pt")
    with pytest.raises(RunFolderError, match="init_from"):
        init_policy_from(other, tmp_path / "missing.pt")
    env.close()


@pytest.mark.slow
def test_same_seed_same_run_other_seed_differs(tmp_path: Path) -> None:
    args = ["--config", str(SMOKE), "--total-steps", "512", "--no-progress"]
    ppo.main([*args, "--out", str(tmp_path / "a")])
    ppo.main([*args, "--out", str(tmp_path / "b")])
    ppo.main([*args, "--out", str(tmp_path / "c"), "--seed", "1"])
    a, _ = _params(tmp_path / "a")
    b, _ = _params(tmp_path / "b")
    c, _ = _params(tmp_path / "c")
    assert _same(a, b)
    assert not _same(a, c)


def test_resume_without_checkpoint_is_refused(tmp_path: Path, capsys) -> None:
    assert ppo.main(["--resume", "--out", str(tmp_path / "nothing")]) == 2
    assert "config.yaml not found" in capsys.readouterr().err
