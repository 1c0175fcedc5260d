"""The policies MaskablePPO trains here: ``flat`` (an MLP over the raw observation) and ``structured``.

An MLP over the 177 raw floats imitates ``expert`` poorly (docs/training.md has the measurement),
because what decides a Rack-O move is relational: where a card fits between its
neighbours, and how much closer it brings the rack to an ascending one given the cards that may
still come. The ``structured`` policy computes exactly those quantities inside the network, from
the same observation (the env's contract and the exported graph's inputs stay as they are):

- ``RackFeatures`` (no parameters): per slot, the card, its neighbours, whether it ascends from them,
  how many cards that may still come lie below it, whether the card in question (the held card, or
  the discard top while drawing) fits between the neighbours, and the ``expert`` planner's plan cost
  with that card put there (``train.common.afterstate.placement_plan_costs``, the torch twin of
  ``agents.expert``); globally, the decision, the plan cost of the rack as it is, the best
  placement's saving and the expected saving of a blind draw.
- ``StructuredHeads``: one small network shared by the ten slots embeds each slot (so a slot's logit
  is computed the same way wherever it is, with the slot's index as an input); a trunk over the
  pooled slots and the global features gives the draw / take / keep / discard logits, and each
  slot's logit reads its own embedding beside the trunk. The critic has its own copy of both.

``StructuredPolicy`` plugs these into sb3-contrib's ``MaskableActorCriticPolicy`` (the heads emit
the 14 logits themselves, so the usual action layer is the identity). ``PolicyGraph`` is the whole
policy as one module ``(observation, action_mask) -> (action, masked_logits)``: what is exported to
ONNX and what plays as a frozen self-play opponent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn
from torch.nn.functional import linear

from agents.features import rack_features
from racko_env.actions import NUM_ACTIONS
from racko_env.observation import (
    DISCARD_TOP,
    DRAW_SIZE,
    DRAW_TOP_KNOWN,
    HELD,
    HELD_FROM_DISCARD,
    OBS_SIZE,
    OPP_PRESENT,
    OPP_SCORES,
    OWN_SCORE,
    PARTNERS,
    PHASE,
    RACK,
    TURN,
    UNSEEN,
)
from racko_env.rules import deck_size
from train.common.afterstate import NO_PLAN, card_tables, placement_plan_costs
from train.common.snapshot import MASKED_LOGIT
from train.sb3.vec_env import register_state_policy

RACK_SIZE = 10
POLICIES = ("flat", "structured")
SLOT_FEATURES = 26
GLOBAL_FEATURES = 31
SAVING_SCALE = 10.0  # plan-cost savings are in expected draws; most lie within +-10


def _slog(x: torch.Tensor) -> torch.Tensor:
    """Signed log1p: keeps the sign of a saving and squashes the rare huge ones."""
    return torch.sign(x) * torch.log1p(x.abs())


def _cost(c: torch.Tensor) -> torch.Tensor:
    return torch.log1p(c.clamp(max=NO_PLAN))


def _saving(base: torch.Tensor, cost: torch.Tensor) -> list[torch.Tensor]:
    """A saving in plan cost, three ways: signed log, clipped linear, and "no plan either side"."""
    s = (base.clamp(max=NO_PLAN) - cost.clamp(max=NO_PLAN)).clamp(-NO_PLAN, NO_PLAN)
    return [_slog(s), s.clamp(-SAVING_SCALE, SAVING_SCALE) / SAVING_SCALE]


class RackFeatures(nn.Module):
    """Observation (B, 177) -> slot features (B, 10, 26) and global features (B, 31). No weights.

    Everything is a function of the observation alone; ``reference_features`` in the tests is the
    same computation in plain Python, card by card.
    """

    def __init__(self, num_cards: int, draw_rows_only: bool = False) -> None:
        super().__init__()
        self.num_cards = int(num_cards)
        self.draw_rows_only = draw_rows_only
        self.size = RACK_SIZE * SLOT_FEATURES + GLOBAL_FEATURES  # flattened (flat_features)
        self.register_buffer(
            "cards", torch.arange(1, self.num_cards + 1, dtype=torch.long), persistent=False
        )
        self.register_buffer(
            "slot_ids", torch.eye(RACK_SIZE, dtype=torch.float64), persistent=False
        )

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # float64 inside: plans that tie exactly tie here too (float32 sums of the same plan
        # taken through different slots differ by more than the 1e-6 of ``is_best``), so these
        # features equal the numpy kernel's (``agents.features``) and the reference's.
        out_dtype = obs.dtype
        obs = obs.to(torch.float64)
        n = self.num_cards
        b = obs.shape[0]
        dtype = obs.dtype
        rack = torch.round(obs[:, RACK] * n).long()
        held = torch.round(obs[:, HELD] * n).long()
        top = torch.round(obs[:, DISCARD_TOP] * n).long()
        known = torch.round(obs[:, DRAW_TOP_KNOWN] * n).long()
        phase = obs[:, PHASE]
        drawing = phase[:, 0] > 0.5
        card = torch.where(drawing, top, held)  # the card this decision is about (0: none)
        has = (card > 0).to(dtype)
        cum_a, cum_u = card_tables(obs, n)
        with torch.no_grad():
            costs, base = placement_plan_costs(rack, card[:, None], cum_a)
            draw_gain = self._draw_gain(obs, rack, known, base, cum_a, drawing)
        here = costs[:, 0, :]  # (B, 10): plan cost with the card put into each slot
        best_here = here.min(dim=1).values
        zero = torch.zeros_like(draw_gain)

        # ---- per slot
        vals = torch.cat(
            [torch.zeros_like(rack[:, :1]), rack, torch.full_like(rack[:, :1], n + 1)], 1
        )
        prev, nxt = vals[:, :-2], vals[:, 2:]
        below_a = torch.gather(cum_a, 1, (rack - 1).clamp(min=0))
        below_u = torch.gather(cum_u, 1, (rack - 1).clamp(min=0))
        c = card[:, None]
        slot_pos = torch.arange(RACK_SIZE, dtype=dtype, device=obs.device)
        home = ((rack - 1).to(dtype) * RACK_SIZE / n - slot_pos) / RACK_SIZE
        is_best = (here <= best_here[:, None] + 1e-6).to(dtype) * has[:, None]
        per_slot = [
            rack.to(dtype) / n,
            below_a.to(dtype) / 10.0,
            below_u.to(dtype) / 10.0,
            prev.to(dtype) / n,
            nxt.to(dtype) / n,
            (prev < rack).to(dtype),
            (rack < nxt).to(dtype),
            (c - rack).to(dtype) / n * has[:, None],
            ((prev < c) & (c < nxt)).to(dtype) * has[:, None],
            has[:, None].expand(b, RACK_SIZE),
            _cost(here) * has[:, None],
            *[x * has[:, None] for x in _saving(base[:, None], here)],
            is_best,
            (here >= NO_PLAN).to(dtype) * has[:, None],
            home,
        ]
        slots = torch.cat(
            [torch.stack(per_slot, dim=-1), self.slot_ids[None].expand(b, -1, -1)], dim=-1
        )

        # ---- global
        take_adv = torch.where(drawing & (top > 0), base - best_here - draw_gain, zero)
        ascending_pairs = (rack[:, 1:] > rack[:, :-1]).to(dtype).sum(1) / (RACK_SIZE - 1)
        glob = torch.cat(
            [
                phase,
                obs[:, [HELD_FROM_DISCARD, TURN, OWN_SCORE, DRAW_SIZE, PARTNERS]],
                obs[:, OPP_SCORES],
                obs[:, OPP_PRESENT],
                torch.stack(
                    [
                        card.to(dtype) / n,
                        held.to(dtype) / n,
                        top.to(dtype) / n,
                        known.to(dtype) / n,
                        has,
                        _cost(base),
                        (base >= NO_PLAN).to(dtype),
                        _cost(best_here) * has,
                        *[x * has for x in _saving(base, best_here)],
                        *_saving(draw_gain, zero),
                        *_saving(take_adv, zero),
                        cum_a[:, -1] / n,
                        cum_u[:, -1] / n,
                        ascending_pairs,
                    ],
                    dim=1,
                ),
            ],
            dim=1,
        )
        return slots.to(out_dtype), glob.to(out_dtype)

    def _draw_gain(
        self,
        obs: torch.Tensor,
        rack: torch.Tensor,
        known: torch.Tensor,
        base: torch.Tensor,
        cum_a: torch.Tensor,
        drawing: torch.Tensor,
    ) -> torch.Tensor:
        """Expected plan-cost saving of a blind draw (B,), as ``expert`` weighs it; 0 off the draw.

        Every card the pile may give is put where it helps most (or not kept). That is N cards x
        10 slots per row, the costliest part: with ``draw_rows_only`` (training, where the batch is
        known) only the rows deciding a draw are computed; the exported graph computes every row
        and zeroes the others, with the same numbers.
        """
        n = self.num_cards
        rows = torch.nonzero(drawing).squeeze(1) if self.draw_rows_only else None
        if rows is not None:
            if rows.numel() == 0:
                return torch.zeros(drawing.shape[0], dtype=obs.dtype, device=obs.device)
            obs, rack, known, base, cum_a = (t[rows] for t in (obs, rack, known, base, cum_a))
        b = obs.shape[0]
        costs, _ = placement_plan_costs(rack, self.cards[None, :].expand(b, n), cum_a)
        best_each = torch.minimum(costs.min(dim=2).values, base[:, None])
        unseen = obs[:, UNSEEN.start : UNSEEN.start + n]
        top_known = (self.cards[None, :] == known[:, None]).to(obs.dtype)
        w = torch.where((known > 0)[:, None], top_known, unseen)
        gain = (w * (base[:, None] - best_each)).sum(1) / w.sum(1).clamp(min=1.0)
        if rows is None:
            return torch.where(drawing, gain, torch.zeros_like(gain))
        out = torch.zeros(drawing.shape[0], dtype=obs.dtype, device=obs.device)
        return out.index_copy(0, rows, gain)


def _mlp(sizes: Sequence[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=False):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


class StructuredTower(nn.Module):
    """Slot features + global features -> per-slot embeddings (B, 10, S) and a trunk (B, T)."""

    def __init__(self, slot_hidden: Sequence[int], trunk_hidden: Sequence[int]) -> None:
        super().__init__()
        self.slot_net = _mlp([SLOT_FEATURES + GLOBAL_FEATURES, *slot_hidden])
        s = slot_hidden[-1]
        self.trunk = _mlp([GLOBAL_FEATURES + 2 * s, *trunk_hidden])
        self.slot_dim, self.trunk_dim = s, trunk_hidden[-1]

    def forward(self, slots: torch.Tensor, glob: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # The slot network's first layer reads [slot | global]; its global half is the same for
        # the ten slots of a row, so it is computed once per row (the same layer, a sixth fewer
        # multiplications in the update, where this network is most of the time).
        first = self.slot_net[0]
        k = slots.shape[-1]
        h = linear(slots, first.weight[:, :k])
        h = h + linear(glob, first.weight[:, k:], first.bias)[:, None, :]
        e = self.slot_net[1:](h)
        pooled = torch.cat([e.mean(dim=1), e.amax(dim=1)], dim=-1)
        return e, self.trunk(torch.cat([glob, pooled], dim=-1))


def flat_features(slots: torch.Tensor, glob: torch.Tensor) -> torch.Tensor:
    """(slots (B, 10, 26), global (B, 31)) as one row (B, 291): the extractor's output."""
    return torch.cat([slots.flatten(1), glob], dim=1)


def split_features(features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``flat_features`` undone."""
    k = RACK_SIZE * SLOT_FEATURES
    return features[:, :k].reshape(-1, RACK_SIZE, SLOT_FEATURES), features[:, k:]


class StructuredHeads(nn.Module):
    """SB3's ``mlp_extractor`` slot: features -> (the 14 logits, the critic's latent)."""

    def __init__(self, slot_hidden: Sequence[int], trunk_hidden: Sequence[int]) -> None:
        super().__init__()
        self.actor = StructuredTower(slot_hidden, trunk_hidden)
        self.critic = StructuredTower(slot_hidden, trunk_hidden)
        self.slot_logit = nn.Linear(self.actor.slot_dim + self.actor.trunk_dim, 1)
        self.other_logits = nn.Linear(self.actor.trunk_dim, NUM_ACTIONS - RACK_SIZE)
        self.latent_dim_pi = NUM_ACTIONS
        self.latent_dim_vf = self.critic.trunk_dim

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        slots, glob = split_features(features)
        e, t = self.actor(slots, glob)
        # slot_logit reads [slot embedding | trunk]: the trunk's half once per row, as above.
        w, s = self.slot_logit.weight, e.shape[-1]
        slot_logits = linear(e, w[:, :s]) + linear(t, w[:, s:], self.slot_logit.bias)[:, None]
        return torch.cat([slot_logits.squeeze(-1), self.other_logits(t)], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.critic(*split_features(features))[1]

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class StructuredExtractor(BaseFeaturesExtractor):
    """``RackFeatures`` flattened for SB3: (B, 10 * 26 + 31).

    Handed ``[observation | features]`` (``train.sb3.feature_cache.FeatureCache``, in training) it
    reads the features; handed a bare observation it computes them.
    """

    def __init__(self, observation_space: spaces.Box, num_cards: int) -> None:
        super().__init__(observation_space, RACK_SIZE * SLOT_FEATURES + GLOBAL_FEATURES)
        self.rack = RackFeatures(num_cards)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        if observations.shape[1] == OBS_SIZE + self.features_dim:
            return observations[:, OBS_SIZE:]
        return flat_features(*self.rack(observations[:, :OBS_SIZE]))


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
        **kwargs: Any,
    ) -> None:
        self.slot_hidden = tuple(int(x) for x in slot_hidden)
        self.trunk_hidden = tuple(int(x) for x in trunk_hidden)
        kwargs.setdefault("ortho_init", False)
        super().__init__(
            observation_space,
            action_space,
            lr_schedule,
            features_extractor_class=StructuredExtractor,
            features_extractor_kwargs={"num_cards": num_cards},
            **kwargs,
        )

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = StructuredHeads(self.slot_hidden, self.trunk_hidden)

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
        )
        for key in ("features_extractor_class", "features_extractor_kwargs"):
            data.pop(key, None)
        return data


class PolicyGraph(nn.Module):
    """A MaskablePPO policy as ``(observation (B, 177), action_mask (B, 14) bool) -> (action,
    masked_logits)``: the masked argmax, as ``model.predict(..., deterministic=True)`` plays."""

    def __init__(self, policy: MaskableActorCriticPolicy) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.policy.extract_features(obs, self.policy.pi_features_extractor)
        latent = self.policy.mlp_extractor.forward_actor(features)
        logits = self.policy.action_net(latent)
        masked = torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))
        return masked.argmax(dim=1), masked


class FrozenPolicy:
    """A frozen copy of a structured policy that plays batches of games (numpy in and out): a
    self-play opponent and the evaluated bot. It is saved and restored as plain arrays
    (``to_arrays`` / ``from_arrays``), so checkpoints that hold it load without pickle.

    It reads the features from the compiled kernel (``agents.features.rack_features``, the same
    numbers as the graph's own ``RackFeatures``): ``act_batch`` computes them, and the batched
    VecEnv hands the features of all games where snapshots sit to ``act_group`` at once
    (``takes_features``), so the planner runs once per decision round, not once per snapshot.
    """

    takes_features = True

    def __init__(self, policy: StructuredPolicy, name: str = "snapshot") -> None:
        twin = type(policy)(**policy._get_constructor_parameters())
        twin.load_state_dict(policy.state_dict())
        self.graph = PolicyGraph(twin.eval())
        for p in self.graph.parameters():
            p.requires_grad_(False)
        self.num_cards = int(twin.features_extractor.rack.num_cards)
        self.name = name

    def act_features(self, features: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The masked argmax from features (B, 291) (``flat_features`` of the kernel's)."""
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
        slots, glob = rack_features(np.asarray(obs, dtype=np.float32), self.num_cards)
        return self.act_features(np.concatenate([slots.reshape(len(obs), -1), glob], 1), masks)

    @staticmethod
    def act_group(
        policies: Sequence[FrozenPolicy], owner: np.ndarray, features: np.ndarray, masks: np.ndarray
    ) -> np.ndarray:
        """Actions of rows played by different snapshots: row i by ``policies[owner[i]]``, from
        the features of all rows computed once (``features`` (B, 291), ``masks`` (B, 14))."""
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
        }
        for key, value in policy.state_dict().items():
            arrays[f"state/{key}"] = value.detach().cpu().numpy()
        return arrays

    @classmethod
    def from_arrays(cls, data: Any, name: str) -> FrozenPolicy:
        policy = StructuredPolicy(
            spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
            spaces.Discrete(NUM_ACTIONS),
            lambda _: 0.0,
            num_cards=int(data["num_cards"]),
            slot_hidden=[int(x) for x in np.asarray(data["slot_hidden"])],
            trunk_hidden=[int(x) for x in np.asarray(data["trunk_hidden"])],
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
        """features (P, M, 291), row block p for policy p -> the actor's logits (P, M, 14): the
        same layers as ``StructuredHeads.forward_actor``."""
        p, m = features.shape[:2]
        k = RACK_SIZE * SLOT_FEATURES
        slots = features[:, :, :k].reshape(p, m * RACK_SIZE, SLOT_FEATURES)
        glob = features[:, :, k:]
        (w, b), *rest = self.slot
        h = self._linear(slots, w[:, :, :SLOT_FEATURES]).reshape(p, m, RACK_SIZE, -1)
        h = torch.relu(h + self._linear(glob, w[:, :, SLOT_FEATURES:], b)[:, :, None, :])
        for w, b in rest:
            h = torch.relu(self._linear(h.reshape(p, m * RACK_SIZE, -1), w, b)).reshape(
                p, m, RACK_SIZE, -1
            )
        t = torch.cat([glob, h.mean(dim=2), h.amax(dim=2)], dim=-1)
        for w, b in self.trunk:
            t = torch.relu(self._linear(t, w, b))
        w, b = self.slot_logit
        s = h.shape[-1]
        slot_logits = self._linear(h.reshape(p, m * RACK_SIZE, s), w[:, :, :s]).reshape(
            p, m, RACK_SIZE
        ) + self._linear(t, w[:, :, s:], b)
        return torch.cat([slot_logits, self._linear(t, *self.other)], dim=-1)


_STACKED: list[_StackedActors] = []  # the last stack built: the pool changes every few updates


def _stacked_actions(
    policies: Sequence[FrozenPolicy], owner: np.ndarray, features: np.ndarray, masks: np.ndarray
) -> np.ndarray:
    """``FrozenPolicy.act_group`` for several policies: rows grouped by owner into a zero-padded
    (P, M, 291) block, one stacked forward, the masked argmax of each real row."""
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


def policy_kwargs(kind: str, num_players: int, **sizes: Any) -> tuple[Any, dict[str, Any]]:
    """(policy class or SB3 name, policy_kwargs) for ``ppo.policy``."""
    if kind == "structured":
        return StructuredPolicy, {"num_cards": deck_size(num_players), **sizes}
    if kind == "flat":
        return "MlpPolicy", dict(sizes)
    raise ValueError(f"ppo.policy must be one of {POLICIES}, got {kind!r}")
