"""The RLModule the RLlib trainer learns: a masked actor-critic for PPO, with a pluggable encoder.

Vendored, not RLlib's ``examples/`` masking module (it reads ``obs["observations"]`` and has
changed across releases). Illegal actions get ``MASKED_LOGIT``, as in the bot graphs, so
sampling, log-probabilities and the entropy see only legal moves. ``model.encoder``:
``structured`` is the network of ``train/network/`` laid out as ``StructuredNetwork`` (``heads``
its ``mlp_extractor``, ``vf_head`` its ``value_net``), so weights copy across one to one and the
bot is exported through the same ``PolicyGraph``; ``mlp`` the shape of SB3's ``MlpPolicy``;
``package.module:factory`` any torch module ``factory(obs_size, hidden, activation)`` with an
``out_features`` attribute."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from train.common.snapshot import MASKED_LOGIT


class MLPEncoder(nn.Module):
    """``obs_size -> hidden[0] -> ... -> hidden[-1]``, each layer followed by the activation."""

    def __init__(self, obs_size: int, hidden: list[int], activation: str = "tanh") -> None:
        super().__init__()
        act = nn.Tanh if activation == "tanh" else nn.ReLU
        layers: list[nn.Module] = []
        size = obs_size
        for width in hidden:
            layers += [nn.Linear(size, width), act()]
            size = width
        self.net = nn.Sequential(*layers)
        self.out_features = size

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)


def build_encoder(spec: str, obs_size: int, hidden: list[int], activation: str) -> nn.Module:
    """``"mlp"`` or ``"package.module:factory"`` -> an encoder with ``out_features``."""
    if spec == "mlp":
        return MLPEncoder(obs_size, hidden, activation)
    module_name, _, attr = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"model.encoder: cannot import {spec!r}: {exc}") from None
    encoder = factory(obs_size, list(hidden), activation)
    if not isinstance(encoder, nn.Module) or not isinstance(
        getattr(encoder, "out_features", None), int
    ):
        raise ValueError(
            f"model.encoder: {spec!r} must return a torch module with an int out_features"
        )
    return encoder


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions (mask 0) get ``MASKED_LOGIT``; legal logits are left as they are."""
    return torch.where(mask > 0.5, logits, torch.full_like(logits, MASKED_LOGIT))


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """PPO's module: ``forward`` gives masked logits, ``compute_values`` the value estimate.
    ``model_config``: ``{"encoder": "structured", "hidden": [128, 128], "slot_hidden": [64, 64],
    "num_cards": 40}`` or ``{"encoder": "mlp", "hidden": [128, 128], "activation": "tanh"}``."""

    def setup(self) -> None:
        cfg = dict(self.model_config or {})
        spec = cfg.get("encoder", "mlp")
        hidden = list(cfg.get("hidden", [128, 128]))
        activation = cfg.get("activation", "tanh")
        obs_size = int(self.observation_space["observation"].shape[0])
        n_actions = int(self.action_space.n)
        self.structured = spec == "structured"
        if self.structured:
            from train.network.features import RackFeatures
            from train.network.structured import StructuredHeads

            self.num_cards = int(cfg.get("num_cards", 40))
            self.slot_hidden = tuple(int(x) for x in cfg.get("slot_hidden", [64, 64]))
            self.trunk_hidden = tuple(int(x) for x in hidden)
            self.rack = RackFeatures(self.num_cards)
            self.heads = StructuredHeads(self.slot_hidden, self.trunk_hidden)
            self.vf_head = nn.Linear(self.heads.latent_dim_vf, 1)
            return
        self.pi_encoder = build_encoder(spec, obs_size, hidden, activation)
        self.pi_head = nn.Linear(self.pi_encoder.out_features, n_actions)
        self.vf_encoder = build_encoder(spec, obs_size, hidden, activation)
        self.vf_head = nn.Linear(self.vf_encoder.out_features, 1)

    def features(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The structured network's input (B, 291): the env's, or computed here."""
        if "features" in obs:
            return obs["features"]
        from train.network.features import flat_features

        with torch.no_grad():
            return flat_features(*self.rack(obs["observation"]))

    def _logits(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        if self.structured:
            return self.heads.forward_actor(self.features(obs))
        return self.pi_head(self.pi_encoder(obs["observation"]))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        return {Columns.ACTION_DIST_INPUTS: masked_logits(self._logits(obs), obs["action_mask"])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        obs = batch[Columns.OBS]
        if self.structured:
            return self.vf_head(self.heads.forward_critic(self.features(obs))).squeeze(-1)
        return self.vf_head(self.vf_encoder(obs["observation"])).squeeze(-1)


# StructuredNetwork's (and SB3 StructuredPolicy's) names of the structured module's parts (the
# features extractor has no weights)
_SB3_NAMES = {"heads.": "mlp_extractor.", "vf_head.": "value_net."}


def sb3_state_dict(module: MaskedActorCritic) -> dict[str, torch.Tensor]:
    """The structured module's weights under ``StructuredNetwork``'s (and SB3's) names."""
    out = {}
    for key, value in module.state_dict().items():
        for ours, theirs in _SB3_NAMES.items():
            if key.startswith(ours):
                out[theirs + key[len(ours) :]] = value
    return out


def load_sb3_state_dict(module: MaskedActorCritic, state: dict[str, torch.Tensor]) -> None:
    """Copy ``StructuredNetwork`` (or SB3 ``StructuredPolicy``) weights into the structured module."""
    ours = {}
    for key, value in state.items():
        for mine, theirs in _SB3_NAMES.items():
            if key.startswith(theirs):
                ours[mine + key[len(theirs) :]] = value
    module.load_state_dict(ours, strict=True)


def to_network(module: MaskedActorCritic) -> Any:
    """The structured module as a ``StructuredNetwork`` with the same weights (eval mode)."""
    from train.network.structured import StructuredNetwork

    network = StructuredNetwork(module.num_cards, module.slot_hidden, module.trunk_hidden)
    network.load_state_dict(sb3_state_dict(module), strict=True)
    return network.eval()


def export_graph(module: MaskedActorCritic) -> nn.Module:
    """The module's deterministic policy as the bot graph ``(obs, bool mask) -> (action,
    masked_logits)``: ``PolicyGraph`` for the structured network (the graph ``train/ppo.py``
    exports: features and heads in one self-contained file), else ``ExportPolicy``."""
    if getattr(module, "structured", False):
        from train.network.structured import PolicyGraph

        return PolicyGraph(to_network(module))
    return ExportPolicy(module)


class ExportPolicy(nn.Module):
    """The MLP module's deterministic policy as the bot graph wants it: ``(obs, mask) -> (action,
    masked_logits)``, with a boolean mask (docs/bot-format.md)."""

    def __init__(self, module: MaskedActorCritic) -> None:
        super().__init__()
        self.encoder = module.pi_encoder
        self.head = module.pi_head

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.head(self.encoder(obs))
        masked = torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))
        return masked.argmax(dim=1), masked


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


class ModulePolicy:
    """A module as a batch policy (``act_batch``): its own masked argmax over a batch."""

    def __init__(self, module: MaskedActorCritic, name: str = "rllib-module") -> None:
        self.module, self.name = module, name

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return module_actions(self.module, obs, np.asarray(masks, dtype=np.float32))


def batch_player(module: MaskedActorCritic, name: str = "learner") -> Any:
    """The module frozen into the batch policy the evaluation plays (``train.common.evaluation``):
    the structured network as every trainer's snapshots are (``FrozenPolicy``: the features from
    the compiled kernel, the moves of the exported graph), any other network as itself."""
    if getattr(module, "structured", False):
        from train.network.frozen import FrozenPolicy

        return FrozenPolicy(to_network(module), name)
    return ModulePolicy(module, name)
