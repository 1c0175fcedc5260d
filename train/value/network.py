"""A learned rack value and the one-ply policy over it (the network inside a value-trained bot).

``RackValueNet`` estimates V(s): how many more own turns a rack needs to reach Rack-O, given which
cards may still come. Its input describes each slot by its card and by how many cards that may still
come lie below that card (the counts that decide how easily the gaps between kept cards fill), plus
two totals (``train.common.afterstate.rack_features``). A rack that is already ascending is worth
exactly 0.

``OnePlyPolicy`` turns V into moves the way a player weighs them, one ply ahead (as TD-Gammon does):

- place the held card where the resulting rack is worth least;
- keep a drawn card when its best placement beats leaving the rack as it is;
- take the discard when its best placement beats the *expected* best outcome of a blind draw,
  averaged over every card the draw pile may hold (or the known top when ``flip`` made it public).

Its logits are minus the expected turns of each action, so a masked argmax is the move. It is plain
tensor arithmetic on the observation (layout v1), so it exports to ONNX with the observation and
the mask as inputs like any other bot file (``train.value.run.export_value_run``).
``TorchOnePly`` wraps it as a batch policy for collection and the quick check.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from racko_env.observation import (
    DISCARD_TOP,
    DRAW_TOP_KNOWN,
    HELD,
    PHASE,
    RACK,
    UNSEEN,
)
from train.common.afterstate import (
    EXPERT_PLAN,
    RACK_SIZE,
    card_tables,
    num_features,
    placement_plan_costs,
    rack_features,
)
from train.common.snapshot import MASKED_LOGIT


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=False):
        layers += [nn.Linear(a, b), nn.ReLU()]
    layers.append(nn.Linear(sizes[-1], 1))
    return nn.Sequential(*layers)


KEEP_MARGIN = 1e-3  # turns a kept card must save: a card that changes nothing is discarded


def ascending(racks: torch.Tensor) -> torch.Tensor:
    return (racks[..., 1:] > racks[..., :-1]).all(dim=-1)


class RackValueNet(nn.Module):
    """Features (..., FEATURES) -> expected own turns still needed (>= 0)."""

    def __init__(
        self,
        hidden: tuple[int, ...] = (128, 128),
        plans: tuple[tuple[float, float], ...] = (EXPERT_PLAN,),
    ) -> None:
        super().__init__()
        self.hidden = tuple(hidden)
        self.plans = tuple((float(g), float(w)) for g, w in plans)
        self.mlp = _mlp([num_features(self.plans), *hidden])

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        return nn.functional.softplus(self.mlp(feats)).squeeze(-1)


class OnePlyPolicy(nn.Module):
    """(observation (B, 177), action_mask (B, 14) bool) -> (action (B,), masked logits (B, 14))."""

    def __init__(self, value: RackValueNet, num_cards: int) -> None:
        super().__init__()
        self.value = value
        self.num_cards = num_cards
        self.register_buffer("eye", torch.eye(RACK_SIZE, dtype=torch.bool), persistent=False)
        self.register_buffer(
            "cards", torch.arange(1, num_cards + 1, dtype=torch.long), persistent=False
        )

    def _values(
        self,
        racks: torch.Tensor,
        cum_a: torch.Tensor,
        cum_u: torch.Tensor,
        plan_costs: list[torch.Tensor] | None = None,
    ) -> torch.Tensor:
        feats = rack_features(racks, cum_a, cum_u, self.num_cards, self.value.plans, plan_costs)
        v = self.value(feats)
        return torch.where(ascending(racks), torch.zeros_like(v), v)

    def turns(self, obs: torch.Tensor, expect_draw: bool = True) -> torch.Tensor:
        """Expected own turns to Rack-O after each action (B, 14); unused actions get a value too.

        ``expect_draw=False`` skips the blind draw's expectation (N x 10 racks per row; the DRAW
        column is then +inf): for batches with no draw decision.
        """
        n = self.num_cards
        rack = torch.round(obs[:, RACK] * n).long()
        held = torch.round(obs[:, HELD] * n).long()
        top = torch.round(obs[:, DISCARD_TOP] * n).long()
        known = torch.round(obs[:, DRAW_TOP_KNOWN] * n).long()
        drawing = obs[:, 44] > 0.5
        cum_a, cum_u = card_tables(obs, n)
        b = obs.shape[0]
        card = torch.where(drawing, top, held)
        placed = torch.where(self.eye, card[:, None, None], rack[:, None, :])  # (B, 10, 10)
        # plan costs of the card (and, for a draw, of every card) in every slot, per planner
        cards = card[:, None]
        if expect_draw:
            cards = torch.cat([cards, self.cards[None, :].expand(b, n)], dim=1)
        costs = [placement_plan_costs(rack, cards, cum_a, g, w) for g, w in self.value.plans]
        v = self._values(
            torch.cat([placed, rack[:, None, :]], dim=1),
            cum_a,
            cum_u,
            [torch.cat([c[:, 0, :], s[:, None]], dim=1) for c, s in costs],
        )
        slot_v, stay = v[:, :RACK_SIZE], v[:, RACK_SIZE]
        best_card = slot_v.min(dim=1).values
        keep = best_card + KEEP_MARGIN
        if expect_draw:
            draw_v = self._blind_draw(obs, rack, known, stay, cum_a, cum_u, costs)
        else:
            draw_v = torch.full_like(stay, float("inf"))
        return torch.cat(
            [slot_v, draw_v[:, None], best_card[:, None], keep[:, None], stay[:, None]], dim=1
        )

    def _blind_draw(
        self,
        obs: torch.Tensor,
        rack: torch.Tensor,
        known: torch.Tensor,
        stay: torch.Tensor,
        cum_a: torch.Tensor,
        cum_u: torch.Tensor,
        costs: list[tuple[torch.Tensor, torch.Tensor]],
    ) -> torch.Tensor:
        """Expected turns after a blind draw: the best use of each card the pile may give."""
        b, n = obs.shape[0], self.num_cards
        # every card the draw pile may give, in every slot: (B, N, 10 slots, 10)
        drawn = torch.where(
            self.eye[None, None], self.cards[None, :, None, None], rack[:, None, None, :]
        )
        dv = self._values(
            drawn.reshape(b, n * RACK_SIZE, RACK_SIZE),
            cum_a,
            cum_u,
            [c[:, 1:, :].reshape(b, n * RACK_SIZE) for c, _ in costs],
        )
        best_drawn = torch.minimum(dv.reshape(b, n, RACK_SIZE).min(dim=2).values, stay[:, None])
        unseen = obs[:, UNSEEN.start : UNSEEN.start + n]
        top_known = (self.cards[None, :] == known[:, None]).to(obs.dtype)
        w = torch.where((known > 0)[:, None], top_known, unseen)
        return (w * best_drawn).sum(1) / w.sum(1).clamp(min=1.0)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = -self.turns(obs)
        masked = torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))
        return masked.argmax(dim=1), masked


def describe(policy: OnePlyPolicy) -> dict[str, Any]:
    return {
        "kind": "one-ply over a learned rack value",
        "num_cards": policy.num_cards,
        "hidden": list(policy.value.hidden),
        "features": num_features(policy.value.plans),
        "plans": [list(p) for p in policy.value.plans],
    }


class TorchOnePly:
    """``OnePlyPolicy`` as a ``BatchPolicy`` (numpy in, actions out), computing the blind-draw
    expectation only for rows that decide whether to draw."""

    name = "one-ply"

    def __init__(self, policy: OnePlyPolicy) -> None:
        self.policy = policy.eval()

    @torch.no_grad()
    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        o = torch.as_tensor(obs, dtype=torch.float32)
        m = torch.as_tensor(masks, dtype=torch.bool)
        out = np.empty(len(obs), dtype=np.intp)
        drawing = obs[:, PHASE.start] > 0.5
        for rows, expect in ((np.flatnonzero(drawing), True), (np.flatnonzero(~drawing), False)):
            if rows.size:
                logits = -self.policy.turns(o[rows], expect_draw=expect)
                logits = torch.where(m[rows], logits, torch.full_like(logits, -1e9))
                out[rows] = logits.argmax(1).numpy()
        return out
