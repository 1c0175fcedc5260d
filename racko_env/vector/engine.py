"""The Rack-O rules for many games at once, as numpy arrays (structure of arrays).

``VectorGame`` holds B games of the same rules options and applies one decision per game in one
call. It implements exactly the rules of ``racko_env.engine.RackoGame`` (the reference: the
differential tests replay both from the same deals and shuffles and compare every observation,
mask, reward and episode end). Piles are fixed-width arrays with a length per game (index 0 = the
bottom, ``len - 1`` = the top), so a step is a few dozen vectorized operations whatever B is.

Every call takes ``games``: the indices of the games it applies to (default: all of them), so that
callers can advance a subset (e.g. only the games where a given opponent policy is on turn).
"""

from __future__ import annotations

import numpy as np

from racko_env.actions import (
    ACTION_NAMES,
    DISCARD,
    DRAW_PILE,
    KEEP,
    NUM_ACTIONS,
    TAKE_DISCARD,
    Phase,
    legal_by_phase,
)
from racko_env.config import RulesConfig
from racko_env.rules import CARD_POINTS, MAX_CARDS, RACK_SIZE, RUN_BONUS, racko_score
from racko_env.vector.chance import ChanceSource, NumpyChance


def legal_table(rack_size: int = RACK_SIZE) -> np.ndarray:
    """bool [phase, action]: the read-only action mask of the player on turn, by phase, for racks
    of ``rack_size`` slots."""
    table = np.zeros((len(Phase), NUM_ACTIONS), dtype=bool)
    for phase, legal in legal_by_phase(rack_size).items():
        table[phase, list(legal)] = True
    table.flags.writeable = False
    return table


# LEGAL[phase, action]: the action mask of the player on turn, by phase (10-slot racks; a game's
# own is ``VectorGame.legal``).
LEGAL = legal_table()

# Run bonus by longest-run length (0..10), for Bonus Rack-O.
_RUN_BONUS = np.array([RUN_BONUS.get(min(r, 6), 0) for r in range(RACK_SIZE + 1)], dtype=np.int64)

_DRAW, _KOD, _PLACE = int(Phase.DRAW), int(Phase.KEEP_OR_DISCARD), int(Phase.PLACE)

# Codes of ``VectorGame.owner`` (seats 0-3 mean "in that seat's rack").
IN_DRAW, IN_DISCARD, IN_HAND, OUT_OF_PLAY = 4, 5, 6, 7


class VectorGame:
    """B games of Rack-O under one ``RulesConfig``; the batched twin of ``RackoGame``.

    State (all arrays have the batch on axis 0; K = ``rack_size``, 10 by the rule book):
    ``racks`` [B, P, K], ``public_slots`` [B, P, K],
    ``draw``/``discard`` [B, N] with ``draw_len``/``discard_len``, ``owner`` [B, 61] (where each
    card is: a seat 0-3 for a rack, ``IN_DRAW``, ``IN_DISCARD``, ``IN_HAND``, ``OUT_OF_PLAY``),
    ``public`` [B, 61] (the card sits in a rack slot where everyone saw it go in), the slots'
    public history ``slot_drawn`` / ``slot_changed`` / ``slot_out`` [B, P, 10] and ``declined``
    [B, P] (as ``RackoGame``'s), ``held`` (0 = none), ``held_from_discard``, ``current``,
    ``dealer``, ``phase``, ``turn``,
    ``draw_known``, ``round_over``, ``truncated``, ``racko_player`` (-1 = none), ``totals`` [B, T],
    ``last_round_points`` [B, P], ``game_over``, ``game_winner`` (-1 = none), ``round_number``.
    """

    def __init__(
        self,
        num_games: int,
        config: RulesConfig | None = None,
        chance: ChanceSource | None = None,
        seed: int | None = None,
        **options: object,
    ) -> None:
        if isinstance(num_games, bool) or not isinstance(num_games, int | np.integer):
            raise TypeError(f"num_games must be an int, got {num_games!r}")
        if num_games < 1:
            raise ValueError(f"num_games must be at least 1, got {num_games}")
        if config is not None and options:
            raise ValueError("give either a RulesConfig or keyword rules options, not both")
        if chance is not None and seed is not None:
            raise ValueError("give either a chance source or a seed, not both")
        self.config = config if config is not None else RulesConfig.from_dict(options)
        self.chance: ChanceSource = chance if chance is not None else NumpyChance(seed)
        self.num_games = b = int(num_games)
        self.num_players = n = self.config.num_players
        self.num_cards = cards = self.config.num_cards
        self.rack_size = size = self.config.rack_size
        self.legal = LEGAL if size == RACK_SIZE else legal_table(size)
        self.num_teams = teams = self.config.num_teams
        self.team_of = np.array([self.config.team_of(p) for p in range(n)], dtype=np.intp)
        i16 = np.int16
        self.racks = np.zeros((b, n, size), dtype=i16)
        self.public_slots = np.zeros((b, n, size), dtype=i16)
        self.slot_drawn = np.zeros((b, n, size), dtype=bool)
        self.slot_changed = np.zeros((b, n, size), dtype=np.int64)  # turn limits are unbounded
        self.slot_out = np.zeros((b, n, size), dtype=i16)
        self.declined = np.zeros((b, n), dtype=i16)
        self.draw = np.zeros((b, cards), dtype=i16)
        self.discard = np.zeros((b, cards), dtype=i16)
        self.draw_len = np.zeros(b, dtype=np.intp)
        self.discard_len = np.zeros(b, dtype=np.intp)
        self.owner = np.full((b, MAX_CARDS + 1), OUT_OF_PLAY, dtype=np.int8)
        self.public = np.zeros((b, MAX_CARDS + 1), dtype=bool)
        self.held = np.zeros(b, dtype=np.intp)
        self.held_from_discard = np.zeros(b, dtype=bool)
        self.current = np.zeros(b, dtype=np.intp)
        self.dealer = np.zeros(b, dtype=np.intp)
        self.phase = np.zeros(b, dtype=np.intp)
        self.turn = np.zeros(b, dtype=np.intp)
        self.draw_known = np.zeros(b, dtype=bool)
        self.round_over = np.zeros(b, dtype=bool)
        self.truncated = np.zeros(b, dtype=bool)
        self.racko_player = np.full(b, -1, dtype=np.intp)
        self.totals = np.zeros((b, teams), dtype=np.int64)
        self.last_round_points = np.zeros((b, n), dtype=np.int64)
        self.game_over = np.zeros(b, dtype=bool)
        self.game_winner = np.full(b, -1, dtype=np.intp)
        self.round_number = np.zeros(b, dtype=np.intp)
        self.reshuffles = np.zeros(b, dtype=np.intp)
        self._all = np.arange(b, dtype=np.intp)
        # Deal geometry: the k-th card dealt goes to seat offset k % n after the dealer, slot
        # K - 1 - k//n.
        k = np.arange(size * n)
        self._deal_offset = 1 + k % n
        self._deal_slot = size - 1 - k // n
        self._cols = np.arange(cards)
        self.new_game()

    # ----------------------------------------------------------------- helpers

    def _games(self, games: np.ndarray | list[int] | None, distinct: bool = False) -> np.ndarray:
        """The game indices of a call, checked: integers in range, and ``distinct`` for calls that
        change games (a repeated index would apply two decisions to one game at once, half over
        the other's writes, and corrupt it: a card lost or doubled)."""
        if games is None:
            return self._all
        raw = np.asarray(games)
        if raw.size and (raw.dtype.kind not in "iu"):
            raise TypeError(
                f"game indices must be integers (an index array, not a mask), got dtype {raw.dtype}"
            )
        g = raw.astype(np.intp, copy=False).reshape(-1)
        if g.size and (g.min() < 0 or g.max() >= self.num_games):
            raise IndexError(f"game indices must be in 0..{self.num_games - 1}, got {g.tolist()}")
        # Increasing indices (what np.flatnonzero gives every caller in this package) are distinct
        # without a sort; anything else is checked in full.
        if distinct and g.size > 1 and not (g[1:] > g[:-1]).all():
            values, counts = np.unique(g, return_counts=True)
            if (counts > 1).any():
                raise ValueError(
                    f"game indices must be distinct in a call that changes games; repeated: "
                    f"{values[counts > 1].tolist()}"
                )
        return g

    def _decks(self, g: np.ndarray, deck_orders: np.ndarray | None) -> np.ndarray:
        cards = self.num_cards
        if deck_orders is None:
            return self.chance.deck_orders(g, cards)
        decks = np.asarray(deck_orders)
        if decks.shape != (len(g), cards):
            raise ValueError(f"deck_orders must have shape ({len(g)}, {cards}), got {decks.shape}")
        if not (np.sort(decks, axis=1) == np.arange(1, cards + 1)).all():
            raise ValueError(
                f"every row of deck_orders must be a permutation of the cards 1..{cards}"
            )
        return decks

    # ----------------------------------------------------------------- game flow

    def new_game(
        self,
        games: np.ndarray | list[int] | None = None,
        first_dealer: np.ndarray | list[int] | int | None = None,
        deck_orders: np.ndarray | None = None,
    ) -> None:
        """Start new games (scores to zero) and deal round 1; chance fills what is not given."""
        g = self._games(games, distinct=True)
        n = self.num_players
        if first_dealer is None:
            dealers = np.asarray(self.chance.first_dealers(g, n, self.num_cards), dtype=np.intp)
        else:
            dealers = np.broadcast_to(np.asarray(first_dealer, dtype=np.intp), g.shape)
            if dealers.size and (dealers.min() < 0 or dealers.max() >= n):
                raise ValueError(f"first_dealer must be a seat in 0..{n - 1}, got {first_dealer!r}")
        self.totals[g] = 0
        self.round_number[g] = 0
        self.game_over[g] = False
        self.game_winner[g] = -1
        self.last_round_points[g] = 0
        self.dealer[g] = dealers
        self._deal(g, self._decks(g, deck_orders))

    def start_round(
        self, games: np.ndarray | list[int] | None = None, deck_orders: np.ndarray | None = None
    ) -> None:
        """Deal the next round of games whose round is over; the deal passes to the left."""
        g = self._games(games, distinct=True)
        if self.game_over[g].any():
            raise RuntimeError(f"games {g[self.game_over[g]].tolist()} are over; use new_game()")
        if not self.round_over[g].all():
            raise RuntimeError(f"games {g[~self.round_over[g]].tolist()} are still being played")
        self.dealer[g] = (self.dealer[g] + 1) % self.num_players
        self._deal(g, self._decks(g, deck_orders))

    def _deal(self, g: np.ndarray, decks: np.ndarray) -> None:
        n, cards = self.num_players, self.num_cards
        dealt = self.rack_size * n
        seats = (self.dealer[g][:, None] + self._deal_offset[None, :]) % n
        self.racks[g[:, None], seats, self._deal_slot[None, :]] = decks[:, :dealt]
        self.discard[g, 0] = decks[:, dealt]
        self.discard_len[g] = 1
        rest = cards - dealt - 1
        self.draw[g, :rest] = decks[:, :dealt:-1]  # bottom = last card of the deck
        self.draw_len[g] = rest
        rows = g[:, None]
        self.owner[rows, decks[:, :dealt]] = seats
        self.owner[g, decks[:, dealt]] = IN_DISCARD
        self.owner[rows, decks[:, dealt + 1 :]] = IN_DRAW
        self.public[g] = False
        self.public_slots[g] = 0
        self.slot_drawn[g] = False
        self.slot_changed[g] = 0
        self.slot_out[g] = 0
        self.declined[g] = 0
        self.current[g] = (self.dealer[g] + 1) % n
        self.phase[g] = _DRAW
        self.held[g] = 0
        self.held_from_discard[g] = False
        self.turn[g] = 0
        self.round_over[g] = False
        self.truncated[g] = False
        self.racko_player[g] = -1
        self.draw_known[g] = False
        self.reshuffles[g] = 0
        self.round_number[g] += 1

    # ----------------------------------------------------------------- moves

    def legal_mask(self, games: np.ndarray | list[int] | None = None) -> np.ndarray:
        """bool [len(games), NUM_ACTIONS]: the legal actions of the player on turn in each game."""
        return self.legal[self.phase[self._games(games)]]

    def step(self, actions: np.ndarray, games: np.ndarray | list[int] | None = None) -> None:
        """Apply one decision of the player on turn in each of ``games``.

        An illegal action raises ``ValueError`` naming the game, the action and the legal ones,
        before anything changes. ``games`` must be distinct (one decision per game per call).
        """
        g = self._games(games, distinct=True)
        a = np.asarray(actions).reshape(-1)
        if a.shape != g.shape:
            raise ValueError(f"need one action per game: {len(g)} games, got {a.shape[0]} actions")
        if a.dtype.kind not in "iu":
            if a.dtype.kind != "f" or not (a == np.round(a)).all():
                raise ValueError(f"actions must be integer action ids, got dtype {a.dtype}")
        a = a.astype(np.intp, copy=False)
        ph = self.phase[g]
        ok = (a >= 0) & (a < NUM_ACTIONS)
        ok[ok] = self.legal[ph[ok], a[ok]]
        if not ok.all():
            self._raise_illegal(g, a, ph, ok)

        draw_pile = a == DRAW_PILE
        if draw_pile.any():
            i = g[draw_pile]
            dl = self.discard_len[i]
            passed = self.discard[i, np.maximum(dl - 1, 0)]
            self.declined[i, self.current[i]] = np.where(dl > 0, passed, 0)
            top = self.draw_len[i] - 1
            card = self.draw[i, top]
            self.held[i] = card
            self.owner[i, card] = IN_HAND
            self.draw_len[i] = top
            self.phase[i] = _KOD
        take = a == TAKE_DISCARD
        if take.any():
            j = g[take]
            top = self.discard_len[j] - 1
            card = self.discard[j, top]
            self.held[j] = card
            self.held_from_discard[j] = True
            self.discard_len[j] = top
            self.owner[j, card] = IN_HAND
            self.phase[j] = _PLACE
        keep = a == KEEP
        if keep.any():
            self.phase[g[keep]] = _PLACE
        place = a < RACK_SIZE
        ends = place | (a == DISCARD)
        if ends.any():
            self._end_turn(g[ends], a[ends])

    def _raise_illegal(self, g: np.ndarray, a: np.ndarray, ph: np.ndarray, ok: np.ndarray) -> None:
        bad = int(np.flatnonzero(~ok)[0])
        game, action, phase = int(g[bad]), int(a[bad]), Phase(int(ph[bad]))
        name = ACTION_NAMES[action] if 0 <= action < NUM_ACTIONS else "not an action id"
        legal = legal_by_phase(self.rack_size)[phase]
        if not legal:
            raise ValueError(
                f"illegal action {action} ({name}) in game {game}: the round is over and no action "
                "is legal"
            )
        raise ValueError(
            f"illegal action {action} ({name}) in game {game} for player "
            f"{int(self.current[game])} in phase {phase.name}; legal actions are {list(legal)} "
            f"({', '.join(ACTION_NAMES[x] for x in legal)})"
        )

    def _end_turn(self, e: np.ndarray, a: np.ndarray) -> None:
        """Finish the turns of games ``e``: place or discard, Rack-O check, limit, refill."""
        held = self.held[e]
        out = held.copy()  # the card that ends each turn face up
        place = a < RACK_SIZE
        if place.any():
            q, slot, hq = e[place], a[place], held[place]
            cq = self.current[q]
            old = self.racks[q, cq, slot]
            out[place] = old
            self.racks[q, cq, slot] = hq
            seen = self.held_from_discard[q]
            self.public_slots[q, cq, slot] = np.where(seen, hq, 0)
            self.slot_drawn[q, cq, slot] = ~seen
            self.slot_changed[q, cq, slot] = self.turn[q] + 1  # the turn that ends now
            self.slot_out[q, cq, slot] = old
            self.owner[q, hq] = cq
            self.public[q, old] = False
            self.public[q, hq] = seen
        dl = self.discard_len[e]
        self.discard[e, dl] = out
        self.discard_len[e] = dl + 1
        self.owner[e, out] = IN_DISCARD
        self.held[e] = 0
        self.held_from_discard[e] = False
        turn = self.turn[e] + 1
        self.turn[e] = turn

        cur = self.current[e]
        rack = self.racks[e, cur]
        racko = (rack[:, 1:] > rack[:, :-1]).all(axis=1)
        min_run = self.config.min_run
        if min_run > 1 and racko.any():
            racko[racko] = _longest_run(rack[racko]) >= min_run
        limit = turn >= self.config.turn_limit
        over = racko | limit
        if over.any():
            self._score_round(e[over], np.where(racko[over], cur[over], -1))
            cont = ~over
            e, cur = e[cont], cur[cont]
        empty = self.draw_len[e] == 0
        if empty.any():
            self._refill(e[empty])
        self.current[e] = (cur + 1) % self.num_players
        self.phase[e] = _DRAW

    def _refill(self, r: np.ndarray) -> None:
        """The discard pile except its top becomes the draw pile: shuffled, or turned over."""
        m = self.discard_len[r] - 1
        top = self.discard[r, m]
        under = self.discard[r]  # [k, N] copy; entries >= m are ignored
        if self.config.empty_pile == "shuffle":
            src = np.asarray(self.chance.refill_orders(r, m, self.num_cards), dtype=np.intp)
        else:  # flip: the bottom discard becomes the top of the draw pile
            src = np.maximum(m[:, None] - 1 - self._cols[None, :], 0)
            self.draw_known[r] = True
        self.draw[r] = np.take_along_axis(under, src, axis=1)
        self.draw_len[r] = m
        self.discard[r, 0] = top
        self.discard_len[r] = 1
        owner = self.owner[r]
        owner[owner == IN_DISCARD] = IN_DRAW
        owner[np.arange(len(r)), top] = IN_DISCARD
        self.owner[r] = owner
        self.reshuffles[r] += 1

    def _score_round(self, s: np.ndarray, racko_player: np.ndarray) -> None:
        racks = self.racks[s]  # [k, P, K]
        asc = racks[:, :, 1:] > racks[:, :, :-1]
        prefix = np.where(asc.all(axis=2), self.rack_size, asc.argmin(axis=2) + 1)
        points = CARD_POINTS * prefix.astype(np.int64)
        won = racko_player >= 0
        if won.any():
            rows = np.flatnonzero(won)
            seat = racko_player[won]
            bonus = racko_score(self.rack_size)
            if self.config.bonus:
                bonus = bonus + _RUN_BONUS[_longest_run(racks[rows, seat])]
            points[rows, seat] = bonus
        self.last_round_points[s] = points
        if self.config.partners:
            self.totals[s] += points[:, :2] + points[:, 2:]  # seats 0+2, 1+3
        else:
            self.totals[s] += points
        self.round_over[s] = True
        self.truncated[s] = ~won
        self.racko_player[s] = racko_player
        self.phase[s] = int(Phase.ROUND_OVER)
        totals = self.totals[s]
        best = totals.max(axis=1)
        leaders = (totals == best[:, None]).sum(axis=1)
        done = (best >= self.config.target_score) & (leaders == 1)
        if done.any():
            d = s[done]
            self.game_over[d] = True
            self.game_winner[d] = totals[done].argmax(axis=1)
            self.phase[d] = int(Phase.GAME_OVER)

    # ----------------------------------------------------------------- views

    @property
    def in_discard(self) -> np.ndarray:
        """bool [B, 61]: card c is in the discard pile now."""
        return self.owner == IN_DISCARD

    def round_team_points(self, games: np.ndarray | list[int] | None = None) -> np.ndarray:
        """Last round's points per seat [k, P]; with partners each seat shows its team's sum."""
        pts = self.last_round_points[self._games(games)]
        if not self.config.partners:
            return pts.copy()
        team = pts[:, :2] + pts[:, 2:]
        return team[:, self.team_of]

    def round_winners(self, games: np.ndarray | list[int] | None = None) -> np.ndarray:
        """bool [k, P]: seats on a winning team of the round just ended (``RackoGame``'s
        ``round_winners``, seat by seat)."""
        g = self._games(games)
        rp = self.racko_player[g]
        by_racko = self.team_of[None, :] == self.team_of[np.maximum(rp, 0)][:, None]
        points = self.round_team_points(g)
        by_points = points == points.max(axis=1, keepdims=True)
        return np.where((rp >= 0)[:, None], by_racko, by_points)

    def scores(self, games: np.ndarray | list[int] | None = None) -> np.ndarray:
        """Game totals per seat [k, P] (with partners, each seat shows its team's total)."""
        return self.totals[self._games(games)][:, self.team_of]

    def discard_pile(self, game: int) -> list[int]:
        """One game's discard pile, bottom first (for tests and tools)."""
        return self.discard[game, : self.discard_len[game]].tolist()

    def draw_pile(self, game: int) -> list[int]:
        """One game's draw pile, bottom first, top last (for tests and tools)."""
        return self.draw[game, : self.draw_len[game]].tolist()


def _longest_run(racks: np.ndarray) -> np.ndarray:
    """Longest run of consecutive numbers in adjacent slots, per rack of a [k, K] array."""
    step = racks[:, 1:] == racks[:, :-1] + 1
    best = np.ones(len(racks), dtype=np.intp)
    cur = np.ones(len(racks), dtype=np.intp)
    for i in range(step.shape[1]):
        cur = np.where(step[:, i], cur + 1, 1)
        np.maximum(best, cur, out=best)
    return best
