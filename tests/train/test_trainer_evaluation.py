"""One evaluation path (train/common/evaluation.py): every trainer's periodic and final evaluations
are the batched duplicate rounds of ``evaluate_against``, written in one record."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from train.common.evaluation import evaluate_against

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # an export and two evaluations
def test_rllib_evaluates_the_module_as_its_exported_bot_plays(tmp_path: Path) -> None:
    """The RLlib trainer's evaluation (the module frozen into a batch policy, no export, no
    per-game tournament) gives the numbers of the exported bot file on the same deals."""
    pytest.importorskip("ray.rllib", reason="the cluster extra (ray[rllib]) is not installed")
    import gymnasium as gym
    import torch

    from agents.batched import load_batch
    from train.common.config import load_config
    from train.rllib.config import RLlibConfig
    from train.rllib.env import observation_space
    from train.rllib.finish import export_bot

    cfg = load_config(REPO / "configs" / "smoke_rllib.yaml", RLlibConfig)
    torch.manual_seed(0)
    from train.rllib.module import MaskedActorCritic, batch_player

    module = MaskedActorCritic(
        observation_space=observation_space(features=True),
        action_space=gym.spaces.Discrete(14),
        model_config={"hidden": [16], "slot_hidden": [8]},
    )
    ours = evaluate_against(batch_player(module), cfg, ["heuristic"], 6, 5)
    onnx_path, _ = export_bot(module, tmp_path, cfg)
    bot = load_batch(str(onnx_path), cfg.num_players)
    assert ours == evaluate_against(bot, cfg, ["heuristic"], 6, 5)
    assert ours["heuristic"]["rounds"] == 6 and ours["heuristic"]["seats"] == 12


def test_the_rllib_front_door_imports_no_ray_before_it_configures_it() -> None:
    """``train/rllib_ppo.py`` sets Ray's authentication in the environment before Ray is first
    imported (a driver that imported it earlier cannot talk to the cluster it starts)."""
    code = "import sys, train.rllib.run; print(sorted(m for m in sys.modules if m == 'ray'))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
