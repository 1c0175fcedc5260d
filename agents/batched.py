"""Bots that decide for a whole batch of games in one call (``BatchPolicy``: observations [B, W]
and masks [B, 14] to one action id per row).

``BatchRandom``, ``BatchHeuristic`` and ``BatchExpert`` are vectorized twins of ``random``,
``heuristic`` and ``expert`` (the same decision on the same observation); ``BotBatch``
(``racko_env.opponents``) runs any per-game bot row by row; ``ModelPolicy`` plays a MaskablePPO
model in one forward pass. ``load_batch(spec, ...)`` takes the specs of ``agents.load``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agents.expert_params import QUANTUM, ExpertParams, gap_factor
from agents.obs import Cards, cards, rules_config
from racko_env.actions import DISCARD, DRAW_PILE, KEEP, NUM_ACTIONS, TAKE_DISCARD
from racko_env.config import RulesConfig
from racko_env.observation import DEFAULT, OBS_SIZES, Layout, layout_for
from racko_env.opponents import BotBatch


@runtime_checkable
class BatchPolicy(Protocol):
    """Decides for many games at once: one legal action id per row."""

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """obs float32 [B, W], masks bool [B, A] -> int array [B] of legal action ids."""
        ...


def check_batch(
    obs: np.ndarray, masks: np.ndarray, config: RulesConfig | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Shapes checked (the widths of ``config``'s layout, default the rule book's), masks as
    bool; a row without a legal action is an error (never guessed)."""
    obs = np.asarray(obs)
    masks = np.asarray(masks).astype(bool, copy=False)
    # Any layout version's rows: these bots read version 1's fields, a prefix of every version.
    sizes = OBS_SIZES if config is None else layout_for(config).sizes
    if obs.ndim != 2 or obs.shape[1] not in sizes.values():
        widths = " or ".join(f"(B, {w})" for w in sizes.values())
        raise ValueError(f"obs must have shape {widths}, got {obs.shape}")
    if masks.shape != (obs.shape[0], NUM_ACTIONS):
        raise ValueError(
            f"masks must have shape ({obs.shape[0]}, {NUM_ACTIONS}), got {masks.shape}"
        )
    empty = ~masks.any(axis=1)
    if empty.any():
        raise ValueError(
            f"rows {np.flatnonzero(empty).tolist()} have no legal action (all-False mask): "
            "those seats are not on turn"
        )
    return obs, masks


def _on_turn(seen: Cards) -> Cards:
    """``seen``, if every row asks for a decision; else a ``ValueError`` naming the rows."""
    if (seen.phase < 0).any():
        bad = np.flatnonzero(seen.phase < 0).tolist()
        raise ValueError(f"rows {bad} ask for no decision (the seat is not on turn)")
    return seen


class BatchRandom:
    """Uniform over the legal actions of each row; ``seed`` makes it reproducible."""

    name = "random"

    def __init__(self, num_players: int = 2, seed: int | None = None, **rules_options: Any) -> None:
        self.num_players = num_players
        self.config = rules_config(num_players, rules_options)  # None: the rule book's sizes
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        _, masks = check_batch(obs, masks, self.config)
        # The legal action with the largest uniform key: uniform among the legal ones.
        keys = self.rng.random(masks.shape)
        keys[~masks] = -1.0
        return keys.argmax(axis=1)


class BatchHeuristic:
    """The ``heuristic`` bot (slot zones) for a batch: the same decision on the same observation.

    Card c belongs in zone slot floor((c-1) * k / N) (k the rack's slots). Draw phase: take the discard if it fills its
    zone slot and that slot holds a card of another zone, else draw. Keep a drawn card on the same
    test, else discard it. Place a card in its zone slot.
    """

    name = "heuristic"

    def __init__(self, num_players: int = 2, **rules_options: Any) -> None:
        self.num_players = num_players  # the player count is read from each observation anyway
        self.config = rules_config(num_players, rules_options)  # None: the rule book's sizes

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = check_batch(obs, masks, self.config)
        rows = np.arange(len(obs))
        seen = _on_turn(cards(obs, self.config))
        k = seen.rack.shape[1]
        phase, rack, held = seen.phase, seen.rack, seen.held
        top, n = seen.discard_top, seen.num_cards

        def zone(c: np.ndarray) -> np.ndarray:
            return (c - 1) * k // n

        def improves(c: np.ndarray) -> np.ndarray:
            slot = np.minimum(np.maximum(zone(c), 0), k - 1)  # no held card (0) -> slot 0, unused
            return zone(rack[rows, slot]) != slot

        take = (top > 0) & masks[:, TAKE_DISCARD] & improves(top)
        draw_choice = np.where(take, TAKE_DISCARD, DRAW_PILE)
        keep_choice = np.where(improves(held), KEEP, DISCARD)
        place_choice = np.minimum(np.maximum(zone(held), 0), k - 1)
        return np.choose(phase, [draw_choice, keep_choice, place_choice])


class BatchExpert:
    """The ``expert`` bot (``agents.expert``) for a batch: the same decisions, in numpy.

    The same plan costs as ``ExpertBot``, from the compiled planner every batched consumer shares
    (``agents.features.Planner``: the forward/backward dynamic programme over the slots, then
    every candidate card in every slot) with the same float64 operations in the same order, so
    equal costs break ties the same way. ``params``: an ``agents.expert_params.ExpertParams``.
    """

    name = "expert"

    def __init__(self, num_players: int = 2, params: Any = None, **rules_options: Any) -> None:

        self.num_players = num_players
        self.params = params or ExpertParams()
        self.config = rules_config(num_players, rules_options)  # None: the rule book's sizes

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = check_batch(obs, masks, self.config)
        seen = _on_turn(cards(obs, self.config))
        decks = seen.num_cards
        out = np.empty(len(obs), dtype=np.intp)
        for n in np.unique(decks):
            r = np.flatnonzero(decks == n)
            vec = obs[r].astype(np.float64)
            out[r] = ExpertPlan(vec, masks[r], int(n), self.params, config=self.config).act()
        return out


def expert_plan_costs(obs: np.ndarray, num_cards: int, params: Any = None) -> np.ndarray:
    """``expert``'s plan cost of each row's rack as it stands (its estimate of the draws the seat
    still needs to go Rack-O, from that seat's own observation), float64 [B]; ``params``: an
    ``agents.expert_params.ExpertParams`` (default: the expert's own). The search bot's leaf value reads it."""

    vec = np.asarray(obs, dtype=np.float64)
    ones = np.ones((len(vec), NUM_ACTIONS), dtype=bool)
    return ExpertPlan(vec, ones, int(num_cards), params or ExpertParams()).base


class ExpertPlan:
    """``expert``'s plan for rows that share the deck size ``n``, at any batch size: the one
    compiled planner (``agents.features.Planner``) with ``expert``'s quantized costs.

    In a game of other sizes (``config``) a small deck cycles fast, so the cards the plan replaces
    in its own rack count among those that may still come; that also keeps some plan finite for
    every rack of a tiny deck."""

    def __init__(
        self,
        vec: np.ndarray,
        masks: np.ndarray,
        n: int,
        params: Any,
        seen: Cards | None = None,
        config: RulesConfig | None = None,
    ) -> None:
        """``seen``: ``cards(vec, config)``, where the caller has decoded it already."""
        from agents.features import Planner, racks_with_sentinels

        self.p = params
        self.n = n
        self.masks = masks
        r = len(vec)
        rows = np.arange(r)

        lay = DEFAULT if config is None else layout_for(config)
        seen = cards(vec, config) if seen is None else seen
        self.rack, self.held = seen.rack, seen.held
        self.top, self.draw_top = seen.discard_top, seen.draw_top
        self.phase = vec[:, lay.PHASE].argmax(axis=1)
        self.unseen = vec[:, lay.UNSEEN][:, :n] > 0.5  # column c - 1 is card c
        blocked = np.zeros((r, n + 2), dtype=bool)
        if config is None:  # the rule book's game: the own rack's cards do not come back
            blocked[rows[:, None], self.rack] = True
        blocked[rows[:, None], seen.opp_slots] = True  # 0 (unknown) -> column 0
        blocked[rows, self.held] = True
        prefix = np.zeros((r, n + 2), dtype=np.intp)
        prefix[:, 1 : n + 1] = np.cumsum(~blocked[:, 1 : n + 1], axis=1)
        prefix[:, n + 1] = prefix[:, n]
        self.plan = Planner(
            racks_with_sentinels(self.rack, n), prefix, _expert_costs(n, params), prefix[:, n]
        )
        self.base = self.plan.base

    def placements(self, sel: np.ndarray, cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``sel``, candidate cards [k, C]: (lowest plan cost, its slot) per card."""
        c = self.plan.placements(cards, sel)  # [k, C, 10]
        slot = c.argmin(axis=2)
        return np.take_along_axis(c, slot[..., None], axis=2)[..., 0], slot

    def act(self) -> np.ndarray:
        p = self.p
        out = np.empty(len(self.rack), dtype=np.intp)
        draw = np.flatnonzero(self.phase == 0)
        if draw.size:
            out[draw] = self._draw_decision(draw)
        held_rows = np.flatnonzero(self.phase > 0)
        if held_rows.size:
            held = self.held[held_rows]
            if (held == 0).any():
                raise ValueError("observation has no held card in a keep/place decision")
            cost, slot = self.placements(held_rows, held[:, None])
            cost, slot = cost[:, 0], slot[:, 0]
            base = self.base[held_rows]
            keep = np.where(base - cost > p.keep_margin, KEEP, DISCARD)
            out[held_rows] = np.where(self.phase[held_rows] == 1, keep, slot)
        return out

    def draw_values(self, sel: np.ndarray) -> tuple[np.ndarray, ...]:
        """Rows ``sel`` deciding where to draw: (the blind draw's expected saving, the plan cost
        after taking the discard and its slot, whether the discard may be taken)."""
        n = self.n
        known = self.draw_top[sel]
        in_pool = self.unseen[sel].copy()
        has_known = known > 0
        in_pool[has_known] = False
        in_pool[np.flatnonzero(has_known), known[has_known] - 1] = True
        count = in_pool.sum(axis=1)
        width = max(int(count.max()), 1)
        ids = np.arange(1, n + 1)
        pool = np.sort(np.where(in_pool, ids, n + 1), axis=1)[:, :width]  # ascending, padded
        valid = pool <= n
        top = self.top[sel]
        cards = np.concatenate([np.where(valid, pool, 1), np.maximum(top, 1)[:, None]], axis=1)
        cost, slot = self.placements(sel, cards)
        base = self.base[sel]
        gain = base[:, None] - cost[:, :width]
        gain = np.where(valid & (gain > 0.0), gain, 0.0)  # max(0.0, x), NaN -> 0.0 as in Python
        total = np.cumsum(gain, axis=1)[:, -1]  # sequential, in ascending card order
        with np.errstate(invalid="ignore", divide="ignore"):
            draw_gain = np.where(count > 0, total / np.maximum(count, 1), 0.0)
        can_take = (top > 0) & self.masks[sel, TAKE_DISCARD]
        return draw_gain, cost[:, -1], slot[:, -1], can_take

    def _draw_decision(self, sel: np.ndarray) -> np.ndarray:
        draw_gain, take_cost, _, can_take = self.draw_values(sel)
        take = can_take & (self.base[sel] - take_cost > draw_gain + self.p.take_margin)
        return np.where(take, TAKE_DISCARD, DRAW_PILE)


class ModelPolicy:
    """A MaskablePPO model (or anything with SB3's ``predict(obs, action_masks=...)``) as a batch.

    One forward pass for the whole batch; ``deterministic=False`` samples like training does.
    """

    def __init__(self, model: Any, deterministic: bool = False, name: str = "model") -> None:
        if not callable(getattr(model, "predict", None)):
            raise TypeError(f"ModelPolicy needs a model with predict(), got {model!r}")
        self.model = model
        self.deterministic = deterministic
        self.name = name

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = check_batch(obs, masks)
        actions, _ = self.model.predict(obs, action_masks=masks, deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.intp).reshape(len(obs))


def load_batch(
    spec: str | Path | Any,
    num_players: int = 2,
    *,
    seed: int | None = None,
    **rules_options: Any,
) -> BatchPolicy:
    """A batch policy from a spec: ``"random"``, ``"heuristic"`` and ``"expert"`` are vectorized; a
    ``BatchPolicy`` object is returned as is; anything else goes through ``agents.load`` (names,
    ``"module:Class"``, ``.onnx`` files, bot objects): a bot with its own ``act_batch`` (an ONNX
    bot) decides whole batches, any other is run row by row."""
    if callable(getattr(spec, "act_batch", None)):
        return spec
    if spec in ("random", "heuristic", "expert"):
        RulesConfig.from_dict({"num_players": num_players, **rules_options})  # names bad options
        if spec == "random":
            return BatchRandom(num_players, seed=seed, **rules_options)
        cls = BatchHeuristic if spec == "heuristic" else BatchExpert
        return cls(num_players, **rules_options)
    import agents

    bot = agents.load(spec, num_players, seed=seed, **rules_options)
    # a bot that decides for batches itself (an ONNX bot: one run of its graph per batch)
    return bot if callable(getattr(bot, "act_batch", None)) else BotBatch(bot)


def group_features(obs: np.ndarray, num_cards: int, lay: Layout = DEFAULT) -> np.ndarray:
    """The structured policy's flat features of observations of layout ``lay`` (``agents.features``,
    the compiled kernel, imported here when first needed: plain envs do not load numba)."""
    from agents.features import flat_features, rack_features

    return flat_features(*rack_features(obs, num_cards, lay))


_EXPERT_COSTS: dict[tuple[int, Any], np.ndarray] = {}


def _expert_costs(n: int, params: Any) -> np.ndarray:
    """cost[t, k, g]: expected draws to fill g slots from k candidates when t cards may come,
    rounded to multiples of 1 / ``QUANTUM``, so that sums of them are exact in any order and equal
    plans tie exactly, whatever the order of the sums (computed once per deck size and params)."""

    key = (n, params)
    if key not in _EXPERT_COSTS:
        total = np.maximum(np.arange(n + 1), 1).astype(np.float64)
        k = np.arange(n + 1)
        with np.errstate(divide="ignore"):
            ratio = np.power(total[:, None] / k[None, :], params.width_power)  # [t, k]
        cost = np.empty((n + 1, n + 1, 11))
        cost[:, :, 0] = 0.0
        for g in range(1, 11):
            cost[:, :, g] = np.round(ratio * gap_factor(g, params) * QUANTUM) / QUANTUM
            cost[:, k < g, g] = np.inf
        _EXPERT_COSTS[key] = cost
    return _EXPERT_COSTS[key]
