"""The exact solitaire solver (racko_env.solitaire): the state numbering, the optimum against a
brute-force enumeration, and the exact evaluation of policies."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD
from racko_env.solitaire import evaluate, solve, space
from racko_env.solitaire_space import SolitaireSpace, SolitaireState, check_size


def _ascending(rack: tuple[int, ...]) -> bool:
    return all(a < b for a, b in zip(rack, rack[1:], strict=False))


def _brute_force(k: int, n: int) -> tuple[dict, float]:
    """Plain value iteration over the turn-start states (rack, discard top, draw set) found by
    playing every move from every deal, each transition written out from the rules."""
    cards = set(range(1, n + 1))

    def successors(state):
        rack, top, draw = state
        outside = cards - set(rack)
        take = []  # (next rack, next top, next draw) per slot: deterministic
        for i in range(k):
            new = rack[:i] + (top,) + rack[i + 1 :]
            take.append((new, rack[i], draw))
        drawn = []  # per drawn card: the choices (discard, then each slot)
        for c in sorted(draw):
            rest = draw - {c}
            if not rest:  # refilled at the end of the turn with all but the new top
                rest = frozenset(outside - {c})
            options = [(rack, c, rest)]
            for i in range(k):
                options.append((rack[:i] + (c,) + rack[i + 1 :], rack[i], rest))
            drawn.append(options)
        return take, drawn

    deals = []
    for rack in itertools.permutations(sorted(cards), k):
        for top in cards - set(rack):
            deals.append((rack, top, frozenset(cards - set(rack) - {top})))
    states, frontier, table = set(deals), list(deals), {}
    while frontier:
        nxt = []
        for s in frontier:
            table[s] = successors(s)
            for t in table[s][0] + [o for opts in table[s][1] for o in opts]:
                if not _ascending(t[0]) and t not in states:
                    states.add(t)
                    nxt.append(t)
        frontier = nxt
    values = dict.fromkeys(states, 0.0)

    def end(t):
        return 0.0 if _ascending(t[0]) else values[t]

    for _ in range(10_000):
        delta = 0.0
        for s in states:
            take, drawn = table[s]
            best_take = min(end(t) for t in take)
            best_draw = sum(min(end(t) for t in opts) for opts in drawn) / len(drawn)
            new = 1.0 + min(best_take, best_draw)
            delta = max(delta, abs(new - values[s]))
            values[s] = new
        if delta < 1e-13:
            break
    return values, sum(values[d] for d in deals) / len(deals)


@pytest.mark.parametrize("size", [(3, 5), (3, 6)])
def test_the_optimum_equals_a_brute_force_enumeration(size: tuple[int, int]) -> None:
    k, n = size
    values, turns = _brute_force(k, n)
    solution = solve(k, n)
    assert solution.expected_turns == pytest.approx(turns, abs=1e-9)
    sp = solution.space
    for (rack, top, draw), value in values.items():
        index = sp.index(0, rack, top, draw)
        assert solution.values[index] == pytest.approx(value, abs=1e-9)


def test_the_state_numbering_is_a_bijection() -> None:
    sp = SolitaireSpace(3, 6)
    seen = set()
    for observation in range(sp.num_observations):
        state = sp.decode(observation)
        assert isinstance(state, SolitaireState)
        assert len(set(state.rack) | {state.card} | state.draw) == 3 + 1 + len(state.draw)
        assert state.draw and max(state.rack + (state.card,) + tuple(state.draw)) <= 6
        assert sp.index(state.phase, state.rack, state.card, state.draw) == observation
        seen.add((state.phase, state.rack, state.card, state.draw))
    # every (phase, rack, card, nonempty draw set) once: 3 * 6*5*4 * 3 * (2**2 - 1)
    assert len(seen) == sp.num_observations == 3 * 120 * 3 * 3


def test_the_numbering_refuses_impossible_states() -> None:
    sp = space(3, 8)
    with pytest.raises(ValueError, match="rack"):
        sp.index(0, (1, 1, 2), 3, frozenset({4}))
    with pytest.raises(ValueError, match="outside the rack"):
        sp.index(0, (1, 2, 3), 2, frozenset({4}))
    with pytest.raises(ValueError, match="draw pile"):
        sp.index(0, (1, 2, 3), 4, frozenset())
    with pytest.raises(ValueError, match="tabular observation"):
        sp.decode(sp.num_observations)
    with pytest.raises(ValueError, match="deck_size must be at least"):
        check_size(4, 5)


def test_the_optimal_policy_evaluates_to_the_optimum() -> None:
    solution = solve(3, 8)
    assert evaluate(solution.policy, 3, 8) == pytest.approx(solution.expected_turns, abs=1e-9)
    # the optimum is below every deal's start and a rack dealt ascending takes exactly one turn
    sp = solution.space
    deal = solution.values[sp.deal_rows()]
    assert deal.min() == 1.0 and 1.0 < solution.expected_turns < deal.max()


def test_other_policies_are_never_better_than_the_optimum() -> None:
    solution = solve(3, 8)
    sp, n = solution.space, solution.space.num_states
    rng = np.random.default_rng(0)
    for _ in range(5):  # the optimal policy with random changes
        table = solution.policy.astype(np.int64)
        change = rng.random(len(table)) < 0.2
        table[:n][change[:n]] = rng.choice([DRAW_PILE, TAKE_DISCARD], change[:n].sum())
        table[n : 2 * n][change[n : 2 * n]] = rng.choice([KEEP, DISCARD], change[n : 2 * n].sum())
        table[2 * n :][change[2 * n :]] = rng.integers(0, 3, change[2 * n :].sum())
        assert evaluate(table, 3, 8) >= solution.expected_turns - 1e-12
    # always drawing, keeping and placing into the front slot can go on forever
    looping = np.concatenate([np.full(n, DRAW_PILE), np.full(n, KEEP), np.zeros(n, int)])
    assert math.isinf(evaluate(looping, 3, 8))
    # always drawing and discarding only finishes racks dealt ascending: infinite
    assert math.isinf(evaluate(np.where(looping == KEEP, DISCARD, looping), 3, 8))
    assert sp.num_observations == 3 * n


def test_evaluate_refuses_a_table_that_is_not_a_policy() -> None:
    sp = space(3, 8)
    with pytest.raises(ValueError, match="one integer action id per tabular observation"):
        evaluate(np.zeros(5, dtype=int), 3, 8)
    table = solve(3, 8).policy.astype(int)
    table[0] = KEEP
    with pytest.raises(ValueError, match="at observation 0 .* not legal"):
        evaluate(table, 3, 8)
    assert table.shape == (sp.num_observations,)
