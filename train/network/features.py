"""The structured network's features: what decides a Rack-O move, computed from the observation.

What decides a move is relational (where a card fits between its neighbours, how much closer it
brings the rack to an ascending one given the cards that may still come), which an MLP over the
raw observation learns poorly. ``RackFeatures`` (no weights) computes those quantities per slot
and globally, with the ``expert`` planner's plan costs (``placement_plan_costs``, the torch twin
of ``agents.expert``). It is a twin of the compiled kernel ``agents.features.rack_features``
(``tests/agents/test_features.py`` holds the two equal), kept because the exported bot graph
must hold its features. Both take the game's observation layout
(``racko_env.observation.layout_for(config)``; the rule book's by default), so every size the
rules allow has features. ``StructuredFeatures`` reads features handed in with the observation
(``[observation | features]``, computed by the kernel in training) and computes them otherwise."""

from __future__ import annotations

import torch
from torch import nn

from agents.features import (
    AGE_SCALE,
    COUNT_SCALE,
    DEFAULT_SHAPE,
    EXPERT_PLAN,
    NO_PLAN,
    OPP_STATS,
    SAVING_SCALE,
    TAKE_DEALT,
    TAKE_REFILLED,
    FeatureShape,
    feature_shape,
)
from racko_env.observation import DEFAULT, Layout
from racko_env.rules import RACK_SIZE


def card_tables(
    obs: torch.Tensor, num_cards: int, lay: Layout = DEFAULT
) -> tuple[torch.Tensor, torch.Tensor]:
    """Cumulative counts (B, N + 1): entry v = cards of value <= v that may come / that are unseen.
    "May come" is unseen or in the discard pile (a shuffle brings the pile back); cards in the own
    rack, in an opponent's known slot or held in public view can not."""
    unseen = obs[:, lay.UNSEEN.start : lay.UNSEEN.start + num_cards]
    avail = unseen + obs[:, lay.IN_DISCARD.start : lay.IN_DISCARD.start + num_cards]
    zero = torch.zeros_like(unseen[:, :1])
    return (
        torch.cat([zero, torch.cumsum(avail, dim=1)], dim=1),
        torch.cat([zero, torch.cumsum(unseen, dim=1)], dim=1),
    )


def _gather(cum: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """cum[b, idx[b, ...]] for an index tensor of any shape (B, ...)."""
    return torch.gather(cum, 1, idx.reshape(idx.shape[0], -1)).reshape(idx.shape)


def placement_plan_costs(
    rack: torch.Tensor,
    cards: torch.Tensor,
    cum_avail: torch.Tensor,
    gap_power: float = EXPERT_PLAN[0],
    width_power: float = EXPERT_PLAN[1],
    rack_size: int = RACK_SIZE,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Plan costs (B, C, k) of the rack (B, k = ``rack_size``, a constant of the traced graph)
    with card ``cards[b, c]`` put into each slot, and of the rack as it is (B,): the same numbers
    as planning each of those racks, much faster. As in ``agents.expert``: the best plan keeping
    the new card joins the best prefix plan before it (forward table) to the best suffix plan
    after it (backward table), both computed once for the rack; the best plan not keeping it is
    the best plan that spans the slot with one gap."""
    b, k = rack.shape[0], rack_size
    n = cum_avail.shape[1] - 1
    size = k + 2
    dtype = cum_avail.dtype
    total = cum_avail[:, -1].clamp(min=1.0)
    cum = torch.cat([cum_avail, cum_avail[:, -1:]], dim=1)  # value n + 1 counts like n
    vals = torch.cat(
        [torch.zeros_like(rack[:, :1]), rack, torch.full_like(rack[:, :1], n + 1)], dim=1
    )
    big = torch.tensor(NO_PLAN, dtype=dtype)

    def gap(lo: torch.Tensor, hi: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        """Cost of g slots between kept cards lo < hi (NO_PLAN when not lo < hi or too few)."""
        between = _gather(cum, (hi - 1).clamp(min=0)) - _gather(cum, lo.clamp(max=n + 1))
        t = total.reshape(b, *([1] * (between.dim() - 1)))
        cost = (t / between.clamp(min=1.0)) ** width_power * g**gap_power
        ok = (lo < hi) & (between >= g) & (g >= 0)
        return torch.where(ok, cost, big)

    pos = torch.arange(size)
    g_mat = (pos[None, :] - pos[:, None] - 1).to(dtype)  # [i, j]: slots strictly between
    base = gap(
        vals[:, :, None].expand(b, size, size),
        vals[:, None, :].expand(b, size, size),
        g_mat.expand(b, size, size),
    )  # (B, i, j)
    fwd = [torch.zeros(b, dtype=dtype)]
    for j in range(1, size):
        fwd.append((torch.stack(fwd, 1) + base[:, :j, j]).min(1).values.clamp(max=NO_PLAN))
    bwd = [torch.zeros(b, dtype=dtype)]
    for i in range(size - 2, -1, -1):
        later = torch.stack(bwd[::-1], 1)  # bwd of positions i + 1 .. size - 1
        bwd.append((base[:, i, i + 1 :] + later).min(1).values.clamp(max=NO_PLAN))
    f = torch.stack(fwd, 1)
    bk = torch.stack(bwd[::-1], 1)
    # skip[p]: best plan with one gap over position p (slot p - 1): i < p < j
    span = f[:, :, None] + base + bk[:, None, :]  # (B, i, j)
    p_idx = torch.arange(1, size - 1)
    mask = (pos[None, :, None] < p_idx[:, None, None]) & (p_idx[:, None, None] < pos[None, None, :])
    skip = torch.where(mask[None], span[:, None], big).amin(dim=(2, 3))  # (B, k)
    # left[b, c, p]: best prefix plan ending with the new card c kept at position p
    c = cards[:, :, None, None]  # (B, C, 1, 1)
    i_pos = pos[None, None, :, None]  # i = 0..k + 1 (only i < p counts)
    p_pos = p_idx[None, None, None, :]  # p = 1..k
    lo = vals[:, None, :, None].expand(b, cards.shape[1], size, k)
    g_left = (p_pos - i_pos - 1).to(dtype).expand_as(lo)
    left = f[:, None, :, None] + gap(lo, c.expand_as(lo), g_left)
    left = torch.where(i_pos < p_pos, left, big).min(dim=2).values  # (B, C, k)
    g_right = (i_pos - p_pos - 1).to(dtype).expand_as(lo)  # here i plays j > p
    right = gap(c.expand_as(lo), lo, g_right) + bk[:, None, :, None]
    right = torch.where(i_pos > p_pos, right, big).min(dim=2).values
    keep = (left + right).clamp(max=NO_PLAN)
    return torch.minimum(keep, skip[:, None, :]), f[:, -1]


def _slog(x: torch.Tensor) -> torch.Tensor:
    """Signed log1p: keeps the sign of a saving and squashes the rare huge ones."""
    return torch.sign(x) * torch.log1p(x.abs())


def _cost(c: torch.Tensor) -> torch.Tensor:
    return torch.log1p(c.clamp(max=NO_PLAN))


def _saving(base: torch.Tensor, cost: torch.Tensor) -> list[torch.Tensor]:
    """A saving in plan cost, three ways: signed log, clipped linear, and "no plan either side"."""
    s = (base.clamp(max=NO_PLAN) - cost.clamp(max=NO_PLAN)).clamp(-NO_PLAN, NO_PLAN)
    return [_slog(s), s.clamp(-SAVING_SCALE, SAVING_SCALE) / SAVING_SCALE]


def opponent_facts(
    obs: torch.Tensor, card: torch.Tensor, n: int, lay: Layout = DEFAULT
) -> torch.Tensor:
    """``agents.features.OPP_STATS`` of cards (B, K) (0: none, all 0) -> (B, K, 9): what the
    next opponent's public slot history (observation version 2) says about each card; all 0 in
    solitaire (no opponent)."""
    dtype = obs.dtype
    k = lay.rack_size
    if lay.opponents == 0:
        return torch.zeros((*card.shape, len(OPP_STATS)), dtype=dtype, device=obs.device)
    has = (card > 0).to(dtype)[..., None]
    z = ((card - 1).clamp(min=0) * k) // n  # the card's zone slot
    opp = torch.round(obs[:, lay.OPP_SLOTS.start : lay.OPP_SLOTS.start + k] * n).long()
    pad = torch.zeros_like(opp[:, :1])
    opp_pad = torch.cat([pad, opp, pad], 1)  # unknown neighbours beyond either end

    def at(t: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return torch.gather(t, 1, idx)

    def block(field: slice) -> torch.Tensor:  # the next opponent's k entries of a per-slot field
        return obs[:, field.start : field.start + k]

    changed = at(block(lay.OPP_SLOT_CHANGED), z)
    drawn = at(block(lay.OPP_SLOT_DRAWN), z)
    out = torch.round(at(block(lay.OPP_SLOT_OUT), z) * n).long()
    held, a, b = at(opp, z), at(opp_pad, z), at(opp_pad, z + 2)
    one = torch.ones_like(changed)
    left = torch.where(a > 0, torch.where(a < card, one, -one), 0 * one)
    right = torch.where(b > 0, torch.where(b > card, one, -one), 0 * one)
    dealt = (changed <= 0).to(dtype)
    age = ((obs[:, lay.TURN : lay.TURN + 1] - changed).clamp(min=0) * AGE_SCALE).clamp(max=1.0)
    room = ((left >= 0) & (right >= 0)).to(dtype)
    take = torch.where(dealt > 0, TAKE_DEALT * one, TAKE_REFILLED * one) * room
    facts = torch.stack(
        [
            dealt,
            drawn,
            (held > 0).to(dtype),
            torch.where(held > 0, (held - card).to(dtype) / n, 0 * one),
            left,
            right,
            age,
            torch.where(out > 0, (out - card).to(dtype) / n, 0 * one),
            take,
        ],
        dim=-1,
    )
    return facts * has


class RackFeatures(nn.Module):
    """Observation (B, ``layout.size``) -> slot features (B, k, S) and global features (B, G),
    the sizes of ``agents.features.feature_shape(layout)`` (``layout``: the game's observation
    layout, ``racko_env.observation.layout_for(config)``; the rule book's by default). No weights.
    Everything is a function of the observation alone; ``reference_features`` in the tests is the
    same computation in plain Python, card by card."""

    def __init__(
        self, num_cards: int, draw_rows_only: bool = False, layout: Layout = DEFAULT
    ) -> None:
        super().__init__()
        self.num_cards = int(num_cards)
        self.draw_rows_only = draw_rows_only
        self.layout = layout
        self.shape: FeatureShape = feature_shape(layout)
        self.rack_size = layout.rack_size
        self.size = self.shape.size  # flattened (flat_features)
        self.register_buffer(
            "cards", torch.arange(1, self.num_cards + 1, dtype=torch.long), persistent=False
        )
        self.register_buffer(
            "slot_ids", torch.eye(self.rack_size, dtype=torch.float64), persistent=False
        )

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # float64 inside: plans that tie exactly tie here too (float32 sums of the same plan
        # taken through different slots differ by more than the 1e-6 of ``is_best``), so these
        # features equal the numpy kernel's (``agents.features``) and the reference's.
        out_dtype = obs.dtype
        obs = obs.to(torch.float64)
        n, lay, k = self.num_cards, self.layout, self.rack_size
        b = obs.shape[0]
        dtype = obs.dtype
        rack = torch.round(obs[:, lay.RACK] * n).long()
        held = torch.round(obs[:, lay.HELD] * n).long()
        top = torch.round(obs[:, lay.DISCARD_TOP] * n).long()
        known = torch.round(obs[:, lay.DRAW_TOP_KNOWN] * n).long()
        phase = obs[:, lay.PHASE]
        drawing = phase[:, 0] > 0.5
        card = torch.where(drawing, top, held)  # the card this decision is about (0: none)
        has = (card > 0).to(dtype)
        cum_a, cum_u = card_tables(obs, n, lay)
        with torch.no_grad():
            costs, base = placement_plan_costs(rack, card[:, None], cum_a, rack_size=k)
            draw_gain = self._draw_gain(obs, rack, known, base, cum_a, drawing)
        here = costs[:, 0, :]  # (B, k): plan cost with the card put into each slot
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
        slot_pos = torch.arange(k, dtype=dtype, device=obs.device)
        home = ((rack - 1).to(dtype) * k / n - slot_pos) / k
        is_best = (here <= best_here[:, None] + 1e-6).to(dtype) * has[:, None]
        per_slot = [
            rack.to(dtype) / n,
            below_a.to(dtype) / COUNT_SCALE,
            below_u.to(dtype) / COUNT_SCALE,
            prev.to(dtype) / n,
            nxt.to(dtype) / n,
            (prev < rack).to(dtype),
            (rack < nxt).to(dtype),
            (c - rack).to(dtype) / n * has[:, None],
            ((prev < c) & (c < nxt)).to(dtype) * has[:, None],
            has[:, None].expand(b, k),
            _cost(here) * has[:, None],
            *[x * has[:, None] for x in _saving(base[:, None], here)],
            is_best,
            (here >= NO_PLAN).to(dtype) * has[:, None],
            home,
        ]
        slots = torch.cat(
            [
                torch.stack(per_slot, dim=-1),
                self.slot_ids[None].expand(b, -1, -1),
                opponent_facts(obs, rack, n, lay),
            ],
            dim=-1,
        )

        # ---- global
        take_adv = torch.where(drawing & (top > 0), base - best_here - draw_gain, zero)
        ascending_pairs = (rack[:, 1:] > rack[:, :-1]).to(dtype).sum(1) / (k - 1)
        glob = torch.cat(
            [
                phase,  # the observation's own entries (``FeatureShape.global_obs``)
                obs[
                    :, [lay.HELD_FROM_DISCARD, lay.TURN, lay.OWN_SCORE, lay.DRAW_SIZE, lay.PARTNERS]
                ],
                obs[:, lay.OPP_SCORES],
                obs[:, lay.OPP_PRESENT],
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
                opponent_facts(obs, card[:, None], n, lay)[:, 0],
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
        Every card the pile may give is put where it helps most (or not kept). That is N cards x k
        slots per row, the costliest part: with ``draw_rows_only`` (training, where the batch is
        known) only the rows deciding a draw are computed; the exported graph computes every row and
        zeroes the others, with the same numbers."""
        n = self.num_cards
        rows = torch.nonzero(drawing).squeeze(1) if self.draw_rows_only else None
        if rows is not None:
            if rows.numel() == 0:
                return torch.zeros(drawing.shape[0], dtype=obs.dtype, device=obs.device)
            obs, rack, known, base, cum_a = (t[rows] for t in (obs, rack, known, base, cum_a))
        b = obs.shape[0]
        costs, _ = placement_plan_costs(
            rack, self.cards[None, :].expand(b, n), cum_a, rack_size=self.rack_size
        )
        best_each = torch.minimum(costs.min(dim=2).values, base[:, None])
        unseen = obs[:, self.layout.UNSEEN.start : self.layout.UNSEEN.start + n]
        top_known = (self.cards[None, :] == known[:, None]).to(obs.dtype)
        w = torch.where((known > 0)[:, None], top_known, unseen)
        gain = (w * (base[:, None] - best_each)).sum(1) / w.sum(1).clamp(min=1.0)
        if rows is None:
            return torch.where(drawing, gain, torch.zeros_like(gain))
        out = torch.zeros(drawing.shape[0], dtype=obs.dtype, device=obs.device)
        return out.index_copy(0, rows, gain)


def flat_features(slots: torch.Tensor, glob: torch.Tensor) -> torch.Tensor:
    """(slots, global) as one row (B, k * S + G): the extractor's output."""
    return torch.cat([slots.flatten(1), glob], dim=1)


def split_features(
    features: torch.Tensor, shape: FeatureShape = DEFAULT_SHAPE
) -> tuple[torch.Tensor, torch.Tensor]:
    """``flat_features`` undone, for features of ``shape`` (the rule book's by default)."""
    k, s = shape.rack_size, shape.slot_features
    return features[:, : k * s].reshape(-1, k, s), features[:, k * s :]


class StructuredFeatures(nn.Module):
    """The network's input: (B, ``layout.size``) observations, or ``[observation | features]``
    rows whose features were computed beforehand (``features_dim`` more columns) -> the
    features."""

    def __init__(self, num_cards: int, layout: Layout = DEFAULT) -> None:
        super().__init__()
        self.rack = RackFeatures(num_cards, layout=layout)
        self.features_dim = self.rack.size

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return structured_features(observations, self.rack)


def structured_features(observations: torch.Tensor, rack: RackFeatures) -> torch.Tensor:
    """The features of observations (B, ``layout.size``), or the ones that come with them
    (B, ``layout.size + rack.size``)."""
    width = rack.layout.size
    if observations.shape[1] == width + rack.size:
        return observations[:, width:]
    return flat_features(*rack(observations[:, :width]))
