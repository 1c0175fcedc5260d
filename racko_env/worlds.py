"""Full game states ("worlds") consistent with what one seat knows, sampled for search.

``sample_worlds`` draws ``k`` worlds per observation of a seat on turn (many observations at
once, seeded); ``load_worlds`` writes them into a ``racko_env.vector.VectorGame`` so the batched
engine plays them all in one batch. The observer sits at seat 0 of a world, its k-th opponent at
seat k. Known cards stay where the seat saw them; the unseen cards (``UNSEEN``) are dealt
uniformly at random to the opponents' unknown slots and the draw pile. Where the observation
alone does not fix the state (the opponents' choices are not evidence, the discard pile's order
below its top, a flipped draw pile's order, the observer's own slot history, the dealer),
docs/bots/search.md says what is assumed; ``discard_orders`` and ``draw_orders`` fix the piles'
orders where the caller knows them. tests/env/test_worlds.py checks that every world re-encodes
to exactly its observation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from racko_env.actions import Phase
from racko_env.config import RulesConfig
from racko_env.engine import RackoGame
from racko_env.observation import DEFAULT, Layout, layout_for
from racko_env.rules import MAX_CARDS
from racko_env.vector.engine import IN_DISCARD as IN_DISCARD_CODE
from racko_env.vector.engine import IN_DRAW, IN_HAND, OUT_OF_PLAY, VectorGame


@dataclass
class Worlds:
    """W full round states of one rules config, as the arrays of ``VectorGame`` (batch axis 0).

    Piles run bottom..top in the first ``*_len`` entries of ``draw`` / ``discard`` [W, N].
    ``source`` [W] says which observation (row of the sampled batch) each world came from.
    """

    config: RulesConfig
    racks: np.ndarray  # [W, P, K], K the rules' rack_size
    public_slots: np.ndarray  # [W, P, K]
    slot_drawn: np.ndarray  # [W, P, K] bool
    slot_changed: np.ndarray  # [W, P, K]
    slot_out: np.ndarray  # [W, P, K]
    declined: np.ndarray  # [W, P]
    draw: np.ndarray  # [W, N]
    draw_len: np.ndarray
    discard: np.ndarray  # [W, N]
    discard_len: np.ndarray
    held: np.ndarray
    held_from_discard: np.ndarray
    current: np.ndarray
    dealer: np.ndarray
    phase: np.ndarray
    turn: np.ndarray
    draw_known: np.ndarray
    reshuffles: np.ndarray
    totals: np.ndarray  # [W, T]
    source: np.ndarray

    def __len__(self) -> int:
        return len(self.racks)

    def take(self, index: np.ndarray) -> Worlds:
        """The worlds at ``index`` (repeats allowed: one copy per candidate action, say)."""
        i = np.asarray(index, dtype=np.intp)
        arrays = {
            name: getattr(self, name)[i] for name in self.__dataclass_fields__ if name != "config"
        }
        return Worlds(self.config, **arrays)


def _cards(x: np.ndarray, n: int) -> np.ndarray:
    return np.rint(np.asarray(x, dtype=np.float64) * n).astype(np.intp)


def sample_worlds(
    obs: np.ndarray,
    k: int,
    rng: np.random.Generator | int | None,
    config: RulesConfig | None = None,
    discard_orders: Sequence[Sequence[int] | None] | None = None,
    draw_orders: Sequence[Sequence[int] | None] | None = None,
    **rules_options: object,
) -> Worlds:
    """``k`` worlds per observation: ``obs`` float32 [B, width] (or one [width]) of seats on
    turn, of any layout version of the game's layout (``layout_for(config)``; a version-1
    observation gives worlds without slot histories), at every size the rules allow (racks of
    3-10 slots, any legal deck, 1-4 players: in solitaire only the piles' orders are unknown).

    Without ``config`` the rules are ``rules_options`` (``num_players=1, rack_size=5``, ...);
    a rule-book-sized observation says its player count. Returns B * k worlds, those of
    observation i at rows i*k .. i*k + k - 1. ``rng`` (a Generator or a seed) makes the sample
    reproducible. ``discard_orders[i]`` (bottom..top, optional) fixes the discard pile's order;
    ``draw_orders[i]`` (bottom..top, optional) fixes a draw pile whose order is public. Raises
    ValueError naming the row for an observation no world fits (off turn, another player
    count, cards counted twice).
    """
    if config is not None and rules_options:
        raise ValueError("give either a RulesConfig or keyword rules options, not both")
    obs = np.asarray(obs, dtype=np.float32)
    if obs.ndim == 1:
        obs = obs[None, :]
    if obs.ndim != 2 or not len(obs):
        raise ValueError(f"obs must have shape (B, width) with B >= 1, got {obs.shape}")
    if config is None:
        config = _rules_of(obs, rules_options)
    lay = layout_for(config)
    if obs.shape[1] not in lay.sizes.values():
        widths = " or ".join(f"(B, {w})" for w in lay.sizes.values())
        raise ValueError(f"obs must have shape {widths} for {lay}, got {obs.shape}")
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k (worlds per observation) must be a positive int, got {k!r}")
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    seen = _Seen.read(obs, config, lay)
    for name, given in (("discard_orders", discard_orders), ("draw_orders", draw_orders)):
        if given is not None and len(given) != len(obs):
            raise ValueError(
                f"{name} needs one entry (or None) per observation: {len(obs)}, got {len(given)}"
            )
    worlds = _deal(seen, k, rng)
    if discard_orders is not None:
        _fix_discard_orders(worlds, seen, k, discard_orders)
    if draw_orders is not None:
        _fix_draw_orders(worlds, seen, k, draw_orders, rng)
    return worlds


def _rules_of(obs: np.ndarray, rules_options: dict[str, object]) -> RulesConfig:
    """The rules of observations given keyword options only; the player count, unless named, is
    read from the rule book's layout (the same width for 2-4 players)."""
    options = dict(rules_options)
    if "num_players" not in options and obs.shape[1] in DEFAULT.sizes.values():
        options["num_players"] = 1 + int(np.rint(obs[0, DEFAULT.OPP_PRESENT].sum()))
    return RulesConfig.from_dict(options)


@dataclass
class _Seen:
    """What B observations of seats on turn say, decoded (cards as ids, seat 0 the observer's)."""

    config: RulesConfig
    rack: np.ndarray  # [B, K]
    opp_pub: np.ndarray  # [B, o, K], 0 where the seat has not seen the card
    history: np.ndarray  # [4, B, o, K]: drawn, changed, out, declined (at slot 0)
    held: np.ndarray
    from_discard: np.ndarray
    top: np.ndarray
    draw_top: np.ndarray
    draw_len: np.ndarray
    phase: np.ndarray
    turn: np.ndarray
    in_discard: np.ndarray  # [B, N], column c - 1 is card c
    unseen: np.ndarray  # [B, N]
    totals: np.ndarray  # [B, T]

    @property
    def hidden(self) -> np.ndarray:
        """[B, o, K] the opponents' slots whose card the seat has not seen."""
        return self.opp_pub == 0

    @property
    def known_top(self) -> np.ndarray:
        return self.draw_top > 0

    @classmethod
    def read(cls, obs: np.ndarray, config: RulesConfig, lay: Layout) -> _Seen:
        """Decode and check ``obs``, observations of layout ``lay`` (``layout_for(config)``):
        ValueError naming the row no world fits."""
        b = len(obs)
        players = 1 + np.rint(obs[:, lay.OPP_PRESENT].sum(axis=1)).astype(np.intp)
        n_players, n, size = config.num_players, config.num_cards, config.rack_size
        bad = np.flatnonzero(players != n_players)
        if bad.size:
            raise ValueError(
                f"observation row {int(bad[0])} is of a {int(players[bad[0]])}-player game, "
                f"the rules say {n_players}"
            )
        off = np.flatnonzero(obs[:, lay.PHASE].max(axis=1) < 0.5)
        if off.size:
            raise ValueError(
                f"observation row {int(off[0])} is not the seat on turn (no decision is asked); "
                "worlds are sampled for the seat on turn"
            )
        o = n_players - 1

        def blocks(field: slice, scale: int) -> np.ndarray:  # [B, o, K] of the opponents
            return _cards(obs[:, field], scale).reshape(b, lay.opponents, size)[:, :o]

        history = np.zeros((4, b, o, size), dtype=np.int64)
        if obs.shape[1] == lay.size:  # version 2: the slots' public history
            history[0] = blocks(lay.OPP_SLOT_DRAWN, 1)
            history[1] = blocks(lay.OPP_SLOT_CHANGED, config.turn_limit)
            history[2] = blocks(lay.OPP_SLOT_OUT, n)
            history[3, :, :, 0] = _cards(obs[:, lay.OPP_DECLINED], n)[:, :o]
        own = obs[:, [lay.OWN_SCORE]]  # scores / target, per seat (team totals with partners)
        scores = _cards(
            np.concatenate([own, obs[:, lay.OPP_SCORES][:, :o]], axis=1), config.target_score
        )
        totals = np.zeros((b, config.num_teams), dtype=np.int64)
        for p in range(n_players):
            totals[:, config.team_of(p)] = scores[:, p]
        seen = cls(
            config=config,
            rack=_cards(obs[:, lay.RACK], n),
            opp_pub=blocks(lay.OPP_SLOTS, n),
            history=history,
            held=_cards(obs[:, lay.HELD], n),
            from_discard=obs[:, lay.HELD_FROM_DISCARD] > 0.5,
            top=_cards(obs[:, lay.DISCARD_TOP], n),
            draw_top=_cards(obs[:, lay.DRAW_TOP_KNOWN], n),
            draw_len=_cards(obs[:, lay.DRAW_SIZE], n),
            phase=obs[:, lay.PHASE].argmax(axis=1),
            turn=np.rint(obs[:, lay.TURN].astype(np.float64) * config.turn_limit).astype(np.intp),
            in_discard=obs[:, lay.IN_DISCARD][:, :n] > 0.5,
            unseen=obs[:, lay.UNSEEN][:, :n] > 0.5,
            totals=totals,
        )
        seen.check()
        return seen

    def check(self) -> None:
        """The unseen cards fill the unknown slots and the draw pile exactly."""
        n_hidden = self.hidden.reshape(len(self.rack), -1).sum(axis=1)
        for i in range(len(self.rack)):
            if self.unseen[i].sum() != n_hidden[i] + self.draw_len[i]:
                raise ValueError(
                    f"observation row {i}: {int(self.unseen[i].sum())} unseen cards do not fill "
                    f"{int(n_hidden[i])} unknown slots and a draw pile of {int(self.draw_len[i])}"
                )
            if self.known_top[i] and not self.unseen[i, self.draw_top[i] - 1]:
                raise ValueError(f"observation row {i}: the known draw-pile top is not unseen")


def _deal(seen: _Seen, k: int, rng: np.random.Generator) -> Worlds:
    """Repeat each observation ``k`` times, then deal its unseen cards at random per world."""
    config = seen.config
    n_players, n, size = config.num_players, config.num_cards, config.rack_size
    o = n_players - 1
    b = len(seen.rack)
    w = b * k
    src = np.repeat(np.arange(b), k)
    ids = np.arange(1, n + 1)
    # The known draw-pile top is placed by hand; the rest of the unseen cards are shuffled.
    pool = seen.unseen[src].copy()
    kt = seen.known_top[src]
    draw_top = seen.draw_top[src]
    pool[np.flatnonzero(kt), draw_top[kt] - 1] = False
    keys = rng.random((w, n))
    keys[~pool] = 2.0
    perm = ids[np.argsort(keys, axis=1, kind="stable")]  # the pool's cards first, in random order

    shape = (w, n_players, size)
    racks = np.zeros(shape, dtype=np.int16)
    public_slots = np.zeros_like(racks)
    racks[:, 0] = seen.rack[src]
    opp_pub = seen.opp_pub[src]
    public_slots[:, 1:] = opp_pub
    slot_drawn, slot_changed = np.zeros(shape, dtype=bool), np.zeros(shape, dtype=np.int64)
    slot_out, declined = np.zeros(shape, dtype=np.int16), np.zeros((w, n_players), dtype=np.int16)
    history = seen.history[:, src]
    slot_drawn[:, 1:] = history[0] > 0
    slot_changed[:, 1:] = history[1]
    slot_out[:, 1:] = history[2]
    declined[:, 1:] = history[3][:, :, 0]
    hid = seen.hidden[src].reshape(w, -1)
    rank = np.cumsum(hid, axis=1) - 1  # the j-th unknown slot takes the j-th shuffled card
    opp = np.where(hid, np.take_along_axis(perm, np.maximum(rank, 0), axis=1), 0)
    racks[:, 1:] = (opp.reshape(w, o, size) + opp_pub).astype(np.int16)

    # The draw pile: the shuffled cards after those of the unknown slots, the known top on top.
    nh = hid.sum(axis=1)
    dl = seen.draw_len[src]
    col = np.arange(n)[None, :]
    drawn = np.take_along_axis(perm, np.minimum(nh[:, None] + col, n - 1), axis=1)
    draw = np.where(col < dl[:, None], drawn, 0).astype(np.int16)
    rows_kt = np.flatnonzero(kt)
    draw[rows_kt, dl[rows_kt] - 1] = draw_top[rows_kt]

    # The discard pile: its cards in random order below the known top.
    top = seen.top[src]
    disc_set = seen.in_discard[src].copy()
    has_top = top > 0
    disc_set[np.flatnonzero(has_top), top[has_top] - 1] = False
    dkeys = rng.random((w, n))
    dkeys[~disc_set] = 2.0
    dperm = ids[np.argsort(dkeys, axis=1, kind="stable")]
    below = disc_set.sum(axis=1)
    discard = np.where(col < below[:, None], dperm, 0).astype(np.int16)
    rows_top = np.flatnonzero(has_top)
    discard[rows_top, below[rows_top]] = top[rows_top]

    turn = seen.turn[src]
    return Worlds(
        config=config,
        racks=racks,
        public_slots=public_slots,
        slot_drawn=slot_drawn,
        slot_changed=slot_changed,
        slot_out=slot_out,
        declined=declined,
        draw=draw,
        draw_len=dl.astype(np.intp),
        discard=discard,
        discard_len=(below + has_top).astype(np.intp),
        held=seen.held[src].astype(np.intp),
        held_from_discard=seen.from_discard[src],
        current=np.zeros(w, dtype=np.intp),
        dealer=((0 - 1 - turn) % n_players).astype(np.intp),  # seat 0 on turn after `turn` turns
        phase=seen.phase[src].astype(np.intp),
        turn=turn,
        draw_known=kt.copy(),
        reshuffles=kt.astype(np.intp),
        totals=seen.totals[src],
        source=src,
    )


def _fix_discard_orders(
    worlds: Worlds, seen: _Seen, k: int, orders: Sequence[Sequence[int] | None]
) -> None:
    """Put each given discard pile (bottom..top) into the worlds of its observation."""
    for i, order in enumerate(orders):
        if order is None:
            continue
        order = [int(c) for c in order]
        length = int(worlds.discard_len[i * k])
        current = sorted(worlds.discard[i * k, :length].tolist())
        if len(order) != length or sorted(order) != current:
            raise ValueError(
                f"discard_orders[{i}] must list the discard pile's {length} cards "
                f"bottom..top, got {order}"
            )
        if seen.top[i] > 0 and order[-1] != seen.top[i]:
            raise ValueError(f"discard_orders[{i}] must end with the top card {int(seen.top[i])}")
        worlds.discard[i * k : (i + 1) * k, : len(order)] = order


def _fix_draw_orders(
    worlds: Worlds,
    seen: _Seen,
    k: int,
    orders: Sequence[Sequence[int] | None],
    rng: np.random.Generator,
) -> None:
    """Put each given draw pile (bottom..top) into the worlds of its observation; the rest of
    its unseen cards go to the unknown slots, shuffled per world."""
    hidden = seen.hidden
    for i, order in enumerate(orders):
        if order is None:
            continue
        order = [int(c) for c in order]
        length = int(worlds.draw_len[i * k])
        if len(order) != length:
            raise ValueError(
                f"draw_orders[{i}] must list the draw pile's {length} cards bottom..top, "
                f"got {order}"
            )
        if not all(seen.unseen[i, c - 1] for c in order):
            raise ValueError(f"draw_orders[{i}] lists cards the seat has seen elsewhere")
        if seen.known_top[i] and order[-1] != seen.draw_top[i]:
            raise ValueError(f"draw_orders[{i}] must end with the known top {seen.draw_top[i]}")
        rest = np.setdiff1d(np.flatnonzero(seen.unseen[i]) + 1, order)
        rows = np.arange(i * k, (i + 1) * k)
        for r in rows:
            worlds.racks[r, 1:][hidden[i]] = rng.permutation(rest)
        worlds.draw[rows, : len(order)] = order


def from_game(game: RackoGame) -> Worlds:
    """The one true world of a reference game (a perfect-information oracle's "sample")."""
    piles = {}
    for name in ("draw", "discard"):
        pile = getattr(game, name)
        piles[name] = np.zeros((1, game.num_cards), dtype=np.int16)
        piles[name][0, : len(pile)] = pile
        piles[f"{name}_len"] = np.array([len(pile)])
    values = {"held": game.held or 0, "phase": int(game.phase), "source": 0}
    arrays = {
        name: np.array([values[name] if name in values else getattr(game, name)])
        for name in Worlds.__dataclass_fields__
        if name not in ("config", *piles)
    }
    return Worlds(config=game.config, **piles, **arrays)


def load_worlds(game: VectorGame, worlds: Worlds, games: np.ndarray | None = None) -> None:
    """Write ``worlds`` into games ``games`` (default: the first len(worlds)) of ``game``.

    Every array of the batched engine is set, the derived ones too (``owner``: where each card is;
    ``public``: the card sits in a slot everyone saw it go into), so play continues from there.
    """
    if game.config != worlds.config:
        raise ValueError(f"the worlds are for rules {worlds.config}, the engine has {game.config}")
    w = len(worlds)
    g = np.arange(w) if games is None else np.asarray(games, dtype=np.intp)
    if len(g) != w:
        raise ValueError(f"need one game per world: {w} worlds, {len(g)} games")
    n_players, n = game.num_players, game.num_cards
    for name in worlds.__dataclass_fields__:
        if name not in ("config", "source"):  # every other field is an engine array
            getattr(game, name)[g] = getattr(worlds, name)
    game.round_over[g] = False
    game.truncated[g] = False
    game.racko_player[g] = -1
    game.game_over[g] = False
    game.game_winner[g] = -1
    game.last_round_points[g] = 0
    owner = np.full((w, MAX_CARDS + 1), OUT_OF_PLAY, dtype=np.int8)
    rows = np.arange(w)[:, None]
    col = np.arange(n)[None, :]
    draw_cards = np.where(col < worlds.draw_len[:, None], worlds.draw, 0)
    owner[rows, draw_cards] = IN_DRAW
    disc_cards = np.where(col < worlds.discard_len[:, None], worlds.discard, 0)
    owner[rows, disc_cards] = IN_DISCARD_CODE
    for p in range(n_players):
        owner[rows, worlds.racks[:, p]] = p
    held = np.flatnonzero(worlds.held > 0)
    owner[held, worlds.held[held]] = IN_HAND
    owner[:, 0] = OUT_OF_PLAY
    owner[:, n + 1 :] = OUT_OF_PLAY
    public = np.zeros((w, MAX_CARDS + 1), dtype=bool)
    pub = worlds.public_slots.reshape(w, -1)
    public[np.arange(w)[:, None], pub] = pub > 0
    public[:, 0] = False
    game.owner[g] = owner
    game.public[g] = public
    if (worlds.phase > int(Phase.PLACE)).any():
        raise ValueError("worlds must be states of a round in play (a decision pending)")
