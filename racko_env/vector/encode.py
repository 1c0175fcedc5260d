"""Observations (the current layout, ``OBS_VERSION``, sized by ``layout_for(config)``) and action
masks for many games at once, into preallocated buffers.

Bit-identical to ``racko_env.observation.encode`` / ``action_mask``: cards are scaled with the same
correctly rounded table (float32(c / N)), the turn and scores with the same float64 division before
the float32 cast. The differential tests compare every seat's vector after every step.
"""

from __future__ import annotations

import numpy as np

from racko_env.observation import CARD_VALUES, layout_for
from racko_env.vector.engine import IN_DISCARD as IN_DISCARD_CODE
from racko_env.vector.engine import IN_DRAW, IN_HAND, VectorGame

_ON_TURN_PHASES = 2  # phases 0..2 (draw, keep-or-discard, place) are decisions


class Encoder:
    """Encodes seats of a ``VectorGame`` (one seat per game) into a float32 [k, size] buffer, size
    being the game's layout's (``OBS_SIZE`` for the rule book's racks)."""

    def __init__(self, game: VectorGame) -> None:
        self.game = game
        n = game.num_players
        self.layout = lay = layout_for(game.config)
        self.size = lay.size
        self.values = CARD_VALUES[game.num_cards]  # the reference's table: bit-identical scaling
        const = np.zeros(lay.size, dtype=np.float32)
        const[lay.OPP_PRESENT.start : lay.OPP_PRESENT.start + n - 1] = 1.0
        if game.config.partners:
            const[lay.PARTNERS] = 1.0
        self._const = const[lay.OPP_PRESENT.start : lay.PARTNERS + 1]

    def observe(
        self,
        games: np.ndarray,
        seats: np.ndarray,
        include_scores: bool = False,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """The observation of ``seats[i]`` in game ``games[i]``, for every i (float32 [k, size])."""
        eng = self.game
        lay = self.layout
        g = np.asarray(games, dtype=np.intp)
        seats = np.asarray(seats, dtype=np.intp)
        k = len(g)
        if out is None:
            out = np.empty((k, lay.size), dtype=np.float32)
        elif out.shape != (k, lay.size) or out.dtype != np.float32:
            raise ValueError(f"out must be a float32 array of shape ({k}, {lay.size})")
        n = eng.num_players
        values = self.values
        on = (eng.current[g] == seats) & (eng.phase[g] <= _ON_TURN_PHASES)

        rack = eng.racks[g, seats]
        out[:, lay.RACK] = values[rack]
        others = (seats[:, None] + np.arange(1, n)[None, :]) % n  # [k, n-1]
        public = eng.public_slots[g[:, None], others].reshape(k, lay.rack_size * (n - 1))
        out[:, lay.OPP_SLOTS.start : lay.OPP_SLOTS.start + public.shape[1]] = values[public]
        out[:, lay.OPP_SLOTS.start + public.shape[1] : lay.OPP_SLOTS.stop] = 0.0

        held = eng.held[g]
        out[:, lay.HELD] = values[np.where(on, held, 0)]
        dlen = eng.discard_len[g]
        top = eng.discard[g, np.maximum(dlen - 1, 0)]
        out[:, lay.DISCARD_TOP] = values[np.where(dlen > 0, top, 0)]
        rlen = eng.draw_len[g]
        draw_top = eng.draw[g, np.maximum(rlen - 1, 0)]
        out[:, lay.DRAW_TOP_KNOWN] = values[np.where(eng.draw_known[g] & (rlen > 0), draw_top, 0)]
        out[:, lay.DRAW_SIZE] = values[rlen]

        out[:, lay.PHASE] = 0.0
        rows = np.flatnonzero(on)
        out[rows, lay.PHASE.start + eng.phase[g[rows]]] = 1.0
        from_discard = eng.held_from_discard[g]
        out[:, lay.HELD_FROM_DISCARD] = on & from_discard
        limit = eng.config.turn_limit
        out[:, lay.TURN] = eng.turn[g] / limit
        if include_scores:
            totals = eng.totals[g]  # [k, T]
            inv_t = 1.0 / eng.config.target_score
            team_of = eng.team_of
            out[:, lay.OWN_SCORE] = np.minimum(totals[np.arange(k), team_of[seats]] * inv_t, 1.0)
            opp = np.minimum(totals[np.arange(k)[:, None], team_of[others]] * inv_t, 1.0)
            out[:, lay.OPP_SCORES.start : lay.OPP_SCORES.start + n - 1] = opp
            out[:, lay.OPP_SCORES.start + n - 1 : lay.OPP_SCORES.stop] = 0.0
        else:
            out[:, lay.OWN_SCORE : lay.OPP_SCORES.stop] = 0.0
        out[:, lay.OPP_PRESENT.start : lay.PARTNERS + 1] = self._const

        owner = eng.owner[g]
        out[:, lay.IN_DISCARD] = owner[:, 1 : lay.cards + 1] == IN_DISCARD_CODE
        # Unseen: in the draw pile, in another rack but not seen going in, or held out of view.
        unseen = owner == IN_DRAW
        unseen |= (owner < IN_DRAW) & (owner != seats[:, None]) & ~eng.public[g]
        hidden_hand = ~(on | from_discard)
        if hidden_hand.any():
            unseen |= (owner == IN_HAND) & hidden_hand[:, None]
        out[:, lay.UNSEEN] = unseen[:, 1 : lay.cards + 1]

        # Version 2: the opponents' slot histories and passed-over discards, blocks as opp_slots.
        width = public.shape[1]
        history = (
            (lay.OPP_SLOT_DRAWN, eng.slot_drawn[g[:, None], others].reshape(k, width)),
            (lay.OPP_SLOT_CHANGED, eng.slot_changed[g[:, None], others].reshape(k, width) / limit),
            (lay.OPP_SLOT_OUT, values[eng.slot_out[g[:, None], others].reshape(k, width)]),
            (lay.OPP_DECLINED, values[eng.declined[g[:, None], others]]),
        )
        for field, block in history:
            used = field.start + block.shape[1]
            out[:, field.start : used] = block
            out[:, used : field.stop] = 0.0
        return out

    def masks(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """bool [k, NUM_ACTIONS]: the legal actions of ``seats[i]`` (all False when not on turn)."""
        eng = self.game
        g = np.asarray(games, dtype=np.intp)
        m = eng.legal[eng.phase[g]]
        return m & (eng.current[g] == np.asarray(seats))[:, None]
