"""The RLModule the RLlib trainer learns: the structured network as a masked actor-critic for PPO.

Vendored, not RLlib's ``examples/`` masking module (it reads ``obs["observations"]`` and has changed
across releases). Illegal actions get ``MASKED_LOGIT``, as in the bot graphs, so sampling,
log-probabilities and the entropy see only legal moves. The network is ``train/network/``'s, laid
out as ``StructuredNetwork`` (``heads`` its ``mlp_extractor``, ``vf_head`` its ``value_net``), so
weights copy across one to one and the bot is exported through the same ``PolicyGraph``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from train.common.snapshot import MASKED_LOGIT


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions (mask 0) get ``MASKED_LOGIT``; legal logits are left as they are."""
    return torch.where(mask > 0.5, logits, torch.full_like(logits, MASKED_LOGIT))


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """PPO's module: ``forward`` gives masked logits, ``compute_values`` the value estimate.
    ``model_config``: ``{"hidden": [128, 128], "slot_hidden": [64, 64], "num_cards": 40}``."""

    def setup(self) -> None:
        from train.network.features import RackFeatures
        from train.network.structured import StructuredHeads

        cfg = dict(self.model_config or {})
        self.num_cards = int(cfg.get("num_cards", 40))
        self.slot_hidden = tuple(int(x) for x in cfg.get("slot_hidden", [64, 64]))
        self.trunk_hidden = tuple(int(x) for x in cfg.get("hidden", [128, 128]))
        self.rack = RackFeatures(self.num_cards)
        self.heads = StructuredHeads(self.slot_hidden, self.trunk_hidden, self.rack.shape)
        self.vf_head = nn.Linear(self.heads.latent_dim_vf, 1)

    def features(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The structured network's input (B, 291): the env's, or computed here."""
        if "features" in obs:
            return obs["features"]
        from train.network.features import flat_features

        with torch.no_grad():
            return flat_features(*self.rack(obs["observation"]))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.heads.forward_actor(self.features(obs))
        return {Columns.ACTION_DIST_INPUTS: masked_logits(logits, obs["action_mask"])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        features = self.features(batch[Columns.OBS])
        return self.vf_head(self.heads.forward_critic(features)).squeeze(-1)


# StructuredNetwork's (and SB3 StructuredPolicy's) names of the structured module's parts (the
# features extractor has no weights)
_SB3_NAMES = {"heads.": "mlp_extractor.", "vf_head.": "value_net."}


def _renamed(state: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """The entries of ``state`` whose key starts with a key of ``names``, renamed to its value."""
    return {
        new + k[len(old) :]: v
        for k, v in state.items()
        for old, new in names.items()
        if k.startswith(old)
    }


def sb3_state_dict(module: MaskedActorCritic) -> dict[str, torch.Tensor]:
    """The structured module's weights under ``StructuredNetwork``'s (and SB3's) names."""
    return _renamed(module.state_dict(), _SB3_NAMES)


def load_sb3_state_dict(module: MaskedActorCritic, state: dict[str, torch.Tensor]) -> None:
    """Copy ``StructuredNetwork`` (or SB3 ``StructuredPolicy``) weights into the module."""
    theirs = {sb3: ours for ours, sb3 in _SB3_NAMES.items()}
    module.load_state_dict(_renamed(state, theirs), strict=True)


def to_network(module: MaskedActorCritic) -> Any:
    """The structured module as a ``StructuredNetwork`` with the same weights (eval mode)."""
    from train.network.structured import StructuredNetwork

    network = StructuredNetwork(module.num_cards, module.slot_hidden, module.trunk_hidden)
    network.load_state_dict(sb3_state_dict(module), strict=True)
    return network.eval()


def export_graph(module: MaskedActorCritic) -> nn.Module:
    """The module's deterministic policy as the bot graph ``(obs, bool mask) -> (action,
    masked_logits)``: the ``PolicyGraph`` ``train/ppo.py`` exports, features and heads in one."""
    from train.network.structured import PolicyGraph

    return PolicyGraph(to_network(module))


def module_actions(module: MaskedActorCritic, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The RLModule's own inference path (``forward_inference``), argmax of its masked logits:
    what an exported graph must reproduce."""
    batch = {
        Columns.OBS: {
            "observation": torch.as_tensor(obs, dtype=torch.float32),
            "action_mask": torch.as_tensor(masks, dtype=torch.float32),
        }
    }
    with torch.no_grad():
        out = module.forward_inference(batch)
    return out[Columns.ACTION_DIST_INPUTS].argmax(dim=1).numpy().astype(np.int64)


def batch_player(module: MaskedActorCritic, name: str = "learner") -> Any:
    """The module frozen into the batch policy the evaluation plays, as every trainer's snapshots
    are (``FrozenPolicy``: the features from the compiled kernel, the moves of the graph)."""
    from train.network.frozen import FrozenPolicy

    return FrozenPolicy(to_network(module), name)
