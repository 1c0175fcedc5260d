"""The states of solitaire Rack-O a player can tell apart, numbered 0..n-1, and their transitions.

In solitaire (one player, ``empty_pile="shuffle"``) what the player knows at a decision is:

- the rack, k distinct cards of 1..N in slot order;
- one card outside the rack: the discard top (at the start of a turn) or the held card (after a
  draw, or after taking the discard top);
- the set of cards in the draw pile. Every other card outside the rack lies under the discard
  top; only the top of the discard pile can ever be taken, and an emptied draw pile is refilled
  by shuffling those cards, so their order never matters, and neither does the draw pile's.

A draw pile emptied by this turn's draw is refilled at the end of the turn with every card outside
the rack except the new discard top. A held card's state records the draw pile as the next turn
will find it (refilled if this draw emptied it): the two piles lead to the same futures, so
they are one state. With that, the three decisions of a turn have states of one shape
``(rack, card, draw set)``:

- ``Phase.DRAW`` (0): ``card`` is the discard top;
- ``Phase.KEEP_OR_DISCARD`` (1): ``card`` is the card just drawn;
- ``Phase.PLACE`` (2): ``card`` is the held card (from either pile).

**Numbering.** ``racks`` lists the ordered racks lexicographically (``rack_id``); ``outside[rack_id]``
the N-k cards outside it, ascending. ``row = rack_id * (N-k) + j`` where ``card = outside[rack_id,
j]``. The draw set is a bitmask over the other N-k-1 outside cards, ascending (bit b is the b-th
smallest), never empty. A state of one phase is ``row * (2**(N-k-1) - 1) + mask - 1``, and the
tabular observation is ``phase * num_states + state`` (``SolitaireSpace.index`` and its inverse
``SolitaireSpace.decode``).

Placing the held card into a slot leaves the bitmask unchanged (the next state's other cards are
the same set), which is what makes the tables here small: ``place_next[row, slot]`` is the next
turn's row, and ``draw_mask[j, jc, mask]`` the bitmask after drawing ``outside[jc]`` with the
discard top ``outside[j]`` (refilled if it empties the pile).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import permutations
from math import perm

import numpy as np

from racko_env.actions import DISCARD, DRAW_PILE, KEEP, NUM_ACTIONS, TAKE_DISCARD

PHASES = 3  # DRAW, KEEP_OR_DISCARD, PLACE: the decisions of a turn, as racko_env.actions.Phase
MAX_STATES = 50_000_000  # per phase: past this the tables no longer fit a laptop's memory


@dataclass(frozen=True)
class SolitaireState:
    """One decoded state: the decision, the rack (slot 0 first), the discard top or held card,
    and the draw pile's cards."""

    phase: int
    rack: tuple[int, ...]
    card: int
    draw: frozenset[int]


def check_size(rack_size: int, deck_size: int) -> None:
    """ValueError naming the option unless solitaire of this size is playable (the deal must
    leave a discard top and a draw pile) and small enough to number."""
    for name, value in (("rack_size", rack_size), ("deck_size", deck_size)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {value!r}")
    if not 3 <= rack_size <= 10:
        raise ValueError(f"rack_size must be between 3 and 10, got {rack_size}")
    if deck_size < rack_size + 2:
        raise ValueError(
            f"deck_size must be at least rack_size + 2 = {rack_size + 2} (the deal leaves a "
            f"discard top and a draw pile), got {deck_size}"
        )
    count = (
        perm(deck_size, rack_size) * (deck_size - rack_size) * (2 ** (deck_size - rack_size - 1))
    )
    if count > MAX_STATES:
        raise ValueError(
            f"solitaire with rack_size={rack_size}, deck_size={deck_size} has about {count:,} "
            f"states per decision, more than {MAX_STATES:,}: use a smaller deck_size"
        )


def rack_rank(racks: np.ndarray, deck_size: int) -> np.ndarray:
    """The lexicographic number of each ordered rack (rows of ``racks``), vectorised."""
    racks = np.asarray(racks, dtype=np.int64)
    k = racks.shape[-1]
    rank = np.zeros(racks.shape[:-1], dtype=np.int64)
    for p in range(k):
        smaller_used = (racks[..., :p] < racks[..., p : p + 1]).sum(axis=-1)
        rank += (racks[..., p] - 1 - smaller_used) * perm(deck_size - p - 1, k - p - 1)
    return rank


class SolitaireSpace:
    """The state numbering and the transition tables of solitaire with k slots and cards 1..N."""

    def __init__(self, rack_size: int, deck_size: int) -> None:
        check_size(rack_size, deck_size)
        self.rack_size, self.deck_size = k, n = rack_size, deck_size
        self.free = n - k  # cards outside the rack
        self.bits = self.free - 1  # cards outside the rack but the top/held card
        self.masks = 2**self.bits  # bitmask columns; column 0 (an empty draw pile) is unused
        self.racks = np.array(list(permutations(range(1, n + 1), k)), dtype=np.int64)
        self.num_racks = len(self.racks)
        self.num_rows = self.num_racks * self.free
        self.num_states = self.num_rows * (self.masks - 1)  # per phase
        self.num_observations = PHASES * self.num_states
        inside = np.zeros((self.num_racks, n + 1), dtype=bool)
        np.put_along_axis(inside, self.racks, True, axis=1)
        self.outside = np.nonzero(~inside[:, 1:])[1].reshape(self.num_racks, self.free) + 1
        self.ascending = np.all(np.diff(self.racks, axis=1) > 0, axis=1)
        self.place_next = self._place_table()
        self.draw_mask, self.mask_bits = self._mask_tables()
        self.draw_count = self.mask_bits.sum(axis=0)  # cards in the draw pile, per mask
        # nth_bit[mask, u]: the u-th set bit of mask (the u-th smallest card of the draw pile)
        self.nth_bit = np.zeros((self.masks, max(self.bits, 1)), dtype=np.int64)
        for mask in range(self.masks):
            on = [b for b in range(self.bits) if mask >> b & 1]
            self.nth_bit[mask, : len(on)] = on
        # legal[phase, action]: the full game's masks (a rack of k slots: actions 0..k-1)
        self.legal = np.zeros((PHASES, NUM_ACTIONS), dtype=bool)
        self.legal[0, [DRAW_PILE, TAKE_DISCARD]] = self.legal[1, [KEEP, DISCARD]] = True
        self.legal[2, :k] = True

    # ------------------------------------------------------------------ tables

    def _place_table(self) -> np.ndarray:
        """``place_next[row, slot]``: the row of the next turn after putting the row's card into
        ``slot`` (the rack changes, the slot's old card becomes the discard top)."""
        k, free = self.rack_size, self.free
        table = np.empty((self.num_racks, free, k), dtype=np.int64)
        for j in range(free):
            held = self.outside[:, j]
            for slot in range(k):
                new = self.racks.copy()
                out = new[:, slot].copy()
                new[:, slot] = held
                # the old card's place among the new outside cards (the held card left them)
                below = (self.outside < out[:, None]).sum(axis=1) - (held < out)
                table[:, j, slot] = rack_rank(new, self.deck_size) * free + below
        return table.reshape(self.num_rows, k)

    def _mask_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """``draw_mask[j, jc, mask]``: the held card's bitmask after drawing outside card ``jc``
        when ``outside[j]`` is the discard top (the top goes under; an emptied pile is refilled
        with all the others); and ``mask_bits[b, mask]``, whether bit b is set."""
        free, masks = self.free, self.masks
        mask_bits = ((np.arange(masks)[None, :] >> np.arange(self.bits)[:, None]) & 1).astype(bool)
        table = np.zeros((free, free, masks), dtype=np.int64)
        full = masks - 1
        for j in range(free):
            for jc in range(free):
                if jc == j:
                    continue
                for mask in range(masks):
                    cards = {q for q in range(free) if q != j and mask >> _bit(q, j) & 1}
                    cards.discard(jc)
                    new = sum(1 << _bit(q, jc) for q in cards)
                    table[j, jc, mask] = new if new else full
        return table, mask_bits

    # ------------------------------------------------------------------ numbering

    def row_state(self, row: int | np.ndarray, mask: int | np.ndarray) -> int | np.ndarray:
        """The state number (within a phase) of a row and a nonempty bitmask."""
        return row * (self.masks - 1) + mask - 1

    def index(self, phase: int, rack: tuple[int, ...], card: int, draw: frozenset[int]) -> int:
        """The tabular observation of a state (``decode``'s inverse); ValueError if impossible."""
        k, n = self.rack_size, self.deck_size
        if not 0 <= phase < PHASES:
            raise ValueError(
                f"phase must be 0 (DRAW), 1 (KEEP_OR_DISCARD) or 2 (PLACE), got {phase}"
            )
        rack = tuple(int(c) for c in rack)
        if len(rack) != k or len(set(rack)) != k or not all(1 <= c <= n for c in rack):
            raise ValueError(f"a rack is {k} distinct cards of 1..{n}, got {rack}")
        rid = int(rack_rank(np.array(rack), n))
        outside = self.outside[rid].tolist()
        if card not in outside:
            raise ValueError(f"card {card} must be a card of 1..{n} outside the rack {rack}")
        j = outside.index(card)
        draw = set(int(c) for c in draw)
        if not draw or not draw <= set(outside) - {card}:
            raise ValueError(
                f"the draw pile must be a nonempty set of cards outside the rack other than "
                f"{card}, got {sorted(draw)}"
            )
        mask = sum(1 << _bit(outside.index(c), j) for c in draw)
        return phase * self.num_states + int(self.row_state(rid * self.free + j, mask))

    def decode(self, observation: int) -> SolitaireState:
        """The state a tabular observation numbers (``index``'s inverse)."""
        observation = int(observation)
        if not 0 <= observation < self.num_observations:
            raise ValueError(
                f"a tabular observation is in 0..{self.num_observations - 1}, got {observation}"
            )
        phase, state = divmod(observation, self.num_states)
        row, mask = divmod(state, self.masks - 1)
        mask += 1
        rid, j = divmod(row, self.free)
        outside = self.outside[rid].tolist()
        draw = frozenset(outside[q] for q in range(self.free) if q != j and mask >> _bit(q, j) & 1)
        rack = tuple(int(c) for c in self.racks[rid])
        return SolitaireState(phase, rack, int(outside[j]), draw)

    def deal_rows(self) -> np.ndarray:
        """The state numbers of the deal (DRAW phase): every rack and discard top, with every
        other card in the draw pile; each of them is equally likely."""
        return self.row_state(np.arange(self.num_rows), self.masks - 1)

    def deal(self, rng: random.Random) -> int:
        """A uniformly random deal's first observation (a DRAW state)."""
        row = rng.randrange(self.num_rows)
        return int(self.row_state(row, self.masks - 1))

    def step(self, observation: int, action: int, rng: random.Random) -> tuple[int, bool, bool]:
        """One decision played on the tables, as the rules engine plays it: the next
        observation, whether the decision ended a turn and whether that turn went Rack-O (the
        observation after Rack-O is the final rack's DRAW state). The action must be legal."""
        n = self.num_states
        phase, state = divmod(observation, n)
        row, mask = divmod(state, self.masks - 1)
        mask += 1
        if phase == 0:
            if action == TAKE_DISCARD:
                return 2 * n + state, False, False
            rid, j = divmod(row, self.free)
            bits = [b for b in range(self.bits) if mask >> b & 1]
            b = bits[rng.randrange(len(bits))]
            jc = b if b < j else b + 1
            new_mask = int(self.draw_mask[j, jc, mask])
            return n + int(self.row_state(rid * self.free + jc, new_mask)), False, False
        if phase == 1 and action == KEEP:
            return 2 * n + state, False, False
        if phase == 2:
            row = int(self.place_next[row, action])
            state = int(self.row_state(row, mask))
        return state, True, bool(self.ascending[row // self.free])

    def step_batch(
        self, observations: np.ndarray, actions: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``step`` for arrays of observations and legal actions (the drawn cards from ``rng``)."""
        n = self.num_states
        phase, state = np.divmod(np.asarray(observations, dtype=np.int64), n)
        row, mask = np.divmod(state, self.masks - 1)
        mask += 1
        actions = np.asarray(actions, dtype=np.int64)
        nxt, row_after = state.copy(), row.copy()
        drawing = (phase == 0) & (actions == DRAW_PILE)
        pick = self.nth_bit[mask, (rng.random(len(mask)) * self.draw_count[mask]).astype(np.int64)]
        rid, j = np.divmod(row, self.free)
        jc = np.where(pick < j, pick, pick + 1)
        drawn = n + self.row_state(rid * self.free + jc, self.draw_mask[j, jc, mask])
        nxt = np.where(drawing, drawn, nxt)
        holding = ((phase == 0) & (actions == TAKE_DISCARD)) | ((phase == 1) & (actions == KEEP))
        nxt = np.where(holding, 2 * n + state, nxt)
        placing = phase == 2
        row_after[placing] = self.place_next[row[placing], actions[placing]]
        nxt[placing] = self.row_state(row_after[placing], mask[placing])
        ended = placing | ((phase == 1) & (actions == DISCARD))
        racko = ended & self.ascending[row_after // self.free]
        return nxt, ended, racko

    def table_bytes(self, actions: int = NUM_ACTIONS, itemsize: int = 4) -> int:
        """Bytes of a Q-table over every tabular observation (``actions`` float32 entries each)."""
        return self.num_observations * actions * itemsize


_SPACES: dict[tuple[int, int], SolitaireSpace] = {}


def space(rack_size: int, deck_size: int) -> SolitaireSpace:
    """The (cached) state numbering of one size."""
    key = (rack_size, deck_size)
    if key not in _SPACES:
        _SPACES[key] = SolitaireSpace(rack_size, deck_size)
    return _SPACES[key]


def _bit(position: int, skipped: int) -> int:
    """The bit of the outside card at ``position`` in a mask that skips outside card ``skipped``."""
    return position if position < skipped else position - 1
