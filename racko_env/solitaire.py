"""Solitaire Rack-O solved exactly: the fewest expected turns to Rack-O, and any policy's.

One player draws and places until the rack reads ascending, under the full game's rules: Rack-O
is checked at the end of a turn (a rack dealt ascending still takes one turn), and a draw pile
emptied by a turn's draw is refilled, shuffled (``empty_pile="shuffle"``), at the end of that
turn. The states are what the player can tell apart (``racko_env.solitaire_space``).

- ``solve(rack_size, deck_size)`` runs value iteration over every state until no value moves by
  more than 1e-12 (a few sweeps: ``Solution.iterations``), then evaluates its greedy policy
  exactly (a sparse linear solve over the states the deal reaches) and checks the two agree to
  1e-9: ``Solution.expected_turns``
  is the expected number of turns from a uniformly random deal under optimal play, counting the
  turn that goes Rack-O. ``Solution.values`` holds, for every tabular observation (the states of
  ``gymnasium.make("racko/RackoSolitaire-v0", ..., tabular=True)``), the expected turns still to
  play from it under optimal play, the current turn included: the optimal return is its negative.
  ``Solution.policy`` holds an optimal action id for every observation.
- ``evaluate(policy, rack_size, deck_size)`` is a policy's exact expected turns from the deal
  (``inf`` if it can loop forever without Rack-O): ``policy`` is a table of action ids, one per
  tabular observation, or a bot (``act(observation)`` on the env's observation dicts), which is
  asked once at each state it can reach (``racko_env.solitaire_env.bot_table``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import spsolve

from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD
from racko_env.solitaire_space import SolitaireSpace

TOLERANCE = 1e-12  # value iteration stops when no value moves by more than this
MAX_ITERATIONS = 100_000
_SPACES: dict[tuple[int, int], SolitaireSpace] = {}


def space(rack_size: int, deck_size: int) -> SolitaireSpace:
    """The (cached) state numbering of one size."""
    key = (rack_size, deck_size)
    if key not in _SPACES:
        _SPACES[key] = SolitaireSpace(rack_size, deck_size)
    return _SPACES[key]


@dataclass
class Solution:
    """Optimal play of one size: see the module docstring for what each array holds."""

    rack_size: int
    deck_size: int
    expected_turns: float
    values: np.ndarray  # float64, one per tabular observation: expected turns to go
    policy: np.ndarray  # int8, one optimal action id per tabular observation
    iterations: int
    seconds: float
    space: SolitaireSpace = field(repr=False)

    @property
    def num_states(self) -> int:
        """Tabular observations (three decisions of a turn, each ``space.num_states``)."""
        return self.space.num_observations


# ---------------------------------------------------------------------------- the Bellman step


def _end_of_turn(sp: SolitaireSpace, w: np.ndarray) -> np.ndarray:
    """Expected turns after a turn that leaves the row's rack: 0 if it reads ascending."""
    ascending = np.repeat(sp.ascending, sp.free)
    return np.where(ascending[:, None], 0.0, w)


def _backup(sp: SolitaireSpace, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """One Bellman backup of the turn-start values ``w`` (rows x masks): the after-turn values
    ``end``, the best placement ``place``, the best keep-or-discard ``kd`` (all turns after
    this one) and the expected draw ``draw``; the new ``w`` is ``1 + min(place, draw)``."""
    end = _end_of_turn(sp, w)
    place = end[sp.place_next].min(axis=1)
    kd = np.minimum(end, place)
    kd3 = kd.reshape(sp.num_racks, sp.free, sp.masks)
    draw = np.empty_like(kd3)
    for j in range(sp.free):
        others = np.array([q for q in range(sp.free) if q != j])
        gathered = kd3[:, others[:, None], sp.draw_mask[j, others]]
        draw[:, j] = np.einsum("rcm,cm->rm", gathered, sp.mask_bits)
    draw = draw.reshape(sp.num_rows, sp.masks) / np.maximum(sp.draw_count, 1)
    return end, place, kd, draw


def _greedy(sp: SolitaireSpace, w: np.ndarray) -> np.ndarray:
    """The greedy action ids (one per tabular observation) of turn-start values ``w``."""
    end, place, kd, draw = _backup(sp, w)
    end3 = end[sp.place_next]  # rows x slots x masks
    take = np.where(place <= draw, TAKE_DISCARD, DRAW_PILE)
    keep = np.where(end <= place, DISCARD, KEEP)
    slot = end3.argmin(axis=1)
    return np.concatenate([_states(a) for a in (take, keep, slot)]).astype(np.int8)


def _states(a: np.ndarray) -> np.ndarray:
    """Rows x masks -> one entry per state (the unused empty-pile column dropped)."""
    return a[:, 1:].reshape(-1)


# ---------------------------------------------------------------------------- solve


def solve(rack_size: int, deck_size: int, tolerance: float = TOLERANCE) -> Solution:
    """The optimal values and policy of solitaire with ``rack_size`` slots and cards
    1..``deck_size`` (see the module docstring)."""
    start = time.perf_counter()
    sp = space(rack_size, deck_size)
    w = np.zeros((sp.num_rows, sp.masks))
    delta, iterations = np.inf, 0
    while delta > tolerance:  # from 0 the values rise to the optimum
        if iterations == MAX_ITERATIONS:
            raise RuntimeError(f"value iteration did not converge in {MAX_ITERATIONS} sweeps")
        _, place, _, draw = _backup(sp, w)
        new = 1.0 + np.minimum(place, draw)
        delta = float(np.abs(new[:, 1:] - w[:, 1:]).max())
        w, iterations = new, iterations + 1
    policy = _greedy(sp, w)
    _, turns = _evaluate_table(sp, policy)
    if not abs(turns - _deal_mean(sp, _states(w))) < 1e-9:
        raise RuntimeError("value iteration and the exact evaluation of its policy disagree")
    values = _all_values(sp, _states(w))
    return Solution(
        rack_size, deck_size, turns, values, policy, iterations, time.perf_counter() - start, sp
    )


def _all_values(sp: SolitaireSpace, draw_values: np.ndarray) -> np.ndarray:
    """Every observation's optimal expected turns from the converged turn-start values."""
    w = np.zeros((sp.num_rows, sp.masks))
    w[:, 1:] = draw_values.reshape(sp.num_rows, sp.masks - 1)
    end, place, kd, draw = _backup(sp, w)
    turn = np.minimum(place, draw)
    return np.concatenate([_states(1.0 + turn), _states(1.0 + kd), _states(1.0 + place)])


def _deal_mean(sp: SolitaireSpace, draw_values: np.ndarray) -> float:
    """The mean turn-start value over the deal (every rack and discard top equally likely)."""
    return float(np.mean(draw_values[sp.deal_rows()]))


# ---------------------------------------------------------------------------- evaluate


def evaluate(policy: Any, rack_size: int, deck_size: int) -> float:
    """A policy's exact expected turns from a uniformly random deal (see the module docstring);
    ``inf`` when some deal leads with positive probability to play that never goes Rack-O."""
    sp = space(rack_size, deck_size)
    if hasattr(policy, "act"):
        from racko_env.solitaire_env import bot_table

        table = bot_table(policy, rack_size, deck_size)
    else:
        table = check_table(policy, sp)
    return _evaluate_table(sp, table)[1]


def check_table(policy: Any, sp: SolitaireSpace) -> np.ndarray:
    """The policy as an int array of one legal action id per observation, or ValueError naming
    the first observation whose action is not legal there."""
    table = np.asarray(policy)
    if table.shape != (sp.num_observations,) or not np.issubdtype(table.dtype, np.integer):
        raise ValueError(
            f"a policy table holds one integer action id per tabular observation: shape "
            f"({sp.num_observations},), got shape {table.shape} of {table.dtype}"
        )
    n = sp.num_states
    legal = (
        np.isin(table[:n], (DRAW_PILE, TAKE_DISCARD)),
        np.isin(table[n : 2 * n], (KEEP, DISCARD)),
        (table[2 * n :] >= 0) & (table[2 * n :] < sp.rack_size),
    )
    bad = np.flatnonzero(~np.concatenate(legal))
    if len(bad):
        first = int(bad[0])
        raise ValueError(
            f"the policy plays action {int(table[first])} at observation {first} "
            f"({sp.decode(first)}), where it is not legal"
        )
    return table.astype(np.int64)


def transitions(sp: SolitaireSpace, table: np.ndarray) -> sparse.csr_matrix:
    """The turn-to-turn transition matrix of a policy table over the DRAW states (a turn that
    goes Rack-O leads nowhere: its row sums to less than 1)."""
    n, per = sp.num_states, sp.masks - 1
    take, keep, slot = table[:n] == TAKE_DISCARD, table[n : 2 * n] == KEEP, table[2 * n :]
    s = np.arange(n)
    row, mask = s // per, s % per + 1
    ascending = np.repeat(sp.ascending, sp.free)

    def end(r: np.ndarray, m: np.ndarray, placed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The next turn's state after the turn in state (r, m) placed (or discarded): its row,
        and whether the turn went Rack-O."""
        nxt = sp.row_state(r, m)
        moved = np.where(placed, sp.place_next[r, slot[nxt]], r)
        return sp.row_state(moved, m), ascending[moved]

    src, dst, prob = [], [], []
    nxt, done = end(row[take], mask[take], np.ones(take.sum(), bool))
    src.append(s[take][~done]), dst.append(nxt[~done]), prob.append(np.ones((~done).sum()))
    rid, j = row // sp.free, row % sp.free
    count = sp.draw_count[mask]
    for b in range(sp.bits):
        jc = np.where(b < j, b, b + 1)
        pick = ~take & sp.mask_bits[b, mask]
        r_c = (rid * sp.free + jc)[pick]
        m_c = sp.draw_mask[j[pick], jc[pick], mask[pick]]
        nxt, done = end(r_c, m_c, keep[sp.row_state(r_c, m_c)])
        src.append(s[pick][~done]), dst.append(nxt[~done]), prob.append(1.0 / count[pick][~done])
    src, dst, prob = (np.concatenate(a) for a in (src, dst, prob))
    return sparse.csr_matrix((prob, (src, dst)), shape=(n, n))


def _evaluate_table(
    sp: SolitaireSpace, table: np.ndarray, start: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """The exact turn-start values of a policy table (``inf`` where Rack-O is not certain; NaN
    where neither the deal nor ``start`` reaches) and its expected turns from the deal."""
    p = transitions(sp, table)
    n = sp.num_states
    reach = _reachable(p, sp.deal_rows() if start is None else start)
    # States that never go Rack-O, then every state that can get to one of them: infinite.
    finishes = np.asarray(p.sum(axis=1)).ravel() < 1.0 - 1e-12
    stuck = reach & ~_reachable(p.T.tocsr(), np.flatnonzero(finishes & reach))
    infinite = _reachable(p.T.tocsr(), np.flatnonzero(stuck)) & reach
    live = np.flatnonzero(reach & ~infinite)
    values = np.full(n, np.nan)
    values[infinite] = np.inf
    if len(live):
        sub = p[live][:, live]
        a = sparse.identity(len(live), format="csc") - sub.tocsc()
        values[live] = spsolve(a, np.ones(len(live)))
    return values, _deal_mean(sp, values)


def _reachable(p: sparse.csr_matrix, start: np.ndarray) -> np.ndarray:
    """Boolean mask of the states reachable from ``start`` along the nonzeros of ``p``."""
    seen = np.zeros(p.shape[0], dtype=bool)
    seen[start] = True
    frontier = np.asarray(start, dtype=np.int64)
    while len(frontier):
        nxt = p[frontier].indices
        nxt = np.unique(nxt[~seen[nxt]])
        seen[nxt] = True
        frontier = nxt
    return seen
