"""Torch twin of ``agents.expert``'s planner, batched over racks after a move (afterstates).

``card_tables`` counts, per observation, the cards that may still come and that are unseen;
``plan_cost`` / ``placement_plan_costs`` are the planner's cost of the cheapest ascending
completion of a rack, for every card in every slot at once; ``rack_features``
describes a rack by its cards, those counts and the plan costs. The structured policy
(``train.sb3.policy``) is built on them.
"""

from __future__ import annotations

import torch

from racko_env.observation import IN_DISCARD, UNSEEN

RACK_SIZE = 10
EXPERT_PLAN = (2.0, 1.1)  # (gap power, width power): the expert's planning constants


def num_features(plans: tuple[tuple[float, float], ...] = (EXPERT_PLAN,)) -> int:
    return 3 * RACK_SIZE + 2 + 2 * len(plans)


FEATURES = num_features()
NO_PLAN = 1000.0  # plan cost of a rack no ascending completion can reach (instead of inf)


def card_tables(obs: torch.Tensor, num_cards: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Cumulative counts (B, N + 1): entry v = cards of value <= v that may come / that are unseen.

    "May come" is unseen or in the discard pile (a shuffle brings the pile back); cards in the own
    rack, in an opponent's known slot or held in public view can not.
    """
    unseen = obs[:, UNSEEN.start : UNSEEN.start + num_cards]
    avail = unseen + obs[:, IN_DISCARD.start : IN_DISCARD.start + num_cards]
    zero = torch.zeros_like(unseen[:, :1])
    return (
        torch.cat([zero, torch.cumsum(avail, dim=1)], dim=1),
        torch.cat([zero, torch.cumsum(unseen, dim=1)], dim=1),
    )


def rack_features(
    racks: torch.Tensor,
    cum_avail: torch.Tensor,
    cum_unseen: torch.Tensor,
    num_cards: int,
    plans: tuple[tuple[float, float], ...] = (EXPERT_PLAN,),
    plan_costs: list[torch.Tensor] | None = None,
) -> torch.Tensor:
    """Features (B, K, F) of K candidate racks per row (``racks``: (B, K, 10) card ints).

    Per slot: card / N and the counts below it of cards that may come / are unseen; the two
    totals; then per planner setting in ``plans``: log(1 + plan cost) and whether no plan exists
    (``plan_costs``: those costs, (B, K) each, when the caller has them already).
    """
    b, k, _ = racks.shape
    below = (racks - 1).clamp(min=0).reshape(b, k * RACK_SIZE)
    a = torch.gather(cum_avail, 1, below).reshape(b, k, RACK_SIZE)
    u = torch.gather(cum_unseen, 1, below).reshape(b, k, RACK_SIZE)
    tot_a = (cum_avail[:, -1:] / num_cards).unsqueeze(1).expand(b, k, 1)
    tot_u = (cum_unseen[:, -1:] / num_cards).unsqueeze(1).expand(b, k, 1)
    parts = [racks.to(cum_avail.dtype) / num_cards, a / 10.0, u / 10.0, tot_a, tot_u]
    for p, (gap_power, width_power) in enumerate(plans):
        cost = plan_costs[p] if plan_costs is not None else None
        if cost is None:
            cost = plan_cost(racks, cum_avail, gap_power, width_power)
        plan = cost[..., None]
        parts += [torch.log1p(plan), (plan >= NO_PLAN).to(plan.dtype)]
    return torch.cat(parts, -1)


def plan_cost(
    racks: torch.Tensor,
    cum_avail: torch.Tensor,
    gap_power: float = EXPERT_PLAN[0],
    width_power: float = EXPERT_PLAN[1],
) -> torch.Tensor:
    """The ``expert`` planner's estimate of draws still needed (B, K), as a hand-made feature.

    The cheapest ascending completion: keep an increasing subsequence and fill each gap of g slots
    between kept cards a < b from the k cards between them that may still come, at a cost of
    ``(U / k) ** width_power * g ** gap_power`` (``agents.expert``: 1.1 and 2; with 0 and 1 it
    is the number of slots still to fill). A dynamic programme over the 12 positions
    (two sentinels) written with fixed-size tensor ops, so it runs inside the ONNX graph too.
    """
    b, k, _ = racks.shape
    n = cum_avail.shape[1] - 1
    total = cum_avail[:, -1].clamp(min=1.0)[:, None, None]
    vals = torch.cat(
        [torch.zeros_like(racks[..., :1]), racks, torch.full_like(racks[..., :1], n + 1)], dim=-1
    )
    cum = torch.cat([cum_avail, cum_avail[:, -1:]], dim=1)  # value n + 1 counts like n
    flat = vals.reshape(b, k * (RACK_SIZE + 2))
    below = torch.gather(cum, 1, (flat - 1).clamp(min=0)).reshape(b, k, RACK_SIZE + 2)
    upto = torch.gather(cum, 1, flat.clamp(max=n + 1)).reshape(b, k, RACK_SIZE + 2)
    fwd = [torch.zeros_like(below[..., 0])]
    for j in range(1, RACK_SIZE + 2):
        prev = torch.stack(fwd, dim=-1)  # (B, K, j)
        g = torch.arange(j - 1, -1, -1, dtype=cum.dtype, device=cum.device)  # gap sizes j-i-1
        between = below[..., j : j + 1] - upto[..., :j]
        width = (total / between.clamp(min=1.0)) ** width_power
        cost = torch.where(between >= g, width * g**gap_power, torch.full_like(width, NO_PLAN))
        ok = vals[..., :j] < vals[..., j : j + 1]
        step = torch.where(ok, prev + cost, torch.full_like(cost, NO_PLAN))
        fwd.append(step.min(dim=-1).values.clamp(max=NO_PLAN))
    return fwd[-1]


def _gather(cum: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """cum[b, idx[b, ...]] for an index tensor of any shape (B, ...)."""
    return torch.gather(cum, 1, idx.reshape(idx.shape[0], -1)).reshape(idx.shape)


def placement_plan_costs(
    rack: torch.Tensor,
    cards: torch.Tensor,
    cum_avail: torch.Tensor,
    gap_power: float = EXPERT_PLAN[0],
    width_power: float = EXPERT_PLAN[1],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Plan costs (B, C, 10) of the rack with card ``cards[b, c]`` put into each slot, and of
    the rack as it is (B,): the same numbers as ``plan_cost`` on those racks, much faster.

    As in ``agents.expert``: the best plan keeping the new card joins the best prefix plan before
    it (forward table) to the best suffix plan after it (backward table), both computed once for
    the rack; the best plan not keeping it is the best plan that spans the slot with one gap.
    """
    b = rack.shape[0]
    n = cum_avail.shape[1] - 1
    size = RACK_SIZE + 2
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
    skip = torch.where(mask[None], span[:, None], big).amin(dim=(2, 3))  # (B, 10)
    # left[b, c, p]: best prefix plan ending with the new card c kept at position p
    c = cards[:, :, None, None]  # (B, C, 1, 1)
    i_pos = pos[None, None, :, None]  # i = 0..11 (only i < p counts)
    p_pos = p_idx[None, None, None, :]  # p = 1..10
    lo = vals[:, None, :, None].expand(b, cards.shape[1], size, RACK_SIZE)
    g_left = (p_pos - i_pos - 1).to(dtype).expand_as(lo)
    left = f[:, None, :, None] + gap(lo, c.expand_as(lo), g_left)
    left = torch.where(i_pos < p_pos, left, big).min(dim=2).values  # (B, C, 10)
    g_right = (i_pos - p_pos - 1).to(dtype).expand_as(lo)  # here i plays j > p
    right = gap(c.expand_as(lo), lo, g_right) + bk[:, None, :, None]
    right = torch.where(i_pos > p_pos, right, big).min(dim=2).values
    keep = (left + right).clamp(max=NO_PLAN)
    return torch.minimum(keep, skip[:, None, :]), f[:, -1]
