"""A structured network frozen into a batch player (numpy in, numpy out): the self-play opponent,
league snapshot and evaluated bot of every trainer, saved and rebuilt as plain arrays (registered
with ``racko_env.learner_games`` as ``"structured"``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.features import rack_features
from racko_env.learner_games import register_state_policy
from racko_env.observation import DEFAULT
from racko_env.rules import RACK_SIZE
from train.common.snapshot import MASKED_LOGIT
from train.network.structured import PolicyGraph, StructuredNetwork


class FrozenPolicy:
    """A frozen copy of a structured policy that plays batches (numpy in and out), saved and
    restored as plain arrays. It reads its features from the compiled kernel; in the rule book's
    layout ``act_group`` takes those of all the games where snapshots sit at once
    (``takes_features``), so the planner runs once per decision round, not once per snapshot
    (another game's snapshot computes its own in ``act_batch``)."""

    def __init__(self, policy: nn.Module, name: str = "snapshot") -> None:
        """A copy of ``policy`` (a ``StructuredNetwork`` or SB3's ``StructuredPolicy``), built as
        its own kind from its constructor parameters, with its weights: later updates of the
        learner leave the copy as it was."""
        twin = type(policy)(**policy._get_constructor_parameters())
        twin.load_state_dict(policy.state_dict())
        self.graph = PolicyGraph(twin.eval())
        for p in self.graph.parameters():
            p.requires_grad_(False)
        self.num_cards = int(twin.features_extractor.rack.num_cards)
        self.layout = twin.features_extractor.rack.layout
        self.takes_features = self.layout is DEFAULT
        self.name = name

    def act_features(self, features: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The masked argmax from features (B, F) (``flat_features`` of the kernel's)."""
        policy = self.graph.policy
        with torch.no_grad():
            latent = policy.mlp_extractor.forward_actor(
                torch.as_tensor(np.asarray(features, dtype=np.float32))
            )
            logits = policy.action_net(latent)
            mask = torch.as_tensor(np.asarray(masks, dtype=bool))
            masked = torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))
        return masked.argmax(dim=1).numpy()

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        rows = np.asarray(obs, dtype=np.float32)[:, : self.layout.size]
        slots, glob = rack_features(rows, self.num_cards, self.layout)
        return self.act_features(np.concatenate([slots.reshape(len(obs), -1), glob], 1), masks)

    @staticmethod
    def act_group(
        policies: Sequence[FrozenPolicy], owner: np.ndarray, features: np.ndarray, masks: np.ndarray
    ) -> np.ndarray:
        """Actions of rows played by different snapshots: row i by ``policies[owner[i]]``, from
        the features of all rows computed once (``features`` (B, F), ``masks`` (B, 14))."""
        owner = np.asarray(owner, dtype=np.intp)
        if len(policies) == 1 or len(owner) == 0:
            out = np.empty(len(owner), dtype=np.intp)
            for k in np.unique(owner):
                rows = np.flatnonzero(owner == k)
                out[rows] = policies[int(k)].act_features(features[rows], masks[rows])
            return out
        return _stacked_actions(policies, owner, features, masks)

    def reset(self) -> None:
        pass

    def act(self, observation: Any) -> int:
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        mask = np.asarray(observation["action_mask"], dtype=bool)[None]
        return int(self.act_batch(obs, mask)[0])

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The network's shape and weights as named numpy arrays (data only)."""
        policy = self.graph.policy
        arrays = {
            "num_cards": np.array(policy.features_extractor.rack.num_cards),
            "slot_hidden": np.array(policy.slot_hidden),
            "trunk_hidden": np.array(policy.trunk_hidden),
            "num_players": np.array(policy.num_players),
            "rack_size": np.array(policy.rack_size),
        }
        for key, value in policy.state_dict().items():
            arrays[f"state/{key}"] = value.detach().cpu().numpy()
        return arrays

    @classmethod
    def from_arrays(cls, data: Any, name: str) -> FrozenPolicy:
        sizes = {
            k: int(data[k]) for k in ("num_players", "rack_size") if k in data
        }  # else 10 slots
        policy = StructuredNetwork(
            num_cards=int(data["num_cards"]),
            slot_hidden=[int(x) for x in np.asarray(data["slot_hidden"])],
            trunk_hidden=[int(x) for x in np.asarray(data["trunk_hidden"])],
            **sizes,
        )
        state = {
            k[len("state/") :]: torch.as_tensor(v)
            for k, v in data.items()
            if k.startswith("state/")
        }
        policy.load_state_dict(state)
        return cls(policy, name)

    def __repr__(self) -> str:
        return f"<FrozenPolicy {self.name!r}>"


register_state_policy("structured", FrozenPolicy)


class _StackedActors:
    """The actor weights of several frozen policies stacked along a first axis (P, ...), so that
    all their rows of a decision round are one batched forward (``torch.baddbmm``) instead of one
    small forward per snapshot, where per-call overhead, not arithmetic, was the cost."""

    def __init__(self, policies: Sequence[FrozenPolicy]) -> None:
        heads = [p.graph.policy.mlp_extractor for p in policies]
        named = [
            {k: v for k, v in h.named_parameters() if not k.startswith("critic.")} for h in heads
        ]
        stacked = {k: torch.stack([n[k].detach() for n in named]) for k in named[0]}

        def layer(prefix: str) -> tuple[torch.Tensor, torch.Tensor]:
            return stacked[f"{prefix}.weight"], stacked[f"{prefix}.bias"]

        def linears(prefix: str, net: nn.Sequential) -> list[tuple[torch.Tensor, torch.Tensor]]:
            return [layer(f"{prefix}.{i}") for i, m in enumerate(net) if isinstance(m, nn.Linear)]

        self.shape = heads[0].shape  # every member plays the same game
        self.slot = linears("actor.slot_net", heads[0].actor.slot_net)
        self.trunk = linears("actor.trunk", heads[0].actor.trunk)
        self.slot_logit = layer("slot_logit")
        self.other = layer("other_logits")
        self.members = tuple(policies)

    @staticmethod
    def _linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
        """x (P, N, in) by each policy's own layer w (P, out, in), b (P, out): (P, N, out)."""
        if b is None:
            return torch.bmm(x, w.transpose(1, 2))
        return torch.baddbmm(b[:, None, :], x, w.transpose(1, 2))

    def logits(self, features: torch.Tensor) -> torch.Tensor:
        """features (P, M, F), row block p for policy p -> the actor's logits (P, M, 14): the
        same layers as ``StructuredHeads.forward_actor``."""
        p, m = features.shape[:2]
        k, sf = self.shape.rack_size, self.shape.slot_features
        slots = features[:, :, : k * sf].reshape(p, m * k, sf)
        glob = features[:, :, k * sf :]
        (w, b), *rest = self.slot
        h = self._linear(slots, w[:, :, :sf]).reshape(p, m, k, -1)
        h = torch.relu(h + self._linear(glob, w[:, :, sf:], b)[:, :, None, :])
        for w, b in rest:
            h = torch.relu(self._linear(h.reshape(p, m * k, -1), w, b)).reshape(p, m, k, -1)
        t = torch.cat([glob, h.mean(dim=2), h.amax(dim=2)], dim=-1)
        for w, b in self.trunk:
            t = torch.relu(self._linear(t, w, b))
        w, b = self.slot_logit
        s = h.shape[-1]
        slot_logits = self._linear(h.reshape(p, m * k, s), w[:, :, :s]).reshape(
            p, m, k
        ) + self._linear(t, w[:, :, s:], b)
        absent = torch.full((p, m, RACK_SIZE - k), MASKED_LOGIT, dtype=slot_logits.dtype)
        return torch.cat([slot_logits, absent, self._linear(t, *self.other)], dim=-1)


_STACKED: list[_StackedActors] = []  # the last stack built: the pool changes every few updates


def _stacked_actions(
    policies: Sequence[FrozenPolicy], owner: np.ndarray, features: np.ndarray, masks: np.ndarray
) -> np.ndarray:
    """``FrozenPolicy.act_group`` for several policies: rows grouped by owner into a zero-padded
    (P, M, F) block, one stacked forward, the masked argmax of each real row."""
    if (
        not _STACKED
        or len(_STACKED[0].members) != len(policies)
        or any(a is not b for a, b in zip(_STACKED[0].members, policies, strict=True))
    ):
        _STACKED[:] = [_StackedActors(policies)]
    stacked = _STACKED[0]
    counts = np.bincount(owner, minlength=len(policies))
    order = np.argsort(owner, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pos = np.empty(len(owner), dtype=np.intp)
    pos[order] = np.arange(len(owner)) - starts[owner[order]]
    block = np.zeros((len(policies), int(counts.max()), features.shape[1]), dtype=np.float32)
    block[owner, pos] = features
    with torch.no_grad():
        logits = stacked.logits(torch.from_numpy(block)).numpy()[owner, pos]
    logits = np.where(np.asarray(masks, dtype=bool), logits, np.float32(MASKED_LOGIT))
    return logits.argmax(axis=1)
