"""Every seat's observation kept current step by step, instead of re-encoded from scratch.

``observation.encode`` is the reference: it builds a seat's view from the whole game state. The AEC
env calls ``observe`` once or more per step, and a full encode costs more than the rest of the step,
so ``SeatViews`` applies only what a move changed (a few entries per seat). Tests check it against
``encode`` after every step of many random games; any doubt (a new round, an unknown transition)
falls back to a full encode.
"""

from __future__ import annotations

import numpy as np

from racko_env.actions import Phase
from racko_env.engine import RackoGame
from racko_env.observation import (
    CARD_VALUES,
    DISCARD_TOP,
    DRAW_SIZE,
    DRAW_TOP_KNOWN,
    HELD,
    HELD_FROM_DISCARD,
    IN_DISCARD,
    OBS_SIZE,
    OPP_SLOTS,
    PHASE,
    RACK,
    TURN,
    UNSEEN,
    encode,
)
from racko_env.rules import RACK_SIZE

_IN0 = IN_DISCARD.start - 1  # column of card c in the discard-pile block is _IN0 + c
_UN0 = UNSEEN.start - 1
_PH = PHASE.start


class SeatViews:
    """The observation vectors of all seats of one game, as rows of one array."""

    def __init__(self, game: RackoGame, include_scores: bool) -> None:
        self.game = game
        self.include_scores = include_scores
        self.rows = np.zeros((game.num_players, OBS_SIZE), dtype=np.float32)
        self.resync()

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

    def view(self, player: int) -> np.ndarray:
        return self.rows[player].copy()

    def update(self) -> None:
        """Bring the rows up to date after one ``game.apply``."""
        game = self.game
        if game.round_number != self._round or game.round_over:
            self.resync()
            return
        rows = self.rows
        value = CARD_VALUES[game.num_cards]
        mover = self._current
        me = rows[mover]
        before = self._phase
        now = game.phase
        if len(game.log) == self._log_len:  # the turn goes on: a draw or a keep
            me[_PH + before] = 0.0
            me[_PH + now] = 1.0
            if before == Phase.DRAW:
                held = game.held
                me[HELD] = value[held]
                if game.held_from_discard:
                    me[HELD_FROM_DISCARD] = 1.0
                    top = game.discard_top
                    rows[:, DISCARD_TOP] = value[top]
                    rows[:, _IN0 + held] = 0.0
                else:
                    me[_UN0 + held] = 0.0
                    rows[:, DRAW_SIZE] = value[len(game.draw)]
                    if game.draw_known:
                        rows[:, DRAW_TOP_KNOWN] = value[game.draw[-1]] if game.draw else 0.0
            self._phase = now
            return
        # The turn ended with one card face up on the discard pile.
        record = game.log[-1]
        n = game.num_players
        me[_PH + before] = 0.0
        me[HELD] = 0.0
        me[HELD_FROM_DISCARD] = 0.0
        if record.slot is not None:
            slot = record.slot
            me[RACK.start + slot] = value[game.racks[mover][slot]]
            for k in range(1, n):  # the mover is opponent number n-k of seat mover+k
                rows[(mover + k) % n, OPP_SLOTS.start + (n - k - 1) * RACK_SIZE + slot] = value[
                    record.taken
                ]
        discarded = record.discarded
        rows[:, DISCARD_TOP] = value[discarded]
        rows[:, _IN0 + discarded] = 1.0
        rows[:, _UN0 + discarded] = 0.0
        rows[:, TURN] = game.turn / game.config.turn_limit
        if game.reshuffles != self._reshuffles:
            # The discard pile under the top became the draw pile: those cards are unseen again.
            moved = np.asarray(game.draw, dtype=np.intp)
            rows[:, _IN0 + moved] = 0.0
            rows[:, _UN0 + moved] = 1.0
            self._reshuffles = game.reshuffles
        rows[:, DRAW_SIZE] = value[len(game.draw)]
        if game.draw_known:
            rows[:, DRAW_TOP_KNOWN] = value[game.draw[-1]]
        self._log_len = len(game.log)
        self._phase = now
        self._current = game.current
        rows[game.current, _PH + now] = 1.0
