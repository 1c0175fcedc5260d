"""The policies MaskablePPO trains: ``flat`` (SB3's MLP over the raw observation) and
``structured``, the network of ``train/network/`` in sb3-contrib's ``MaskableActorCriticPolicy``:
its features as SB3's features extractor, its heads in the ``mlp_extractor`` slot emitting the 14
logits (so the action layer is the identity), named as ``StructuredNetwork``'s parts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

import train.network.frozen  # noqa: F401  (registers the kind of a checkpoint's frozen snapshots)
from racko_env.observation import Layout
from racko_env.rules import RACK_SIZE
from train.network.features import RackFeatures, structured_features
from train.network.structured import StructuredHeads, game_layout


class StructuredExtractor(BaseFeaturesExtractor):
    """``RackFeatures`` flattened for SB3: reads the features handed in with the observation
    (``FeatureCache``, in training), computes them for a bare observation of ``layout``."""

    def __init__(self, observation_space: spaces.Box, num_cards: int, layout: Layout) -> None:
        rack = RackFeatures(num_cards, layout=layout)
        super().__init__(observation_space, rack.size)
        self.rack = rack

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return structured_features(observations, self.rack)


class StructuredPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's policy with the structured features and heads (``ppo.policy: structured``)."""

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        lr_schedule: Callable[[float], float],
        num_cards: int = 40,
        slot_hidden: Sequence[int] = (64, 64),
        trunk_hidden: Sequence[int] = (128, 128),
        num_players: int = 2,
        rack_size: int = RACK_SIZE,
        **kwargs: Any,
    ) -> None:
        self.slot_hidden = tuple(int(x) for x in slot_hidden)
        self.trunk_hidden = tuple(int(x) for x in trunk_hidden)
        self.num_players, self.rack_size = int(num_players), int(rack_size)
        layout = game_layout(self.num_players, self.rack_size, num_cards)
        kwargs.setdefault("ortho_init", False)
        super().__init__(
            observation_space,
            action_space,
            lr_schedule,
            features_extractor_class=StructuredExtractor,
            features_extractor_kwargs={"num_cards": num_cards, "layout": layout},
            **kwargs,
        )

    def _build_mlp_extractor(self) -> None:
        shape = self.features_extractor.rack.shape
        self.mlp_extractor = StructuredHeads(self.slot_hidden, self.trunk_hidden, shape)

    def _build(self, lr_schedule: Callable[[float], float]) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the heads already emit the 14 logits
        self.optimizer = self.optimizer_class(
            self.parameters(),
            lr=lr_schedule(1),  # type: ignore[call-arg]
            **self.optimizer_kwargs,
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(
            num_cards=self.features_extractor.rack.num_cards,
            slot_hidden=self.slot_hidden,
            trunk_hidden=self.trunk_hidden,
            num_players=self.num_players,
            rack_size=self.rack_size,
        )
        for key in ("features_extractor_class", "features_extractor_kwargs"):
            data.pop(key, None)
        return data
