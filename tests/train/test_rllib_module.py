"""The action-masking RLModule of the RLlib trainer (train/rllib/module.py): masks, export, a
pluggable encoder, and the old import paths that checkpoints written before the move record."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the cluster extra (ray[rllib]) is not installed")
from train.rllib.config import load_rllib_config  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke_rllib.yaml"


def test_old_checkpoints_find_the_classes_at_their_old_paths() -> None:
    """RLlib checkpoints pickle the module class, the env class and the policy mapping by their
    module path; those written before the move name ``train.rllib_module`` / ``train.rllib_env``.
    Unpickling such a reference (crafted here as the bytes a checkpoint holds) finds the class."""
    import pickle

    import train.rllib.env as env
    import train.rllib.module as module

    def old_reference(path: str, name: str) -> bytes:  # protocol 0: GLOBAL path name, STOP
        return f"c{path}\n{name}\n.".encode()

    loads = pickle.loads  # trusted bytes built just above; no pickle from files is loaded
    assert (
        loads(old_reference("train.rllib_module", "MaskedActorCritic")) is module.MaskedActorCritic
    )
    assert loads(old_reference("train.rllib_env", "RackoMultiAgentEnv")) is env.RackoMultiAgentEnv
    assert loads(old_reference("train.rllib_env", "policy_mapping_fn")) is env.policy_mapping_fn
    import train.rllib_env as old_env
    import train.rllib_module as old_module

    def defined(mod: object) -> set[str]:
        return {
            n
            for n in dir(mod)
            if not n.startswith("_") and getattr(getattr(mod, n), "__module__", "") == mod.__name__
        }

    assert set(old_module.__all__) == defined(module)  # everything, so any recorded name loads
    assert set(old_env.__all__) == defined(env) | {"MAIN"}


def test_module_masks_and_export_matches(tmp_path: Path) -> None:
    import gymnasium as gym
    import torch

    from racko_env.actions import NUM_ACTIONS
    from train.export import onnx_actions, sample_observations
    from train.rllib.env import observation_space
    from train.rllib.module import ExportPolicy, MaskedActorCritic, module_actions

    torch.manual_seed(0)
    module = MaskedActorCritic(
        observation_space=observation_space(),
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        model_config={"encoder": "mlp", "hidden": [16], "activation": "relu"},
    )
    obs, masks = sample_observations(2, {}, 300, seed=3)
    acts = module_actions(module, obs, masks.astype(np.float32))
    assert masks[np.arange(len(acts)), acts].all()  # never an illegal action
    with torch.no_grad():
        exported = ExportPolicy(module)(torch.as_tensor(obs), torch.as_tensor(masks.astype(bool)))[
            0
        ]
    np.testing.assert_array_equal(exported.numpy(), acts)
    from train.rllib_ppo import export_bot

    cfg = load_rllib_config(SMOKE)
    onnx_path, _ = export_bot(module, tmp_path, cfg)
    np.testing.assert_array_equal(
        onnx_actions(onnx_path.read_bytes(), obs, masks.astype(bool)), acts
    )


def test_pluggable_encoder_is_used() -> None:
    import gymnasium as gym

    from racko_env.actions import NUM_ACTIONS
    from train.rllib.env import observation_space
    from train.rllib.module import MaskedActorCritic

    module = MaskedActorCritic(
        observation_space=observation_space(),
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        model_config={"encoder": "tests.train.test_rllib_module:tiny_encoder", "hidden": [8]},
    )
    assert type(module.pi_encoder).__name__ == "_Tiny"  # (pytest may import this file twice)
    assert module.pi_head.in_features == 5
    with pytest.raises(ValueError, match="model.encoder"):
        MaskedActorCritic(
            observation_space=observation_space(),
            action_space=gym.spaces.Discrete(NUM_ACTIONS),
            model_config={"encoder": "tests.train.test_rllib_module:nothing_here"},
        )


def _tiny():
    import torch

    class _Tiny(torch.nn.Module):
        def __init__(self, obs_size: int) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(obs_size, 5)
            self.out_features = 5

        def forward(self, x):
            return torch.relu(self.lin(x))

    return _Tiny


TinyEncoder = _tiny()


def tiny_encoder(obs_size: int, hidden: list[int], activation: str) -> TinyEncoder:
    return TinyEncoder(obs_size)
