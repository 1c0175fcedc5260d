"""``search``: decision-time search over sampled worlds (perfect-information Monte Carlo).

For each legal action of the seat on turn, the bot samples K worlds consistent with its
observation (``racko_env.worlds``), plays the action in each and plays every world on with a
blueprint bot in every seat, on the batched engine; every candidate is played in the same worlds
with the same refill shuffles (common random numbers). The blueprint's own choice stands unless
another candidate beats it clearly (options ``z`` and ``margin``). ``act_batch`` decides many games
in one batch of the engine. It plays every size the rules allow (racks of 3-10 slots, any legal
deck, 1-4 players): in solitaire, which has no win to share, a candidate's value is minus the turns
still to play to Rack-O, the objective ``racko_env.solitaire`` measures. The options
(``agents.load("search:worlds=32,depth=1")`` or keyword arguments) and the leaf value:
docs/bots/search.md.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.base import Bot, describe_action
from agents.batched import check_batch, load_batch
from agents.obs import rules_config
from racko_env.actions import NUM_ACTIONS
from racko_env.config import RulesConfig
from racko_env.observation import layout_for
from racko_env.rules import SOLITAIRE
from racko_env.vector.encode import Encoder
from racko_env.vector.engine import VectorGame
from racko_env.worlds import Worlds, load_worlds, sample_worlds

OPTION_TYPES: dict[str, type] = {
    "blueprint": str,
    "worlds": int,
    "depth": int,
    "ms": float,
    "chunk": int,
    "margin": float,
    "phases": str,
    "keep": int,
    "z": float,
    "endgame": float,
}
PHASE_NAMES = {"draw": 0, "keep": 1, "place": 2}  # the decisions the search may take over
# Leaf value (depth > 0): seat i wins with probability proportional to
# exp(-LEAF_SCALE * (log(1 + cost_i) - LEAF_TURN * on_turn_i)), cost_i the expert's plan cost
# (expected draws to Rack-O) of seat i's rack from its own view. Fitted by maximum likelihood on
# expert-vs-expert rounds (``fit_leaf_value``); the same two numbers fit 2, 3 and 4 players.
LEAF_SCALE = 2.3
LEAF_TURN = 0.2
_REFILLS = 6  # refill shuffles prepared per world (a round rarely needs more; they repeat after)


class _CommonChance:
    """Refill shuffles that depend only on the world and the refill's number (common random
    numbers): every candidate action played in world w shuffles with the same keys."""

    def __init__(self, keys: np.ndarray, world_of: np.ndarray) -> None:
        self.keys = keys  # [W, _REFILLS, N]
        self.world_of = world_of  # [rows]
        self.game: VectorGame | None = None

    def first_dealers(self, games: np.ndarray, num_players: int, num_cards: int = 0) -> np.ndarray:
        return np.zeros(len(games), dtype=np.intp)

    def deck_orders(self, games: np.ndarray, num_cards: int) -> np.ndarray:
        return np.tile(np.arange(1, num_cards + 1), (len(games), 1))  # overwritten by the worlds

    def refill_orders(self, games: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
        assert self.game is not None
        nth = self.game.reshuffles[games] % _REFILLS
        keys = self.keys[self.world_of[games], nth, :width].copy()
        keys[np.arange(width)[None, :] >= np.asarray(lengths)[:, None]] = 2.0
        return keys.argsort(axis=1)


def parse_options(text: str) -> dict[str, Any]:
    """``"blueprint=expert,worlds=32"`` -> {"blueprint": "expert", "worlds": 32}; one-line errors."""
    out: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"search option {part!r} must look like name=value")
        if key not in OPTION_TYPES:
            raise ValueError(f"unknown search option {key!r}; known: {sorted(OPTION_TYPES)}")
        kind = OPTION_TYPES[key]
        try:
            out[key] = kind(value.strip())
        except ValueError:
            raise ValueError(
                f"search option {key}={value!r} must be a{'n' if kind is int else ''} "
                f"{kind.__name__}"
            ) from None
    return out


class SearchBot(Bot):
    """Samples worlds, plays every candidate out with the blueprint, picks the best mean result."""

    name = "search"

    def __init__(
        self,
        num_players: int = 2,
        seed: int | None = None,
        blueprint: str = "expert",
        worlds: int = 16,
        depth: int = 0,
        ms: float = 0.0,
        chunk: int = 16,
        margin: float = 0.0,
        phases: str = "draw+keep+place",
        keep: int = 0,
        z: float = 2.0,
        endgame: float = 0.0,
        **rules_options: Any,
    ) -> None:
        extra = {
            "depth": depth,
            "ms": ms,
            "margin": margin,
            "keep": keep,
            "z": z,
            "endgame": endgame,
        }
        for key, value in {"worlds": worlds, "chunk": chunk, **extra}.items():
            whole = OPTION_TYPES[key] is int
            low = 1 if key in ("worlds", "chunk") else 0
            ok = not isinstance(value, bool) and isinstance(value, int if whole else int | float)
            if not ok or value < low:
                kind = "an int" if whole else "a number"
                raise ValueError(f"search option {key} must be {kind} >= {low}, got {value!r}")
        self.z = float(z)
        self.endgame = float(endgame)
        names = [p for p in str(phases).split("+") if p]
        unknown = sorted(set(names) - set(PHASE_NAMES))
        if unknown or not names:
            raise ValueError(
                f"search option phases must join some of {list(PHASE_NAMES)} with '+', got {phases!r}"
            )
        self.phases = np.zeros(3, dtype=bool)
        self.phases[[PHASE_NAMES[p] for p in names]] = True
        self.margin = float(margin)
        self.keep = keep
        if blueprint in ("search",) or str(blueprint).startswith("search:"):
            raise ValueError("search option blueprint cannot be the search bot itself")
        self.config = RulesConfig.from_dict({"num_players": num_players, **rules_options})
        self.layout = layout_for(self.config)
        # What the expert's planner reads the game by: None for the rule book's sizes.
        self.plan_config = rules_config(num_players, rules_options)
        self.solitaire = num_players == SOLITAIRE
        self.num_players = num_players
        self.blueprint_spec = blueprint
        self.blueprint = load_batch(blueprint, num_players, seed=seed, **rules_options)
        self.worlds = worlds
        self.depth = depth
        self.ms = float(ms)
        self.chunk = chunk
        self.name = (
            f"search:blueprint={blueprint},worlds={worlds}"
            + "".join(f",{k}={v:g}" for k, v in extra.items() if v)
            + ("" if self.phases.all() else f",phases={phases}")
        )
        self.rng = np.random.default_rng(seed)
        self.last_worlds = 0  # worlds per decision the last call played (the ms cap may cut it)
        self.reset_stats()

    def reset_stats(self) -> None:
        """Zero the counters ``stats`` keeps for benchmarks: per decision phase (draw, keep,
        place), the decisions taken, how many the search changed from the blueprint's choice,
        and the seconds spent."""
        self.stats: dict[str, Any] = {
            "decisions": np.zeros(3, dtype=np.int64),
            "changed": np.zeros(3, dtype=np.int64),
            "seconds": 0.0,
        }

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    # ----------------------------------------------------------------- the interface

    def act(self, observation: Mapping[str, Any]) -> int:
        obs = np.asarray(observation["observation"], dtype=np.float32)[None, :]
        mask = np.asarray(observation["action_mask"]).astype(bool)[None, :]
        return int(self.act_batch(obs, mask)[0])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, _, _ = self.search(obs, masks)
        return actions

    def explain(self, observation: Mapping[str, Any]) -> str:
        obs = np.asarray(observation["observation"], dtype=np.float32)[None, :]
        mask = np.asarray(observation["action_mask"]).astype(bool)[None, :]
        actions, cand, value = self.search(obs, mask)
        held = int(round(float(obs[0, self.layout.HELD]) * self.config.num_cards)) or None
        shown = (lambda v: f"{-v:.2f}") if self.solitaire else (lambda v: f"{v:.0%}")
        parts = [
            f"{describe_action(int(a), held)}: {shown(v)}"
            for a, v in sorted(
                zip(cand[0], value[0], strict=True), key=lambda av: -av[1] if av[0] >= 0 else 9
            )
            if a >= 0
        ]
        best = describe_action(int(actions[0]), held)
        what = "estimated turns to Rack-O" if self.solitaire else "estimated win rate"
        return f"{best} (search, {self.last_worlds} worlds; {what}: {'; '.join(parts)})"

    def plan_costs(self, obs: np.ndarray) -> np.ndarray:
        """``expert``'s plan cost of each row's rack (observations of this game), float64 [B]:
        its estimate of the draws the seat still needs to go Rack-O."""
        from agents.batched import ExpertPlan
        from agents.expert_params import ExpertParams

        vec = np.asarray(obs, dtype=np.float64)
        ones = np.ones((len(vec), NUM_ACTIONS), dtype=bool)
        n = self.config.num_cards
        return ExpertPlan(vec, ones, n, ExpertParams(), config=self.plan_config).base

    # ----------------------------------------------------------------- the search

    def search(
        self, obs: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(actions [B], candidates [B, A] (-1 padded), estimated values [B, A]: seat 0's win
        shares, in solitaire minus the turns still to play)."""
        obs, masks = check_batch(obs, masks, self.config)
        phases = obs[:, self.layout.PHASE]
        if (phases.max(axis=1) < 0.5).any():
            raise ValueError("search: every row must be the observation of the seat on turn")
        start = time.perf_counter()
        default = self.blueprint.act_batch(obs, masks)
        cand, single = _candidates(masks)
        wins = np.zeros(cand.shape)
        seen = np.zeros(cand.shape)  # worlds each candidate was played in
        # Paired differences to the blueprint's choice in the same worlds: sum and sum of squares.
        diff1 = np.zeros(cand.shape)
        diff2 = np.zeros(cand.shape)
        col = np.argmax(cand == default[:, None], axis=1)
        alive = cand >= 0
        done = 0
        budget = self.ms / 1000.0 * len(obs)
        need = ~single & self.phases[phases.argmax(axis=1)]
        if self.endgame and need.any():  # only where the seat's own rack is near Rack-O
            cost = self.plan_costs(obs[need])
            need[np.flatnonzero(need)[cost > self.endgame]] = False
        while need.any() and done < self.worlds:
            k = min(self.chunk, self.worlds - done)
            rows = np.flatnonzero(need)
            worlds = sample_worlds(obs[rows], k, self.rng, self.config)
            live = alive[rows]
            per = self._play(worlds, np.where(live, cand[rows], -1), k)  # [rows, A, k]
            wins[rows] += per.sum(axis=2)
            seen[rows] += k * live
            d = (per - per[np.arange(len(rows)), col[rows]][:, None, :]) * live[:, :, None]
            diff1[rows] += d.sum(axis=2)
            diff2[rows] += (d * d).sum(axis=2)
            done += k
            if self.keep and done < self.worlds:  # only the best `keep` (and the blueprint's) go on
                mean = np.where(alive, wins / np.maximum(seen, 1), -np.inf)
                rank = (-mean).argsort(axis=1, kind="stable").argsort(axis=1, kind="stable")
                alive &= (rank < self.keep) | (cand == default[:, None])
            if self.ms and time.perf_counter() - start >= budget:
                break
        self.last_worlds = done
        value = np.where(cand >= 0, wins / np.maximum(seen, 1), -np.inf)
        # The gain over the blueprint's choice, less z standard errors of the paired mean; the
        # candidates dropped early (option keep) are not picked (their estimate is still shown).
        m = np.maximum(seen, 1)
        gain = diff1 / m
        se = np.sqrt(np.maximum(diff2 / m - gain * gain, 0.0) / m)
        actions = _pick(cand, np.where(alive, gain - self.z * se, -np.inf), default, self.margin)
        phase = phases.argmax(axis=1)
        np.add.at(self.stats["decisions"], phase, 1)
        np.add.at(self.stats["changed"], phase, actions != default)
        self.stats["seconds"] += time.perf_counter() - start
        return actions, cand, value

    def _play(self, worlds: Worlds, cand: np.ndarray, k: int) -> np.ndarray:
        """Seat 0's value per (row, candidate, world) [rows, A, k], k worlds per row: its win
        share, in solitaire minus the turns it still plays (to Rack-O or the turn limit).

        ``worlds.source`` holds the row (of ``cand``) of each world, k worlds per row."""
        b, a = cand.shape
        rows, slots = np.nonzero(cand >= 0)  # one (row, candidate) per pair
        # world index for every (pair, j): rows of `worlds` are grouped by source, k each
        order = np.argsort(worlds.source, kind="stable")
        first = np.searchsorted(worlds.source[order], rows)
        widx = order[(first[:, None] + np.arange(k)[None, :]).ravel()]
        pair = np.repeat(np.arange(len(rows)), k)
        w = worlds.take(widx)
        n = self.config.num_players
        keys = self.rng.random((len(worlds), _REFILLS, w.draw.shape[1]))
        chance = _CommonChance(keys, widx)
        eng = VectorGame(len(w), self.config, chance=chance)
        chance.game = eng
        load_worlds(eng, w)
        # Depth: the root's turn ends, then every seat plays `depth` more turns, so that every
        # candidate's leaf comes at the same point (seat 0 about to draw), whether or not the
        # candidate itself ends the turn.
        root_turn = eng.turn.copy()
        stop_turn = eng.turn + 1 + self.depth * n if self.depth else None
        eng.step(cand[rows, slots][pair])
        enc = Encoder(eng)
        live = np.flatnonzero(~eng.round_over)
        while live.size:
            seats = eng.current[live]
            act = self.blueprint.act_batch(enc.observe(live, seats), enc.masks(live, seats))
            eng.step(act, live)
            live = live[~eng.round_over[live]]
            if stop_turn is not None:
                live = live[eng.turn[live] < stop_turn[live]]
        cut = np.flatnonzero(~eng.round_over)
        if self.solitaire:
            share = -(eng.turn - root_turn).astype(np.float64)
            if cut.size:  # and the expert's estimate of the turns still to come
                share[cut] -= self.plan_costs(enc.observe(cut, np.zeros(len(cut), np.intp)))
        else:
            share = _win_share(eng)
            if cut.size:
                share[cut] = self._leaf_value(eng, enc, cut)
        out = np.zeros((b, a, k))
        out[rows, slots] = share.reshape(len(rows), k)
        return out

    def _leaf_value(self, eng: VectorGame, enc: Encoder, rows: np.ndarray) -> np.ndarray:
        """Seat 0's (team's) estimated win share in unfinished worlds, from every seat's plan cost."""
        n = self.config.num_players
        logits = np.empty((len(rows), n))
        for p in range(n):
            cost = self.plan_costs(enc.observe(rows, np.full(len(rows), p)))
            on_turn = eng.current[rows] == p
            logits[:, p] = -LEAF_SCALE * (np.log1p(cost) - LEAF_TURN * on_turn)
        logits -= logits.max(axis=1, keepdims=True)
        prob = np.exp(logits)
        prob /= prob.sum(axis=1, keepdims=True)
        return prob[:, eng.team_of == eng.team_of[0]].sum(axis=1)


def fit_leaf_value(num_players: int, games: int = 600, seed: int = 0) -> tuple[float, float]:
    """Maximum-likelihood (LEAF_SCALE, LEAF_TURN) from expert-vs-expert rounds (grid search):
    every third turn, each seat's plan cost and who is on turn, against who went Rack-O."""
    from agents.batched import BatchExpert, expert_plan_costs
    from racko_env.vector import VectorRacko

    vec = VectorRacko(games, num_players, seed=seed)
    bot = BatchExpert(num_players)
    costs, cur, gid = [], [], []
    live = np.ones(games, dtype=bool)
    while live.any():
        g = np.flatnonzero(live)
        seat = vec.game.current[g]
        d = g[(vec.game.phase[g] == 0) & (vec.game.turn[g] % 3 == 0)]
        if d.size:
            costs.append(
                np.stack(
                    [
                        expert_plan_costs(vec.observe(d, np.full(len(d), p)), vec.game.num_cards)
                        for p in range(num_players)
                    ],
                    axis=1,
                )
            )
            cur.append(vec.game.current[d])
            gid.append(d)
        res = vec.step(bot.act_batch(vec.observe(g, seat), vec.action_masks(g, seat)), g)
        live[g[res.done]] = False
    x, on, g = np.log1p(np.concatenate(costs)), np.concatenate(cur), np.concatenate(gid)
    winner = vec.game.racko_player[g]
    keep = winner >= 0
    x, on, winner = x[keep], on[keep], winner[keep]
    turn = np.arange(num_players)[None, :] == on[:, None]
    best = (-np.inf, 0.0, 0.0)
    for a in np.linspace(0.2, 4.0, 39):
        for b in np.linspace(0.0, 1.5, 16):
            z = -a * (x - b * turn)
            z -= z.max(axis=1, keepdims=True)
            ll = (z[np.arange(len(z)), winner] - np.log(np.exp(z).sum(axis=1))).mean()
            if ll > best[0]:
                best = (ll, float(a), float(b))
    return best[1], best[2]


def _win_share(eng: VectorGame) -> np.ndarray:
    """Seat 0's share of the round's win per game: 1 alone, 1/m among m winning teams, 0.5 for a
    world cut off at the search depth (no result yet)."""
    won = eng.round_winners()
    teams = won.sum(axis=1) * eng.num_teams // eng.num_players  # winning teams
    share = np.where(won[:, 0], 1.0 / np.maximum(teams, 1), 0.0)
    return np.where(eng.round_over, share, 0.5)


def _candidates(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Legal actions per row, -1 padded [B, A]; and rows with a single legal action."""
    count = masks.sum(axis=1)
    a = int(count.max())
    ids = np.where(masks, np.arange(NUM_ACTIONS)[None, :], NUM_ACTIONS + 1)
    cand = np.sort(ids, axis=1)[:, :a]
    cand = np.where(cand <= NUM_ACTIONS, cand, -1)
    return cand, count <= 1


def _pick(
    cand: np.ndarray, gain: np.ndarray, default: np.ndarray, margin: float = 0.0
) -> np.ndarray:
    """Per row the candidate with the largest ``gain`` (its estimated win share less the
    blueprint's choice's, the blueprint's choice itself 0), if that gain is above ``margin``;
    else the blueprint's choice."""
    best = gain.max(axis=1)
    choice = cand[np.arange(len(cand)), gain.argmax(axis=1)]
    return np.where(best > margin, choice, default)
