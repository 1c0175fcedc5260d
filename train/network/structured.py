"""The structured network: ``RackFeatures`` (train/network/features.py) read by small towers.

``StructuredHeads``: one small network shared by the k slots embeds each slot (with the slot's
index as an input); a trunk over the pooled slots and the global features gives the draw / take /
keep / discard logits, and each slot's logit reads its own embedding beside the trunk. The critic
has its own copy of both. ``StructuredNetwork`` is the whole actor-critic in plain torch, its parts
named as sb3-contrib's ``MaskableActorCriticPolicy``'s, so SB3's ``StructuredPolicy`` and it have
the same ``state_dict``. ``PolicyGraph`` is either as ``(observation, action_mask) -> (action,
masked_logits)``: what is exported to ONNX."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.nn.functional import linear

from agents.features import FeatureShape
from racko_env.actions import NUM_ACTIONS
from racko_env.config import RulesConfig
from racko_env.observation import Layout, layout_for
from racko_env.rules import RACK_SIZE
from train.common.snapshot import MASKED_LOGIT
from train.network.features import StructuredFeatures, split_features

OTHER_ACTIONS = NUM_ACTIONS - RACK_SIZE  # draw, take, keep, discard: the actions after the slots
Hidden = Sequence[int]  # hidden layer widths


def game_layout(num_players: int, rack_size: int, num_cards: int) -> Layout:
    """The layout of the game a network plays: snapshots rebuild it from these plain numbers."""
    return layout_for(RulesConfig(num_players, rack_size=rack_size, deck_size=num_cards))


def _mlp(sizes: Sequence[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=False):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


class StructuredTower(nn.Module):
    """Slot and global features of ``shape`` -> slot embeddings (B, k, S) and a trunk (B, T)."""

    def __init__(self, slot_hidden: Hidden, trunk_hidden: Hidden, shape: FeatureShape) -> None:
        super().__init__()
        glob = shape.global_features
        self.slot_net = _mlp([shape.slot_features + glob, *slot_hidden])
        s = slot_hidden[-1]
        self.trunk = _mlp([glob + 2 * s, *trunk_hidden])
        self.slot_dim, self.trunk_dim = s, trunk_hidden[-1]

    def forward(self, slots: torch.Tensor, glob: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # The slot network's first layer reads [slot | global]; its global half is the same for
        # the k slots of a row, so it is computed once per row (the same layer, a sixth fewer
        # multiplications in the update, where this network is most of the time).
        first = self.slot_net[0]
        k = slots.shape[-1]
        h = linear(slots, first.weight[:, :k])
        h = h + linear(glob, first.weight[:, k:], first.bias)[:, None, :]
        e = self.slot_net[1:](h)
        pooled = torch.cat([e.mean(dim=1), e.amax(dim=1)], dim=-1)
        return e, self.trunk(torch.cat([glob, pooled], dim=-1))


class StructuredHeads(nn.Module):
    """SB3's ``mlp_extractor`` slot: features of ``shape`` -> (the 14 logits, the critic's
    latent). A rack of k < 10 slots has no slot actions k..9: their logits read
    ``MASKED_LOGIT`` (the mask never allows them)."""

    def __init__(self, slot_hidden: Hidden, trunk_hidden: Hidden, shape: FeatureShape) -> None:
        super().__init__()
        self.shape = shape
        self.actor = StructuredTower(slot_hidden, trunk_hidden, shape)
        self.critic = StructuredTower(slot_hidden, trunk_hidden, shape)
        self.slot_logit = nn.Linear(self.actor.slot_dim + self.actor.trunk_dim, 1)
        self.other_logits = nn.Linear(self.actor.trunk_dim, OTHER_ACTIONS)
        self.latent_dim_pi = NUM_ACTIONS
        self.latent_dim_vf = self.critic.trunk_dim

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        slots, glob = split_features(features, self.shape)
        e, t = self.actor(slots, glob)
        # slot_logit reads [slot embedding | trunk]: the trunk's half once per row, as above.
        w, s = self.slot_logit.weight, e.shape[-1]
        slot_logits = linear(e, w[:, :s]) + linear(t, w[:, s:], self.slot_logit.bias)[:, None]
        parts = [slot_logits.squeeze(-1)]
        absent = RACK_SIZE - self.shape.rack_size
        if absent:
            parts.append(torch.full_like(t[:, :1], MASKED_LOGIT).expand(-1, absent))
        return torch.cat([*parts, self.other_logits(t)], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.critic(*split_features(features, self.shape))[1]

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class StructuredNetwork(nn.Module):
    """The structured actor-critic, laid out and named as SB3's ``StructuredPolicy`` (also
    ``_get_constructor_parameters``), so ``FrozenPolicy`` copies either kind the same way. Its
    weights are drawn in SB3's order: one torch seed gives both the same network and moves the
    generator alike."""

    def __init__(
        self,
        num_cards: int = 40,
        slot_hidden: Sequence[int] = (64, 64),
        trunk_hidden: Sequence[int] = (128, 128),
        num_players: int = 2,
        rack_size: int = RACK_SIZE,
    ) -> None:
        super().__init__()
        self.slot_hidden = tuple(int(x) for x in slot_hidden)
        self.trunk_hidden = tuple(int(x) for x in trunk_hidden)
        self.num_players, self.rack_size = int(num_players), int(rack_size)
        layout = game_layout(self.num_players, self.rack_size, num_cards)
        self.features_extractor = StructuredFeatures(num_cards, layout)
        shape = self.features_extractor.rack.shape
        self.mlp_extractor = StructuredHeads(self.slot_hidden, self.trunk_hidden, shape)
        nn.Linear(NUM_ACTIONS, NUM_ACTIONS)  # SB3 draws an action layer here, then drops it
        self.action_net = nn.Identity()  # the heads already emit the 14 logits
        self.value_net = nn.Linear(self.mlp_extractor.latent_dim_vf, 1)

    @property
    def num_cards(self) -> int:
        return self.features_extractor.rack.num_cards

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {
            "num_cards": self.num_cards,
            "slot_hidden": self.slot_hidden,
            "trunk_hidden": self.trunk_hidden,
            "num_players": self.num_players,
            "rack_size": self.rack_size,
        }

    def forward(self, observations: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Observations (or ``[observation | features]``) -> (the 14 logits, the value (B,))."""
        features = self.features_extractor(observations)
        logits, latent_vf = self.mlp_extractor(features)
        return self.action_net(logits), self.value_net(latent_vf).squeeze(-1)


class PolicyGraph(nn.Module):
    """A structured policy (``StructuredNetwork`` or SB3's ``StructuredPolicy``) as
    ``(observation (B, W), action_mask (B, A) bool) -> (action, masked_logits)``: the masked
    argmax, as ``model.predict(..., deterministic=True)`` plays."""

    def __init__(self, policy: nn.Module) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # ``.float()``: what SB3's ``extract_features`` does to a Box observation first
        features = self.policy.features_extractor(obs.float())
        latent = self.policy.mlp_extractor.forward_actor(features)
        logits = self.policy.action_net(latent)
        masked = torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))
        return masked.argmax(dim=1), masked
