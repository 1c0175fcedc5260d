"""Every seat's observation (reference: ``observation.encode``) kept current step by step.

``observation.encode`` builds a seat's view from the whole game state. The AEC env needs a view on
every step, and a full encode costs more than the rest of the step, so ``SeatViews`` applies only
what a move changed (a few entries per seat). Tests check it against ``encode`` after every step of
many random games (``tests/env/test_seat_views.py``); any doubt (a new round, an unknown transition)
falls back to a full encode.
"""

from __future__ import annotations

import numpy as np

from racko_env.actions import Phase
from racko_env.engine import RackoGame
from racko_env.observation import (
    CARD_VALUES,
    DEFAULT,
    DISCARD_TOP,
    DRAW_SIZE,
    DRAW_TOP_KNOWN,
    HELD,
    HELD_FROM_DISCARD,
    IN_DISCARD,
    OBS_SIZE,
    OPP_DECLINED,
    OPP_SLOT_CHANGED,
    OPP_SLOT_DRAWN,
    OPP_SLOT_OUT,
    OPP_SLOTS,
    PHASE,
    RACK,
    TURN,
    UNSEEN,
    encode,
    layout_for,
)
from racko_env.rules import RACK_SIZE

_IN0 = IN_DISCARD.start - 1  # column of card c in the discard-pile block is _IN0 + c
_UN0 = UNSEEN.start - 1
_PH = PHASE.start
_RACK0 = RACK.start
_DRAW = int(Phase.DRAW)  # a plain int: comparing with it skips the enum's attribute lookup
# Where a slot's history fields sit relative to its `opp_slots` entry (the blocks line up).
_TO_DRAWN = OPP_SLOT_DRAWN.start - OPP_SLOTS.start
_TO_CHANGED = OPP_SLOT_CHANGED.start - OPP_SLOTS.start
_TO_OUT = OPP_SLOT_OUT.start - OPP_SLOTS.start


class SeatViews:
    """The observation vectors of all seats of one game, as rows of one array.

    Updates write single entries through a flat ``memoryview`` of the rows (a Python float stored
    as float32, as numpy would round it), which costs a fraction of a numpy scalar assignment.
    """

    def __init__(self, game: RackoGame, include_scores: bool) -> None:
        self.game = game
        self.include_scores = include_scores
        n = game.num_players
        # A game of another layout (a smaller rack, solitaire) is encoded in full at every step.
        layout = layout_for(game.config)
        self._full = layout is not DEFAULT
        self.rows = np.zeros((n, layout.size), dtype=np.float32)
        self._bind_views()
        self._bases = [p * OBS_SIZE for p in range(n)]
        # Per seat, the flat positions of the entries every move may change (the card-indexed
        # blocks as the position of card 0), so that an update adds nothing but a card.
        self._cols = [
            (b + DISCARD_TOP, b + _IN0, b + _UN0, b + TURN, b + DRAW_SIZE, b + DRAW_TOP_KNOWN)
            for b in self._bases
        ]
        # Where the mover's slots sit in every other seat's row: seat mover+k sees the mover as
        # its opponent number n-k.
        self._opp_slot_bases = [
            [
                ((mover + k) % n) * OBS_SIZE + OPP_SLOTS.start + (n - k - 1) * RACK_SIZE
                for k in range(1, n)
            ]
            for mover in range(n)
        ]
        # Where the mover's passed-over discard sits in every other seat's row.
        self._declined_cols = [
            [((mover + k) % n) * OBS_SIZE + OPP_DECLINED.start + n - k - 1 for k in range(1, n)]
            for mover in range(n)
        ]
        self._values = CARD_VALUES[game.num_cards].tolist()  # float32 values as Python floats
        self.resync()

    def _bind_views(self) -> None:
        """Views onto ``rows`` (rebuilt for a copy, so that they see the copy's rows)."""
        self.row_views: list[np.ndarray] = list(self.rows)  # seat p's row, without indexing
        self._flat = memoryview(self.rows).cast("B").cast("f")  # entry (p, i) at p * OBS_SIZE + i
        self._discard_block = self.rows[:, IN_DISCARD]
        self._unseen_block = self.rows[:, UNSEEN]

    def __getstate__(self) -> dict:
        """Copies and pickles carry the rows; the views onto them are rebuilt (a memoryview can't be copied)."""
        state = self.__dict__.copy()
        for name in ("row_views", "_flat", "_discard_block", "_unseen_block"):
            del state[name]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_views()

    def resync(self) -> None:
        """Full re-encode of every seat (new round, or anything unusual)."""
        game = self.game
        for p in range(game.num_players):
            self.rows[p] = encode(game, p, self.include_scores)
        self._round = game.round_number
        self._log_len = len(game.log)
        self._reshuffles = game.reshuffles
        self._phase = game.phase
        self._current = game.current

    def update(self) -> None:
        """Bring the rows up to date after one ``game.apply``."""
        game = self.game
        if game.round_number != self._round or game.round_over or self._full:
            self.resync()
            return
        f = self._flat
        bases = self._bases
        value = self._values
        mover = self._current
        me = bases[mover]
        before = self._phase
        now = game.phase
        log = game.log
        if len(log) == self._log_len:  # the turn goes on: a draw or a keep
            f[me + _PH + before] = 0.0
            f[me + _PH + now] = 1.0
            if before == _DRAW:
                held = game.held
                f[me + HELD] = value[held]
                if game.held_from_discard:
                    f[me + HELD_FROM_DISCARD] = 1.0
                    top = value[game.discard_top]
                    for at_top, in0, _, _, _, _ in self._cols:
                        f[at_top] = top
                        f[in0 + held] = 0.0
                else:
                    f[me + _UN0 + held] = 0.0
                    passed = value[game.declined[mover]]
                    for at in self._declined_cols[mover]:
                        f[at] = passed
                    draw = game.draw
                    size = value[len(draw)]
                    for _, _, _, _, at_size, _ in self._cols:
                        f[at_size] = size
                    if game.draw_known:
                        known = value[draw[-1]] if draw else 0.0
                        for _, _, _, _, _, at_known in self._cols:
                            f[at_known] = known
            self._phase = now
            return
        # The turn ended with one card face up on the discard pile.
        record = log[-1]
        f[me + _PH + before] = 0.0
        f[me + HELD] = 0.0
        f[me + HELD_FROM_DISCARD] = 0.0
        slot = record.slot
        turn = game.turn / game.config.turn_limit
        if slot is not None:
            f[me + _RACK0 + slot] = value[game.racks[mover][slot]]
            taken = value[record.taken]
            drawn = 0.0 if record.taken else 1.0
            out = value[record.discarded]
            for b in self._opp_slot_bases[mover]:
                at = b + slot
                f[at] = taken
                f[at + _TO_DRAWN] = drawn
                f[at + _TO_CHANGED] = turn
                f[at + _TO_OUT] = out
        if game.reshuffles != self._reshuffles:
            # The discard pile under the card just discarded became the draw pile: those cards
            # (flagged in the discard block until now, and never unseen while there) are unseen
            # again and leave the discard block.
            self._unseen_block += self._discard_block
            self._discard_block[:] = 0.0
            self._reshuffles = game.reshuffles
        discarded = record.discarded
        top = value[discarded]
        draw = game.draw
        size = value[len(draw)]
        for at_top, in0, un0, at_turn, at_size, _ in self._cols:
            f[at_top] = top
            f[in0 + discarded] = 1.0
            f[un0 + discarded] = 0.0
            f[at_turn] = turn
            f[at_size] = size
        if game.draw_known:
            known = value[draw[-1]] if draw else 0.0
            for _, _, _, _, _, at_known in self._cols:
                f[at_known] = known
        self._log_len = len(log)
        self._phase = now
        self._current = game.current
        f[bases[game.current] + _PH + now] = 1.0
