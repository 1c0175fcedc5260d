"""The action-masking RLModule of the RLlib trainer (train/rllib/module.py): masks, export, the
structured network (the SB3 policy's actions on its weights, a torch-free export)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the cluster extra (ray[rllib]) is not installed")
from train.common.config import load_config  # noqa: E402
from train.rllib.config import RLlibConfig  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke_rllib.yaml"


@pytest.mark.slow
def test_module_masks_and_export_matches(tmp_path: Path) -> None:
    from train.common.onnx_export import onnx_actions, sample_observations
    from train.rllib.finish import export_bot
    from train.rllib.module import module_actions

    _, module = _structured_pair(seed=2)
    obs, masks = sample_observations(2, {}, 300, seed=3)
    acts = module_actions(module, obs, masks.astype(np.float32))
    assert masks[np.arange(len(acts)), acts].all()  # never an illegal action
    onnx_path, _ = export_bot(module, tmp_path, load_config(SMOKE, RLlibConfig))
    np.testing.assert_array_equal(
        onnx_actions(onnx_path.read_bytes(), obs, masks.astype(bool)), acts
    )


def _structured_pair(seed: int = 0):
    """An SB3 ``StructuredPolicy`` (random weights) and the structured RLModule with its weights."""
    import gymnasium as gym
    import torch
    from gymnasium import spaces

    from racko_env.actions import NUM_ACTIONS
    from racko_env.observation import OBS_SIZE
    from train.rllib.env import observation_space
    from train.rllib.module import MaskedActorCritic, load_sb3_state_dict
    from train.sb3.policy import StructuredPolicy

    torch.manual_seed(seed)
    policy = StructuredPolicy(
        spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
        spaces.Discrete(NUM_ACTIONS),
        lambda _: 0.0,
        num_cards=40,
        slot_hidden=[16, 8],
        trunk_hidden=[32, 16],
    ).eval()
    module = MaskedActorCritic(
        observation_space=observation_space(features=True),
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        model_config={
            "encoder": "structured",
            "hidden": [32, 16],
            "slot_hidden": [16, 8],
            "num_cards": 40,
        },
    )
    load_sb3_state_dict(module, policy.state_dict())
    return policy, module


def test_structured_module_equals_the_sb3_structured_policy() -> None:
    """Same weights, same observations: the RLModule (features from the env's kernel, or computed
    by itself) plays the SB3 structured policy's actions and values; its export graph too."""
    import torch
    from ray.rllib.core.columns import Columns

    from agents.features import rack_features
    from train.common.onnx_export import sample_observations
    from train.rllib.module import export_graph, module_actions, sb3_state_dict

    policy, module = _structured_pair()
    obs, masks = sample_observations(2, {}, 400, seed=4)
    with torch.no_grad():
        theirs, _ = policy.predict(obs, deterministic=True, action_masks=masks)
        their_values = policy.predict_values(torch.as_tensor(obs)).squeeze(-1).numpy()
    assert len(set(theirs.tolist())) > 2  # the weights are not degenerate
    # the module's own features (RackFeatures)
    np.testing.assert_array_equal(module_actions(module, obs, masks.astype(np.float32)), theirs)
    # the env's features (the compiled kernel, as RackoMultiAgentEnv hands them out)
    slots, glob = rack_features(obs, 40)
    batch = {
        Columns.OBS: {
            "observation": torch.as_tensor(obs),
            "action_mask": torch.as_tensor(masks.astype(np.float32)),
            "features": torch.as_tensor(np.concatenate([slots.reshape(len(obs), -1), glob], 1)),
        }
    }
    with torch.no_grad():
        ours = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].argmax(1).numpy()
        values = module.compute_values(batch).numpy()
        exported = export_graph(module)(torch.as_tensor(obs), torch.as_tensor(masks))[0].numpy()
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_allclose(values, their_values, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(exported, theirs)
    assert sb3_state_dict(module).keys() == policy.state_dict().keys()


# an export check and a process; quick: test_structured_module_equals_the_sb3_structured_policy
@pytest.mark.slow
def test_structured_export_plays_with_numpy_and_onnxruntime_only(tmp_path: Path) -> None:
    from train.rllib.finish import export_bot

    _, module = _structured_pair(seed=1)
    onnx_path, _ = export_bot(module, tmp_path, load_config(SMOKE, RLlibConfig))
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["torch"] = None  # importing it fails
        import agents
        from racko_env import racko_v1
        bot = agents.load({str(onnx_path)!r}, num_players=2)
        env = racko_v1.raw_env(num_players=2)
        for seed in range(3):
            env.reset(seed=seed)
            for agent in env.agent_iter():
                obs, r, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                a = bot.act(obs)
                assert obs["action_mask"][a]
                env.step(a)
        banned = [m for m in ("ray", "stable_baselines3", "sb3_contrib") if m in sys.modules]
        assert not banned, banned
        print("ok")
        """
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "ok"
