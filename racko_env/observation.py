"""What one seat may know, as a flat vector: the observation layout (version ``OBS_VERSION``).

The layout is the same size for 2, 3 and 4 players so that tools and bot files need one schema.
Cards are scaled by the deck size N (40/50/60), so a card c reads c/N and 0 means "none/unknown".
Opponents are listed by seat relative to the observer: the first is the next player to act
after the observer (to the left), then the one after, and so on.

| index   | size | meaning                                                                   |
|---------|------|---------------------------------------------------------------------------|
| 0-9     | 10   | own rack, slot 0 (front, "5") to slot 9 (back, "50"), card / N            |
| 10-39   | 30   | per opponent, 10 slots: card / N that was seen going into that slot from  |
|         |      | the discard pile and is still there, else 0                               |
| 40      | 1    | card the observer holds / N (0 when none)                                 |
| 41      | 1    | top of the discard pile / N (0 while empty: its only card was just taken) |
| 42      | 1    | top of the draw pile / N when its order is public (``flip`` after the     |
|         |      | first refill), else 0                                                     |
| 43      | 1    | cards left in the draw pile / N                                           |
| 44-46   | 3    | decision asked of the observer: draw, keep-or-discard, place (one-hot;    |
|         |      | all 0 when it is not the observer's turn)                                 |
| 47      | 1    | 1 if the held card came from the discard pile (it must go into the rack)  |
| 48      | 1    | turns played this round / turn limit                                      |
| 49      | 1    | own game score / target score, capped at 1 (game mode only, else 0)       |
| 50-52   | 3    | each opponent's game score / target score, capped at 1 (game mode only)   |
| 53-55   | 3    | 1 for each opponent seat that exists                                      |
| 56      | 1    | 1 when playing partners (the second opponent is the partner)              |
| 57-116  | 60   | card c (index 56 + c) is in the discard pile now                          |
| 117-176 | 60   | card c (index 116 + c) is unseen: not in own rack, the discard pile, an   |
|         |      | opponent's known slot, nor held in public view                            |

Scores in partners mode are team totals. The observer's own private information is only its rack
and its held card; nothing about other racks beyond the public slots is ever encoded.
"""

from __future__ import annotations

import numpy as np

from racko_env.actions import LEGAL_BY_PHASE, Phase
from racko_env.engine import RackoGame

OBS_VERSION = 1
OBS_SIZE = 177
NUM_ACTIONS = 14
MAX_OPPONENTS = 3
MAX_CARDS = 60

RACK = slice(0, 10)
OPP_SLOTS = slice(10, 40)
HELD = 40
DISCARD_TOP = 41
DRAW_TOP_KNOWN = 42
DRAW_SIZE = 43
CARD_SCALED = slice(0, 44)  # every entry here is a card (or a count of cards) divided by N
PHASE = slice(44, 47)
HELD_FROM_DISCARD = 47
TURN = 48
OWN_SCORE = 49
OPP_SCORES = slice(50, 53)
OPP_PRESENT = slice(53, 56)
PARTNERS = 56
IN_DISCARD = slice(57, 117)
UNSEEN = slice(117, 177)

_SEEN = 2

# Card c scaled by the deck size N is float32(c / N), correctly rounded; every encoder (this one, the
# step-by-step SeatViews, the batched engine) reads it from this table so they agree to the bit.
CARD_VALUES: dict[int, np.ndarray] = {
    n: (np.arange(MAX_CARDS + 1, dtype=np.float64) / n).astype(np.float32) for n in (40, 50, 60)
}


def encode(game: RackoGame, player: int, include_scores: bool = False) -> np.ndarray:
    """The observation vector of ``player`` (float32, shape ``(OBS_SIZE,)``).

    Written for speed (it runs once per env step): card-valued entries are gathered into one list
    and scaled in one operation, and card membership is built in a bytearray.
    """
    cfg = game.config
    n = game.num_players
    n_cards = game.num_cards
    rack = game.racks[player]
    discard = game.discard
    draw = game.draw
    held = game.held
    on_turn = game.current == player and game.phase <= Phase.PLACE

    cards = list(rack)
    # where[c]: 0 = unseen by this player, 1 = in the discard pile, 2 = seen elsewhere / not in play
    where = bytearray(MAX_CARDS + 1)
    where[n_cards + 1 :] = b"\x02" * (MAX_CARDS - n_cards)
    for c in rack:
        where[c] = _SEEN
    for k in range(1, n):
        public = game.public_slots[(player + k) % n]
        cards += public
        for c in public:
            where[c] = _SEEN
    if n < 4:
        cards += [0] * (10 * (4 - n))
    mine = held if on_turn and held is not None else 0
    cards.append(mine)
    cards.append(discard[-1] if discard else 0)
    cards.append(draw[-1] if game.draw_known and draw else 0)
    cards.append(len(draw))
    for c in discard:
        where[c] = 1
    if held is not None and (on_turn or game.held_from_discard):
        where[held] = _SEEN
    where[0] = _SEEN

    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    obs[CARD_SCALED] = CARD_VALUES[n_cards][cards]
    if on_turn:
        obs[PHASE.start + game.phase] = 1.0
        if game.held_from_discard:
            obs[HELD_FROM_DISCARD] = 1.0
    obs[TURN] = game.turn / cfg.turn_limit
    if include_scores:
        totals = game.totals
        inv_t = 1.0 / cfg.target_score
        obs[OWN_SCORE] = min(totals[cfg.team_of(player)] * inv_t, 1.0)
        for k in range(1, n):
            obs[OPP_SCORES.start + k - 1] = min(totals[cfg.team_of((player + k) % n)] * inv_t, 1.0)
    obs[OPP_PRESENT.start : OPP_PRESENT.start + n - 1] = 1.0
    if cfg.partners:
        obs[PARTNERS] = 1.0
    status = np.frombuffer(where, dtype=np.uint8)[1:]
    obs[IN_DISCARD] = status == 1
    obs[UNSEEN] = status == 0
    return obs


_MASKS = {phase: np.zeros(NUM_ACTIONS, dtype=np.int8) for phase in Phase}
for _phase, _mask in _MASKS.items():
    _mask[list(LEGAL_BY_PHASE[_phase])] = 1
    _mask.flags.writeable = False
_OFF_TURN = np.zeros(NUM_ACTIONS, dtype=np.int8)


def action_mask(game: RackoGame, player: int) -> np.ndarray:
    """int8 mask over the 14 actions: the legal ones for ``player`` now (all 0 off turn)."""
    if game.current == player:
        return _MASKS[game.phase].copy()
    return _OFF_TURN.copy()
