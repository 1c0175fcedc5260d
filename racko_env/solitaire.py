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

from racko_env.actions import DISCARD, DRAW_PILE, KEEP, NUM_ACTIONS, TAKE_DISCARD
from racko_env.solitaire_space import SolitaireSpace, space

TOLERANCE = 1e-12  # value iteration stops when no value moves by more than this
MAX_ITERATIONS = 100_000


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
    _, turns = _evaluate(sp, policy_probabilities(policy, sp))
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


def evaluate(policy: Any, rack_size: int, deck_size: int, turn_limit: int | None = None) -> float:
    """A policy's exact expected turns from a uniformly random deal (see the module docstring);
    ``inf`` when some deal leads with positive probability to play that never goes Rack-O.
    With ``turn_limit``, the exact expected turns of a round cut off after that many turns, as
    the env plays it (``min(turns, turn_limit)``): finite for every policy, and the same for
    one that always goes Rack-O within the limit.

    ``policy``: a bot (``act(observation)``), asked at the states it reaches; a batched bot
    (``act_batch(obs, masks)``, ``agents.batched``), asked at every state in chunks; an int
    array of one action id per tabular observation; or a float array ``(observations, 14)`` of action probabilities per
    observation (a stochastic policy: each row sums to 1 over the legal actions)."""
    sp = space(rack_size, deck_size)
    if callable(getattr(policy, "act_batch", None)):
        from racko_env.solitaire_env import batch_table

        policy = batch_table(policy, rack_size, deck_size)
    elif hasattr(policy, "act"):
        from racko_env.solitaire_env import bot_table

        policy = bot_table(policy, rack_size, deck_size)
    return _evaluate(sp, policy_probabilities(policy, sp), turn_limit=turn_limit)[1]


def policy_probabilities(policy: Any, sp: SolitaireSpace) -> tuple[np.ndarray, ...]:
    """A policy table as the probabilities the evaluation needs: of taking the discard top at
    each DRAW state, of keeping at each KEEP_OR_DISCARD state, and of each slot at each PLACE
    state; ValueError naming the first observation where the policy is not a legal one."""
    table = np.asarray(policy)
    n, k, obs = sp.num_states, sp.rack_size, sp.num_observations
    if table.ndim == 1 and table.shape == (obs,) and np.issubdtype(table.dtype, np.integer):
        probs = None
        actions = table
    elif table.shape == (obs, NUM_ACTIONS) and np.issubdtype(table.dtype, np.floating):
        probs = table
        actions = None
    else:
        raise ValueError(
            f"a policy table holds one integer action id per tabular observation, shape "
            f"({obs},), or action probabilities, shape ({obs}, {NUM_ACTIONS}); got shape "
            f"{table.shape} of {table.dtype}"
        )
    legal = sp.legal
    phase = np.arange(obs) // n
    if actions is not None:
        ok = (actions >= 0) & (actions < NUM_ACTIONS)
        ok[ok] = legal[phase[ok], actions[ok]]
        bad = np.flatnonzero(~ok)
        what = "plays action {} at observation {} ({}), where it is not legal"
    else:
        ok = (probs >= 0).all(axis=1) & np.isclose(probs.sum(axis=1), 1.0, atol=1e-6)
        ok &= ~((probs > 0) & ~legal[phase]).any(axis=1)
        bad = np.flatnonzero(~ok)
        what = "gives probabilities {} at observation {} ({}): not a distribution over its legal actions"
    if len(bad):
        first = int(bad[0])
        shown = int(actions[first]) if actions is not None else np.round(probs[first], 3).tolist()
        raise ValueError("the policy " + what.format(shown, first, sp.decode(first)))
    if actions is not None:
        return (
            (actions[:n] == TAKE_DISCARD).astype(float),
            (actions[n : 2 * n] == KEEP).astype(float),
            np.eye(k)[actions[2 * n :]],
        )
    take = probs[:n, TAKE_DISCARD] / probs[:n, [DRAW_PILE, TAKE_DISCARD]].sum(axis=1)
    keep = probs[n : 2 * n, KEEP] / probs[n : 2 * n, [KEEP, DISCARD]].sum(axis=1)
    place = probs[2 * n :, :k] / probs[2 * n :, :k].sum(axis=1, keepdims=True)
    return take, keep, place


def greedy_policy(
    q: np.ndarray, rack_size: int, deck_size: int, seen: np.ndarray | None = None
) -> np.ndarray:
    """The greedy policy of action values ``q`` (observations x 14, higher is better) as action
    probabilities: the best legal action (the lowest id among equals) at the observations in
    ``seen`` (bool; default all), uniformly random over the legal actions elsewhere, where a
    learner that never updated them knows nothing."""
    sp = space(rack_size, deck_size)
    legal = sp.legal[np.arange(sp.num_observations) // sp.num_states]
    best = np.where(legal, q, -np.inf).argmax(axis=1)
    probs = np.zeros((sp.num_observations, NUM_ACTIONS), dtype=np.float32)
    probs[np.arange(sp.num_observations), best] = 1.0
    if seen is not None:
        unseen = ~np.asarray(seen, dtype=bool)
        probs[unseen] = legal[unseen] / legal[unseen].sum(axis=1, keepdims=True)
    return probs


def transitions(
    sp: SolitaireSpace, take: np.ndarray, keep: np.ndarray, place: np.ndarray
) -> tuple[sparse.csr_matrix, np.ndarray]:
    """The turn-to-turn transition matrix of a policy (``policy_probabilities``) over the DRAW
    states, and each state's probability of going Rack-O this turn."""
    n, per, k = sp.num_states, sp.masks - 1, sp.rack_size
    s = np.arange(n)
    row, mask = s // per, s % per + 1
    ascending = np.repeat(sp.ascending, sp.free)
    src, dst, prob, done = [], [], [], np.zeros(n)

    def add(origin: np.ndarray, r: np.ndarray, m: np.ndarray, weight: np.ndarray) -> None:
        """Turns from ``origin`` that reach PLACE state (r, m) with probability ``weight``."""
        t = sp.row_state(r, m)
        for slot in range(k):
            w = weight * place[t, slot]
            nz = w > 0
            moved = sp.place_next[r[nz], slot]
            fin = ascending[moved]
            np.add.at(done, origin[nz][fin], w[nz][fin])
            src.append(origin[nz][~fin])
            dst.append(sp.row_state(moved, m[nz])[~fin])
            prob.append(w[nz][~fin])

    add(s, row, mask, take)
    rid, j = row // sp.free, row % sp.free
    count = sp.draw_count[mask]
    for b in range(sp.bits):
        jc = np.where(b < j, b, b + 1)
        pick = (take < 1) & sp.mask_bits[b, mask]
        r_c = (rid * sp.free + jc)[pick]
        m_c = sp.draw_mask[j[pick], jc[pick], mask[pick]]
        t = sp.row_state(r_c, m_c)
        w = (1 - take[pick]) / count[pick]
        discard = w * (1 - keep[t])
        fin = ascending[r_c]
        np.add.at(done, s[pick][fin], discard[fin])
        nz = (discard > 0) & ~fin
        src.append(s[pick][nz]), dst.append(t[nz]), prob.append(discard[nz])
        add(s[pick], r_c, m_c, w * keep[t])
    src, dst, prob = (np.concatenate(a) for a in (src, dst, prob))
    return sparse.csr_matrix((prob, (src, dst)), shape=(n, n)), done


def _evaluate(
    sp: SolitaireSpace,
    probabilities: tuple[np.ndarray, ...],
    start: np.ndarray | None = None,
    turn_limit: int | None = None,
) -> tuple[np.ndarray, float]:
    """The exact turn-start values of a policy (``inf`` where Rack-O is not certain; NaN where
    neither the deal nor ``start`` reaches) and its expected turns from the deal; with
    ``turn_limit``, of ``min(turns, turn_limit)`` (the limit's sweeps of the chain)."""
    p, done = transitions(sp, *probabilities)
    n = sp.num_states
    reach = _reachable(p, sp.deal_rows() if start is None else start)
    if turn_limit is not None:
        live = np.flatnonzero(reach)
        sub, values = p[live][:, live].tocsr(), np.full(n, np.nan)
        v = np.zeros(len(live))
        for _ in range(turn_limit):
            v = 1.0 + sub @ v
        values[live] = v
        return values, _deal_mean(sp, values)
    # States that never go Rack-O, then every state that can get to one of them: infinite.
    back = p.T.tocsr()
    stuck = reach & ~_reachable(back, np.flatnonzero((done > 0) & reach))
    infinite = _reachable(back, np.flatnonzero(stuck)) & reach
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
