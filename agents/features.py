"""The structured policy's features for a batch of observations in numpy: the twin of
``train.network.features.RackFeatures``.

``rack_features(obs, num_cards, layout)`` returns exactly what the torch module computes (per slot
(B, k, S), global (B, G), float32; ``feature_shape(layout)`` gives k, S and G) without torch, so
the learner's feature cache, the self-play snapshots, the batched ``expert`` and the torch-free
evaluation all read one fast kernel (``tests/agents/test_features.py`` keeps it equal to the torch
module and to the plain-Python reference). Every game the rules allow has features: the sizes
come from the game's observation layout (``racko_env.observation.layout_for(config)``: racks of
k = 3..10 slots, one block per opponent, none in solitaire, where the opponent facts are 0); the
rule book's layout (``DEFAULT``) gives ``SLOT_FEATURES`` and ``GLOBAL_FEATURES``. The exported ONNX
graph keeps computing its own features with the torch module.

``Planner`` is the one planner of ``expert`` (its reference: ``tests/agents/reference_expert.py``): a plan
keeps an ascending subsequence of the rack (two sentinels 0 and N + 1 around it) and pays
a cost for each gap of g slots that k cards may still fill (``cost[k, g]``). The forward and backward
tables of its dynamic programme are computed once per rack; then the cost of the rack with any
card put into any slot needs no new programme: the best plan keeping the card in slot s is the
best prefix plan ending left of s plus a gap up to the card (``fwd[i] + cost``) joined to the best
suffix plan right of it, and the best plan not keeping slot s is the best plan that spans it with
one gap (``skip``). Both loops are compiled (numba), over a batch of racks times candidate cards
at once. The features use the planner with exact costs; the ``expert`` bot
(``agents.batched.BatchExpert``) with its quantized ones.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from racko_env.observation import DEFAULT, Layout
from racko_env.rules import RACK_SIZE

NO_PLAN = 1000.0  # plan cost of a rack no ascending completion can reach (instead of inf)
EXPERT_PLAN = (2.0, 1.1)  # (gap power, width power): the expert's planning constants
SAVING_SCALE = 10.0  # plan-cost savings are in expected draws; most lie within +-10
COUNT_SCALE = 10.0  # counts of cards that may come below a slot's card are read / 10
INF = np.inf
# Names of the per-slot statistics (before the slot's one-hot id) and of the global values after
# the observation's own entries, in order: the kernel writes the two flags below by name.
SLOT_STATS = (
    "card", "may_come_below", "unseen_below", "prev", "next", "prev_below", "next_above",
    "card_minus_slot", "card_fits", "has_card", "cost", "saving_log", "saving_lin", "is_best",
    "no_plan", "home",
)  # fmt: skip
GLOBAL_EXTRAS = (
    "card", "held", "top", "known", "has_card", "cost", "no_plan", "best_cost", "best_saving_log",
    "best_saving_lin", "draw_gain_log", "draw_gain_lin", "take_adv_log", "take_adv_lin",
    "may_come", "unseen", "ascending_pairs",
)  # fmt: skip
# What the next opponent's public history (observation version 2) says about one card c it could
# take: its slot for c (the zone slot ``agents.obs.card_zone``) still holding its dealt card, refilled
# from the draw pile, holding a card known from the discard pile (and how far that card is from c),
# whether its known neighbours left and right of that slot leave room for c (+1 yes, -1 no, 0
# unknown), how long ago the slot changed, the card that last came out of it, and a take estimate.
# Each slot gets these for its own card (the card it discards if replaced); the global features
# get them for the decision's card (the held card, or the discard top while drawing). Solitaire
# has no opponent: its facts are all 0.
OPP_STATS = (
    "opp_dealt", "opp_drawn", "opp_known", "opp_known_gap", "opp_left", "opp_right", "opp_age",
    "opp_out_gap", "opp_take",
)  # fmt: skip
# expert's measured take rates of a discard whose slot still holds its dealt card, and whose slot was
# refilled (issue 26: 51% and 27%): the take estimate's two levels, zeroed where a known neighbour
# leaves no room for the card.
TAKE_DEALT, TAKE_REFILLED = 0.51, 0.27
AGE_SCALE = 10.0  # the age of a slot's card in turn-limit units, times this, capped at 1
_SLOT_NO_PLAN = SLOT_STATS.index("no_plan")
_GLOBAL_MAY_COME = GLOBAL_EXTRAS.index("may_come")
_G_K, _G_RACK, _G_UNSEEN, _G_DISCARD, _G_PHASE, _G_HELD, _G_TOP, _G_KNOWN = range(8)
_G_TURN, _G_OPP, _G_DRAWN, _G_CHANGED, _G_OUT, _G_OPPONENTS = range(8, 14)


class FeatureShape:
    """The features in one observation layout: ``rack_size`` blocks of ``slot_features`` columns
    (the stats, the slot's one-hot id, the opponent facts from ``slot_opp`` on), then
    ``global_features`` (the observation's ``global_obs`` entries: phase, held card's origin,
    turn, scores, draw pile, partners, each opponent's score and presence; the extras; the
    opponent facts); ``size`` flattened. ``geometry``: where the kernel reads each field."""

    def __init__(self, lay: Layout) -> None:
        self.layout, k = lay, lay.rack_size
        self.rack_size, self.slot_opp = k, len(SLOT_STATS) + k
        self.slot_features = self.slot_opp + len(OPP_STATS)
        self.global_obs = np.r_[
            lay.PHASE, [lay.HELD_FROM_DISCARD, lay.TURN, lay.OWN_SCORE, lay.DRAW_SIZE],
            [lay.PARTNERS], lay.OPP_SCORES, lay.OPP_PRESENT,
        ].astype(np.int64)  # fmt: skip
        self.global_features = len(self.global_obs) + len(GLOBAL_EXTRAS) + len(OPP_STATS)
        self.size = k * self.slot_features + self.global_features
        self.geometry = np.array(  # indexed by the _G_* names; opponent fields: the next one's
            [k, lay.RACK.start, lay.UNSEEN.start, lay.IN_DISCARD.start, lay.PHASE.start, lay.HELD,
             lay.DISCARD_TOP, lay.DRAW_TOP_KNOWN, lay.TURN, lay.OPP_SLOTS.start,
             lay.OPP_SLOT_DRAWN.start, lay.OPP_SLOT_CHANGED.start, lay.OPP_SLOT_OUT.start,
             lay.opponents],
            dtype=np.int64,
        )  # fmt: skip


@functools.cache
def feature_shape(lay: Layout = DEFAULT) -> FeatureShape:
    """The features' shape in layout ``lay`` (``layout_for(config)``; default the rule book's)."""
    return FeatureShape(lay)


DEFAULT_SHAPE = feature_shape(DEFAULT)
SLOT_FEATURES = DEFAULT_SHAPE.slot_features  # the rule book's layout: stats, one-hot, opponents
GLOBAL_FEATURES = DEFAULT_SHAPE.global_features
_GLOBAL_OBS = DEFAULT_SHAPE.global_obs  # the rule book's copied observation entries (14)


@njit(cache=True, nogil=True)
def _plan_row(vals, prefix, cost, fwd, bwd, skip, gap):  # pragma: no cover - compiled
    """One rack's forward/backward tables and ``skip`` (see ``Planner``); ``gap`` is scratch."""
    m = vals.shape[0]
    for i in range(m):
        a = vals[i]
        pa = prefix[a]
        for j in range(i + 1, m):
            b = vals[j]
            gap[i, j] = cost[prefix[b - 1] - pa, j - i - 1] if a < b else np.inf
    fwd[0] = 0.0
    for j in range(1, m):
        best = np.inf
        for i in range(j):
            c = fwd[i] + gap[i, j]
            if c < best:
                best = c
        fwd[j] = best
    bwd[m - 1] = 0.0
    for i in range(m - 2, -1, -1):
        best = np.inf
        for j in range(i + 1, m):
            c = bwd[j] + gap[i, j]
            if c < best:
                best = c
        bwd[i] = best
    for s in range(1, m - 1):
        best = np.inf
        for i in range(s):
            for j in range(s + 1, m):
                c = (fwd[i] + gap[i, j]) + bwd[j]
                if c < best:
                    best = c
        skip[s - 1] = best


@njit(cache=True, nogil=True)
def _place_card(card, vals, prefix, cost, fwd, bwd, skip, out, right):  # pragma: no cover
    """Plan costs of one rack with ``card`` put into each slot, into ``out`` (k,); ``right``
    (k,) is scratch. Each kept position i left of the card adds ``fwd[i]`` plus one gap to
    every slot right of it, each kept j right of it ``bwd[j]`` plus one gap to every slot left
    of it (the minimum over the same candidates as the reference planner's ``placements``)."""
    m = vals.shape[0]
    p_lo = prefix[card - 1] if card > 0 else 0
    p_hi = prefix[card]
    for s in range(m - 2):
        out[s] = np.inf
        right[s] = np.inf
    for i in range(m - 2):  # kept position i, card in slot s > i: a gap of s - i - 1
        f = fwd[i]
        if vals[i] < card and f < np.inf:
            k = p_lo - prefix[vals[i]]
            for s in range(i + 1, m - 1):
                c = f + cost[k, s - i - 1]
                if c < out[s - 1]:
                    out[s - 1] = c
    for j in range(2, m):  # kept position j, card in slot s < j: a gap of j - s - 1
        f = bwd[j]
        if vals[j] > card and f < np.inf:
            k = prefix[vals[j] - 1] - p_hi
            for s in range(1, j):
                c = f + cost[k, j - s - 1]
                if c < right[s - 1]:
                    right[s - 1] = c
    for s in range(m - 2):
        c = out[s] + right[s]
        out[s] = c if c < skip[s] else skip[s]


@njit(cache=True, nogil=True)
def _plan_rows(vals, prefix, cost, table, fwd, bwd, skip):  # pragma: no cover - compiled
    gap = np.empty((vals.shape[1], vals.shape[1]))
    for r in range(vals.shape[0]):
        _plan_row(vals[r], prefix[r], cost[table[r]], fwd[r], bwd[r], skip[r], gap)


@njit(cache=True, nogil=True)
def _placements(vals, prefix, cost, table, fwd, bwd, skip, rows, cards, out):  # pragma: no cover
    right = np.empty(skip.shape[1])
    for q in range(rows.shape[0]):
        r = rows[q]
        t = cost[table[r]]
        for k in range(cards.shape[1]):
            c = cards[q, k]
            _place_card(c, vals[r], prefix[r], t, fwd[r], bwd[r], skip[r], out[q, k], right)


def _exact_costs(n: int, gap_power: float, width_power: float) -> np.ndarray:
    """cost[t, k, g] = (max(t, 1) / max(k, 1)) ** width_power * g ** gap_power, inf where k < g:
    the features' gap costs for every count t of cards that may still come."""
    t = np.maximum(np.arange(n + 1), 1).astype(np.float64)
    k = np.maximum(np.arange(n + 1), 1).astype(np.float64)
    g = np.arange(RACK_SIZE + 1, dtype=np.float64)
    cost = (t[:, None, None] / k[None, :, None]) ** width_power * g[None, None, :] ** gap_power
    cost[:, np.arange(n + 1)[:, None] < np.arange(RACK_SIZE + 1)[None, :]] = INF
    return cost


_COSTS: dict[tuple[int, float, float], np.ndarray] = {}


def exact_costs(n: int, plan: tuple[float, float] = EXPERT_PLAN) -> np.ndarray:
    """``_exact_costs`` for deck size n, computed once."""
    key = (int(n), float(plan[0]), float(plan[1]))
    if key not in _COSTS:
        _COSTS[key] = _exact_costs(*key)
    return _COSTS[key]


class Planner:
    """Plan tables of R racks (all rows at once; ``tests/agents/reference_expert.py`` is the loop-per-step reference).

    ``vals`` int (R, k + 2): the rack (k slots, 10 by the rule book) with its sentinels 0 and
    N + 1; ``prefix`` int (R, N + 2):
    ``prefix[v]`` cards of value <= v that may still come (``prefix[N + 1] == prefix[N]``);
    ``cost`` float64 (T, N + 1, 11) and ``table`` int (R,): row r's gap of g slots with k
    candidate cards costs ``cost[table[r], k, g]`` (inf where no plan fills it; a plan with an
    inf gap costs inf, callers cap it). ``fwd[r, i]`` / ``bwd[r, i]``: the best plan of the part
    left / right of position i keeping it; ``base``: the rack's plan cost; ``skip[r, s]``: the
    best plan that does not keep slot s.
    """

    def __init__(
        self, vals: np.ndarray, prefix: np.ndarray, cost: np.ndarray, table: np.ndarray
    ) -> None:
        r = len(vals)
        self.n = cost.shape[1] - 1
        self.vals = np.ascontiguousarray(vals, dtype=np.int64)
        self.prefix = np.ascontiguousarray(prefix, dtype=np.int64)
        self.cost = np.ascontiguousarray(cost, dtype=np.float64)
        self.table = np.ascontiguousarray(table, dtype=np.int64)
        m = self.vals.shape[1]  # the rack's k slots and two sentinels
        self.fwd = np.empty((r, m))
        self.bwd = np.empty((r, m))
        self.skip = np.empty((r, m - 2))
        _plan_rows(*self._tables())
        self.base = self.fwd[:, -1]

    def _tables(self) -> tuple[np.ndarray, ...]:
        return self.vals, self.prefix, self.cost, self.table, self.fwd, self.bwd, self.skip

    def placements(self, cards: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Plan costs (K, C, k) of racks ``rows`` (default: all) with card ``cards[k, c]``
        (0..N; 0 is no card: only the plans that skip the slot) put into each slot."""
        rows = np.arange(len(self.vals)) if rows is None else np.asarray(rows, dtype=np.int64)
        cards = np.ascontiguousarray(cards, dtype=np.int64)
        if (
            cards.shape[0] != rows.shape[0]
            or cards.min(initial=0) < 0
            or cards.max(initial=0) > self.n
        ):
            raise ValueError(f"cards must be ints 0..{self.n}, one row per planned rack")
        out = np.empty((*cards.shape, self.vals.shape[1] - 2))
        _placements(*self._tables(), rows, cards, out)
        return out


def feature_planner(
    rack: np.ndarray, avail: np.ndarray, plan: tuple[float, float] = EXPERT_PLAN
) -> Planner:
    """The planner of the features for racks (R, k) with ``avail`` (R, N) 0/1: the cards that
    may still come (unseen or in the discard pile); exact costs (``exact_costs``)."""
    r, n = avail.shape
    prefix = np.zeros((r, n + 2), dtype=np.int64)
    np.cumsum(avail, axis=1, out=prefix[:, 1 : n + 1])
    prefix[:, n + 1] = prefix[:, n]
    return Planner(racks_with_sentinels(rack, n), prefix, exact_costs(n, plan), prefix[:, n])


@njit(cache=True, nogil=True)
def _saving(base, cost):  # pragma: no cover - compiled
    """A saving in plan cost two ways (signed log, clipped linear), as
    ``train.network.features._saving``."""
    s = min(max(min(base, NO_PLAN) - min(cost, NO_PLAN), -NO_PLAN), NO_PLAN)
    slog = np.sign(s) * np.log1p(abs(s))
    return slog, min(max(s, -SAVING_SCALE), SAVING_SCALE) / SAVING_SCALE


@njit(cache=True, nogil=True)
def _opp_facts(x, c, n, geo, out, at):  # pragma: no cover - compiled
    """``OPP_STATS`` of card ``c`` (0: none, all 0) for the next opponent, into ``out[at:]``;
    all 0 in solitaire (no opponent)."""
    if c <= 0 or geo[_G_OPPONENTS] == 0:
        for i in range(len(OPP_STATS)):
            out[at + i] = 0.0
        return
    k = geo[_G_K]
    opp0 = geo[_G_OPP]
    z = (c - 1) * k // n
    changed = np.float64(x[geo[_G_CHANGED] + z])
    dealt = 1.0 if changed <= 0.0 else 0.0
    held = int(np.rint(x[opp0 + z] * n))
    left = 0.0
    if z > 0:
        a = int(np.rint(x[opp0 + z - 1] * n))
        if a > 0:
            left = 1.0 if a < c else -1.0
    right = 0.0
    if z < k - 1:
        b = int(np.rint(x[opp0 + z + 1] * n))
        if b > 0:
            right = 1.0 if b > c else -1.0
    u = int(np.rint(x[geo[_G_OUT] + z] * n))
    out[at + 0] = dealt
    out[at + 1] = np.float64(x[geo[_G_DRAWN] + z])
    out[at + 2] = 1.0 if held > 0 else 0.0
    out[at + 3] = (held - c) / n if held > 0 else 0.0
    out[at + 4] = left
    out[at + 5] = right
    out[at + 6] = min(max(np.float64(x[geo[_G_TURN]]) - changed, 0.0) * AGE_SCALE, 1.0)
    out[at + 7] = (u - c) / n if u > 0 else 0.0
    room = 0.0 if left < 0.0 or right < 0.0 else 1.0
    out[at + 8] = (TAKE_DEALT if dealt > 0.0 else TAKE_REFILLED) * room


@njit(cache=True, nogil=True)
def _draw_gain(
    x, n, unseen0, known, base, vals, prefix, table, fwd, bwd, skip, tmp, scratch
):  # pragma: no cover
    """The expected saving of a blind draw: every card the pile may give, put where it helps most."""
    total, count = 0.0, 0.0
    for c in range(1, n + 1):
        if known > 0:
            w = 1.0 if c == known else 0.0
        else:
            w = float(x[unseen0 + c - 1])
        if w > 0:
            _place_card(c, vals, prefix, table, fwd, bwd, skip, tmp, scratch)
            total += w * (base - min(tmp.min(), base))
            count += w
    return total / max(count, 1.0)


@njit(cache=True, nogil=True)
def _features(obs, n, cost, geo, glob_obs, slots, glob):  # pragma: no cover - compiled
    """``rack_features`` row by row (the numbers of ``train.network.features.RackFeatures``);
    ``geo``: where the layout keeps each field (``FeatureShape.geometry``), k slots."""
    k = geo[_G_K]
    rack0, unseen0, discard0 = geo[_G_RACK], geo[_G_UNSEEN], geo[_G_DISCARD]
    phase0, i_held, i_top, i_known = geo[_G_PHASE], geo[_G_HELD], geo[_G_TOP], geo[_G_KNOWN]
    m = k + 2
    one_hot = len(SLOT_STATS)
    slot_opp = one_hot + k
    vals = np.empty(m, np.int64)
    prefix = np.empty(n + 2, np.int64)
    cum_a = np.empty(n + 1)
    cum_u = np.empty(n + 1)
    fwd, bwd = np.empty(m), np.empty(m)
    skip, here, tmp = np.empty(k), np.empty(k), np.empty(k)
    scratch = np.empty(k)
    gap = np.empty((m, m))
    for r in range(obs.shape[0]):
        x = obs[r]
        vals[0], vals[m - 1] = 0, n + 1
        for s in range(k):
            vals[s + 1] = int(np.rint(x[rack0 + s] * n))
        held = int(np.rint(x[i_held] * n))
        top = int(np.rint(x[i_top] * n))
        known = int(np.rint(x[i_known] * n))
        drawing = x[phase0] > 0.5
        card = top if drawing else held
        has = 1.0 if card > 0 else 0.0
        prefix[0], cum_a[0], cum_u[0] = 0, 0.0, 0.0
        for c in range(1, n + 1):
            u = float(x[unseen0 + c - 1])
            a = u + float(x[discard0 + c - 1])
            cum_a[c] = cum_a[c - 1] + a
            cum_u[c] = cum_u[c - 1] + u
            prefix[c] = prefix[c - 1] + int(np.rint(a))
        prefix[n + 1] = prefix[n]
        table = cost[prefix[n]]
        _plan_row(vals, prefix, table, fwd, bwd, skip, gap)
        base = min(fwd[m - 1], NO_PLAN)
        _place_card(card, vals, prefix, table, fwd, bwd, skip, here, scratch)
        best_here = NO_PLAN
        for s in range(k):
            here[s] = min(here[s], NO_PLAN)
            best_here = min(best_here, here[s])
        gain = 0.0
        if drawing:
            gain = _draw_gain(
                x, n, unseen0, known, base, vals, prefix, table, fwd, bwd, skip, tmp, scratch
            )
        # ---- per slot
        for s in range(k):
            v, prev, nxt = vals[s + 1], vals[s], vals[s + 2]
            below = max(v - 1, 0)
            f = slots[r, s]
            f[0] = v / n
            f[1] = cum_a[below] / COUNT_SCALE
            f[2] = cum_u[below] / COUNT_SCALE
            f[3] = prev / n
            f[4] = nxt / n
            f[5] = 1.0 if prev < v else 0.0
            f[6] = 1.0 if v < nxt else 0.0
            f[7] = (card - v) / n * has
            f[8] = has if prev < card < nxt else 0.0
            f[9] = has
            f[10] = np.log1p(here[s]) * has
            slog, lin = _saving(base, here[s])
            f[11] = slog * has
            f[12] = lin * has
            f[13] = has if here[s] <= best_here + 1e-6 else 0.0
            f[_SLOT_NO_PLAN] = has if here[s] >= NO_PLAN else 0.0
            f[15] = ((v - 1) * k / n - s) / k
            for i in range(k):
                f[one_hot + i] = 1.0 if i == s else 0.0
            _opp_facts(x, v, n, geo, f, slot_opp)
        # ---- global
        g = glob[r]
        for i in range(glob_obs.shape[0]):
            g[i] = x[glob_obs[i]]
        take = base - best_here - gain if drawing and top > 0 else 0.0
        go = glob_obs.shape[0]
        g[go + 0] = card / n
        g[go + 1] = held / n
        g[go + 2] = top / n
        g[go + 3] = known / n
        g[go + 4] = has
        g[go + 5] = np.log1p(base)
        g[go + 6] = 1.0 if base >= NO_PLAN else 0.0
        g[go + 7] = np.log1p(best_here) * has
        slog, lin = _saving(base, best_here)
        g[go + 8], g[go + 9] = slog * has, lin * has
        g[go + 10], g[go + 11] = _saving(gain, 0.0)
        g[go + 12], g[go + 13] = _saving(take, 0.0)
        g[go + _GLOBAL_MAY_COME] = cum_a[n] / n
        g[go + 15] = cum_u[n] / n
        asc = 0
        for s in range(1, k):
            if vals[s + 1] > vals[s]:
                asc += 1
        g[go + 16] = asc / (k - 1)
        _opp_facts(x, card, n, geo, g, go + len(GLOBAL_EXTRAS))


def racks_with_sentinels(rack: np.ndarray, num_cards: int) -> np.ndarray:
    """int (R, k) -> (R, k + 2) with 0 before and N + 1 after."""
    vals = np.empty((len(rack), np.shape(rack)[1] + 2), dtype=np.int64)
    vals[:, 0], vals[:, 1:-1], vals[:, -1] = 0, rack, num_cards + 1
    return vals


def rack_features(
    obs: np.ndarray, num_cards: int, lay: Layout = DEFAULT
) -> tuple[np.ndarray, np.ndarray]:
    """Observations (B, ``lay.size``) of layout ``lay`` -> slot features (B, k, S) and global
    features (B, G), float32 (``feature_shape(lay)``): the numbers of
    ``train.network.features.RackFeatures(num_cards, layout=lay)`` (both compute in float64)."""
    obs = np.asarray(obs)
    if obs.ndim != 2 or obs.shape[1] != lay.size:
        raise ValueError(f"obs must have shape (B, {lay.size}) ({lay!r}), got {obs.shape}")
    if obs.dtype not in (np.float32, np.float64):
        obs = obs.astype(np.float32)
    n = int(num_cards)
    if not 0 < n <= lay.cards:
        raise ValueError(f"num_cards must be 1..{lay.cards} in {lay!r}, got {num_cards!r}")
    shape = feature_shape(lay)
    slots = np.empty((len(obs), shape.rack_size, shape.slot_features), dtype=np.float32)
    glob = np.empty((len(obs), shape.global_features), dtype=np.float32)
    contiguous = np.ascontiguousarray(obs)
    _features(contiguous, n, exact_costs(n), shape.geometry, shape.global_obs, slots, glob)
    return slots, glob


def flat_features(slots: np.ndarray, glob: np.ndarray) -> np.ndarray:
    """(slots, global) as one row (B, k * S + G), as ``train.network.features.flat_features``."""
    return np.concatenate([slots.reshape(len(slots), -1), glob], axis=1)
