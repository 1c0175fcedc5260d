"""The feature kernel (``agents.features``) against the plain-Python definition and the torch module.

``reference_features`` is the definition of the structured policy's features written out card by
card; the kernel must equal it, and the torch module ``train.network.features.RackFeatures`` (what the
exported ONNX graph computes), on random observations of every player count and on observations
from real play. Both fast versions compute in float64 and return float32, so they agree to
float32 rounding: ``TOL`` (1e-5, absolute and relative).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.batched import BatchExpert, BatchHeuristic
from agents.features import (
    AGE_SCALE,
    EXPERT_PLAN,
    GLOBAL_FEATURES,
    NO_PLAN,
    OPP_STATS,
    SLOT_FEATURES,
    TAKE_DEALT,
    TAKE_REFILLED,
    Planner,
    exact_costs,
    feature_planner,
    feature_shape,
    flat_features,
    rack_features,
)
from racko_env.config import RulesConfig
from racko_env.observation import (
    DEFAULT,
    HELD,
    IN_DISCARD,
    OBS_SIZE,
    OPP_SLOT_CHANGED,
    OPP_SLOT_DRAWN,
    OPP_SLOT_OUT,
    OPP_SLOTS,
    PHASE,
    RACK,
    TURN,
    UNSEEN,
    Layout,
    layout_for,
)
from racko_env.rules import deck_size
from racko_env.vector import VectorRacko

TOL = 1e-5
# (players, rack slots, deck) of the games checked beyond the rule book's: solitaire's small
# games the exact solver answers, full-size solitaire, racks of 5 and 6 with the rule book's cards
# per slot, and the rule book's layout with another deck
GAMES = [
    (1, 3, 8),
    (1, 4, 10),
    (1, 4, 11),
    (1, 10, 40),
    (2, 5, 20),
    (3, 6, 30),
    (4, 3, 14),
    (2, 10, 24),
]
SLOW_GAMES = {(1, 10, 40), (3, 6, 30), (2, 10, 24)}


def game_params() -> list:
    """``GAMES`` as pytest parameters, the larger ones marked ``slow``."""
    return [
        pytest.param(g, id=f"{g[0]}p-k{g[1]}-N{g[2]}", marks=[pytest.mark.slow] * (g in SLOW_GAMES))
        for g in GAMES
    ]


def game_config(game: tuple[int, int, int]) -> RulesConfig:
    players, k, n = game
    return RulesConfig(num_players=players, rack_size=k, deck_size=n)


def _plan_cost(vals: list[int], avail: list[int], n: int) -> float:
    """The expert planner's cheapest ascending completion, written out as its definition."""
    gp, wp = EXPERT_PLAN
    cum = [0]
    for c in range(1, n + 1):
        cum.append(cum[-1] + avail[c - 1])
    cum.append(cum[-1])
    total = max(cum[n], 1)
    seq = [0, *vals, n + 1]
    best = [0.0] + [math.inf] * (len(seq) - 1)
    for j in range(1, len(seq)):
        for i in range(j):
            lo, hi, g = seq[i], seq[j], j - i - 1
            if lo >= hi or best[i] == math.inf:
                continue
            k = cum[hi - 1] - cum[lo]
            if k < g:
                continue
            cost = (total / max(k, 1)) ** wp * g**gp
            best[j] = min(best[j], best[i] + cost)
    return min(best[-1], NO_PLAN)


def reference_opponent_facts(obs: np.ndarray, c: int, n: int, lay: Layout = DEFAULT) -> list[float]:
    """``OPP_STATS`` of card c: the next opponent's zone slot for c and its public history (all 0
    without an opponent)."""
    k = lay.rack_size
    if c <= 0 or lay.opponents == 0:
        return [0.0] * len(OPP_STATS)
    z = (c - 1) * k // n
    opp = [round(float(x) * n) for x in obs[lay.OPP_SLOTS][:k]]
    changed = float(obs[lay.OPP_SLOT_CHANGED.start + z])
    dealt = changed <= 0.0
    left = 0.0 if z == 0 or opp[z - 1] == 0 else (1.0 if opp[z - 1] < c else -1.0)
    right = 0.0 if z == k - 1 or opp[z + 1] == 0 else (1.0 if opp[z + 1] > c else -1.0)
    out = round(float(obs[lay.OPP_SLOT_OUT.start + z]) * n)
    room = left >= 0 and right >= 0
    return [
        float(dealt),
        float(obs[lay.OPP_SLOT_DRAWN.start + z]),
        float(opp[z] > 0),
        (opp[z] - c) / n if opp[z] else 0.0,
        left,
        right,
        min(max(float(obs[lay.TURN]) - changed, 0.0) * AGE_SCALE, 1.0),
        (out - c) / n if out else 0.0,
        (TAKE_DEALT if dealt else TAKE_REFILLED) * room,
    ]


def reference_features(
    obs: np.ndarray, n: int, lay: Layout = DEFAULT
) -> tuple[np.ndarray, np.ndarray]:
    """``RackFeatures`` for one observation of layout ``lay``, card by card in plain Python (the
    definition)."""
    k = lay.rack_size
    rack = [round(float(x) * n) for x in obs[lay.RACK]]
    held, top = round(float(obs[lay.HELD]) * n), round(float(obs[lay.DISCARD_TOP]) * n)
    known = round(float(obs[lay.DRAW_TOP_KNOWN]) * n)
    drawing = obs[lay.PHASE.start] > 0.5
    card = top if drawing else held
    has = 1.0 if card > 0 else 0.0
    unseen = [float(obs[lay.UNSEEN.start + c]) for c in range(n)]
    avail = [unseen[c] + float(obs[lay.IN_DISCARD.start + c]) for c in range(n)]
    base = _plan_cost(rack, avail, n)

    def placed(c: int, s: int) -> list[int]:
        return [c if i == s else x for i, x in enumerate(rack)]

    here = [_plan_cost(placed(card, s), avail, n) for s in range(k)] if card else [base] * k
    best_here = min(here)
    gain = 0.0
    if drawing:
        pool = [known] if known else [c + 1 for c in range(n) if unseen[c] > 0]
        for c in pool:
            gain += base - min(base, min(_plan_cost(placed(c, s), avail, n) for s in range(k)))
        gain /= max(len(pool), 1)

    def slog(x: float) -> float:
        return math.copysign(math.log1p(abs(x)), x)

    def saving(b: float, c: float) -> list[float]:
        s = min(b, NO_PLAN) - min(c, NO_PLAN)
        return [slog(s), max(-10.0, min(10.0, s)) / 10.0]

    slots = []
    for s in range(k):
        r = rack[s]
        prev = rack[s - 1] if s else 0
        nxt = rack[s + 1] if s < k - 1 else n + 1
        below_a = sum(avail[: r - 1])
        below_u = sum(unseen[: r - 1])
        row = [
            r / n,
            below_a / 10,
            below_u / 10,
            prev / n,
            nxt / n,
            float(prev < r),
            float(r < nxt),
            (card - r) / n * has,
            float(prev < card < nxt) * has,
            has,
            math.log1p(min(here[s], NO_PLAN)) * has,
            *[x * has for x in saving(base, here[s])],
            float(here[s] <= best_here + 1e-6) * has,
            float(here[s] >= NO_PLAN) * has,
            ((r - 1) * k / n - s) / k,
        ]
        one_hot = [float(s == i) for i in range(k)]
        slots.append(row + one_hot + reference_opponent_facts(obs, r, n, lay))
    take = base - best_here - gain if drawing and top > 0 else 0.0
    glob = [
        *obs[lay.PHASE],
        *obs[[lay.HELD_FROM_DISCARD, lay.TURN, lay.OWN_SCORE, lay.DRAW_SIZE, lay.PARTNERS]],
        *obs[lay.OPP_SCORES],
        *obs[lay.OPP_PRESENT],
        card / n,
        held / n,
        top / n,
        known / n,
        has,
        math.log1p(min(base, NO_PLAN)),
        float(base >= NO_PLAN),
        math.log1p(min(best_here, NO_PLAN)) * has,
        *[x * has for x in saving(base, best_here)],
        *saving(gain, 0.0),
        *saving(take, 0.0),
        sum(avail) / n,
        sum(unseen) / n,
        sum(rack[i + 1] > rack[i] for i in range(k - 1)) / (k - 1),
        *reference_opponent_facts(obs, card, n, lay),
    ]
    return np.array(slots, dtype=np.float64), np.array(glob, dtype=np.float64)


def random_observations(
    num_players: int, count: int, seed: int, config: RulesConfig | None = None
) -> np.ndarray:
    """Observations with every field drawn at random (a rack of distinct cards, random card
    sets, phases, known tops): corners real play rarely reaches, such as racks no plan completes.
    ``config``: a game of other sizes (its layout; default the rule book's for ``num_players``)."""
    config = config or RulesConfig(num_players=num_players)
    lay = layout_for(config)
    n, k = config.num_cards, lay.rack_size
    rng = np.random.default_rng(seed)
    obs = rng.random((count, lay.size)).astype(np.float32)
    for row in obs:
        deck = rng.permutation(n) + 1
        row[lay.RACK] = deck[:k] / n
        rest = deck[k:]
        where = rng.integers(0, 3, size=rest.size)  # 0 unseen, 1 in the discard pile, 2 neither
        row[lay.UNSEEN] = 0.0
        row[lay.IN_DISCARD] = 0.0
        row[lay.UNSEEN.start + rest[where == 0] - 1] = 1.0
        row[lay.IN_DISCARD.start + rest[where == 1] - 1] = 1.0
        row[lay.PHASE] = 0.0
        phase = rng.integers(0, 4)  # 3: not on turn
        if phase < 3:
            row[lay.PHASE.start + phase] = 1.0
        row[lay.HELD] = rest[-1] / n if phase > 0 and rng.random() < 0.9 else 0.0
        row[lay.DISCARD_TOP] = rest[-2] / n if rng.random() < 0.9 else 0.0
        row[lay.DRAW_TOP_KNOWN] = rest[-3] / n if rng.random() < 0.2 else 0.0
        row[lay.OPP_PRESENT] = 0.0
        row[lay.OPP_PRESENT.start : lay.OPP_PRESENT.start + num_players - 1] = 1.0
        # the next opponent's slots: about half known, some still dealt, some drawn, some outs
        slots = row[lay.OPP_SLOTS]
        slots[:] = rng.integers(1, n + 1, size=slots.size) / n
        slots[rng.random(slots.size) < 0.5] = 0.0
        row[lay.OPP_SLOT_CHANGED][rng.random(row[lay.OPP_SLOT_CHANGED].size) < 0.4] = 0.0
        row[lay.OPP_SLOT_DRAWN] = rng.random(row[lay.OPP_SLOT_DRAWN].size) < 0.5
        row[lay.OPP_SLOT_OUT] = rng.integers(0, n + 1, size=row[lay.OPP_SLOT_OUT].size) / n
    return obs


def real_observations(
    num_players: int, games: int, seed: int, config: RulesConfig | None = None
) -> np.ndarray:
    """Every decision's observation in games where ``expert`` plays ``heuristic`` (all seats;
    in solitaire ``expert`` plays every other game); ``config``: a game of other sizes."""
    options = {} if config is None else config.to_dict()
    options.pop("num_players", None)
    options["turn_limit"] = 150
    vec = VectorRacko(games, num_players, seed=seed, **options)
    bots = [BatchExpert(num_players, **options), BatchHeuristic(num_players, **options)]
    out = []
    live = np.ones(games, dtype=bool)
    g_all = np.arange(games)
    while live.any():
        g = g_all[live]
        seat = vec.game.current[g]
        obs, masks = vec.observe(g, seat), vec.action_masks(g, seat)
        out.append(obs)
        actions = np.zeros(g.size, dtype=np.intp)
        owner = (seat + g) % 2 if num_players == 1 else seat % 2
        for k, bot in enumerate(bots):
            rows = np.flatnonzero(owner == k)
            if rows.size:
                actions[rows] = bot.act_batch(obs[rows], masks[rows])
        result = vec.step(actions, g)
        live[g[result.done]] = False
    return np.concatenate(out)


def _observations(num_players: int, kind: str, config: RulesConfig | None = None) -> np.ndarray:
    if kind == "random":
        return random_observations(num_players, 100, seed=num_players, config=config)
    obs = real_observations(num_players, 12, seed=num_players, config=config)
    return obs[np.random.default_rng(0).permutation(len(obs))[:150]]


def _check_against_reference(
    obs: np.ndarray, n: int, slots: np.ndarray, glob: np.ndarray, lay: Layout = DEFAULT
) -> None:
    for row in range(len(obs)):
        ref_slots, ref_glob = reference_features(obs[row], n, lay)
        np.testing.assert_allclose(slots[row], ref_slots, rtol=TOL, atol=TOL)
        np.testing.assert_allclose(glob[row], ref_glob, rtol=TOL, atol=TOL)


@pytest.mark.parametrize("kind", ["random", pytest.param("real", marks=pytest.mark.slow)])
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_kernel_equals_the_plain_python_definition(num_players, kind):
    n = deck_size(num_players)
    obs = _observations(num_players, kind)
    slots, glob = rack_features(obs, n)
    assert slots.shape == (len(obs), 10, SLOT_FEATURES) and glob.shape == (
        len(obs),
        GLOBAL_FEATURES,
    )
    assert slots.dtype == glob.dtype == np.float32
    _check_against_reference(obs, n, slots, glob)


@pytest.mark.parametrize("kind", ["random", "real"])
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_kernel_equals_the_torch_module(num_players, kind):
    torch = pytest.importorskip("torch")
    from train.network.features import RackFeatures

    n = deck_size(num_players)
    obs = _observations(num_players, kind)
    t_slots, t_glob = RackFeatures(n)(torch.as_tensor(obs))
    slots, glob = rack_features(obs, n)
    np.testing.assert_allclose(slots, t_slots.numpy(), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(glob, t_glob.numpy(), rtol=TOL, atol=TOL)


@pytest.mark.parametrize("kind", ["random", "real"])
@pytest.mark.parametrize("game", game_params())
def test_kernel_equals_the_definition_and_the_torch_module_at_every_size(game, kind):
    """Every size the rules allow: the kernel, the plain-Python definition and the torch module
    agree on the game's own layout (solitaire's without opponents, smaller racks)."""
    config = game_config(game)
    lay, n = layout_for(config), config.num_cards
    obs = _observations(game[0], kind, config)
    slots, glob = rack_features(obs, n, lay)
    shape = feature_shape(lay)
    assert slots.shape == (len(obs), game[1], shape.slot_features)
    assert glob.shape == (len(obs), shape.global_features)
    _check_against_reference(obs, n, slots, glob, lay)
    torch = pytest.importorskip("torch")
    from train.network.features import RackFeatures

    t_slots, t_glob = RackFeatures(n, layout=lay)(torch.as_tensor(obs))
    np.testing.assert_allclose(slots, t_slots.numpy(), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(glob, t_glob.numpy(), rtol=TOL, atol=TOL)
    drawn = RackFeatures(n, draw_rows_only=True, layout=lay)(torch.as_tensor(obs))
    np.testing.assert_allclose(drawn[1].numpy(), t_glob.numpy(), rtol=TOL, atol=TOL)


def test_feature_shapes_follow_the_layout():
    """k slot blocks of (stats, k-slot one-hot, opponent facts); the global features copy the
    layout's own entries (none per opponent in solitaire, whose opponent facts are all 0)."""
    assert feature_shape(DEFAULT).slot_features == SLOT_FEATURES == 16 + 10 + len(OPP_STATS)
    assert feature_shape(DEFAULT).global_features == GLOBAL_FEATURES == 14 + 17 + len(OPP_STATS)
    solitaire = layout_for(RulesConfig(num_players=1, rack_size=4, deck_size=10))
    shape = feature_shape(solitaire)
    assert (shape.rack_size, shape.slot_features, shape.global_features) == (4, 29, 34)
    assert shape.size == 4 * 29 + 34
    obs = random_observations(
        1, 30, seed=1, config=RulesConfig(num_players=1, rack_size=4, deck_size=10)
    )
    slots, glob = rack_features(obs, 10, solitaire)
    assert not slots[:, :, shape.slot_opp :].any() and not glob[:, -len(OPP_STATS) :].any()
    two = layout_for(RulesConfig(num_players=2, rack_size=5, deck_size=20))
    assert feature_shape(two).global_features == 8 + 2 + 17 + len(OPP_STATS)
    with pytest.raises(ValueError, match=r"obs must have shape \(B, 35\)"):
        rack_features(np.zeros((2, OBS_SIZE), np.float32), 10, solitaire)
    with pytest.raises(ValueError, match="num_cards must be 1..10"):
        rack_features(obs, 11, solitaire)


def _todays_kernel():
    """``agents/features.py`` as it was before the features took any size (commit da1cbd2), read
    from git into a module of its own; None where git or that commit is not at hand."""
    import importlib.util
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    if shutil.which("git") is None:
        return None
    done = subprocess.run(
        ["git", "show", "da1cbd2:agents/features.py"], cwd=root, capture_output=True, text=True
    )
    if done.returncode != 0:
        return None
    folder = Path(tempfile.mkdtemp())
    path = folder / "features_da1cbd2.py"
    path.write_text(done.stdout, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("features_da1cbd2", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's cache and dataclasses look the module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "num_players", [2, pytest.param(3, marks=pytest.mark.slow), pytest.param(4, marks=pytest.mark.slow)]
)
def test_rule_book_features_are_todays_to_the_bit(num_players):
    """At the rule book's sizes the features are exactly the ones computed before they took any
    size: the shipped bots and their results stay as they are."""
    old = _todays_kernel()
    if old is None:
        pytest.skip("git and commit da1cbd2 are needed to read the earlier kernel")
    n = deck_size(num_players)
    for kind in ("random", "real"):
        obs = _observations(num_players, kind)
        for new, was in zip(rack_features(obs, n), old.rack_features(obs, n), strict=True):
            assert new.tobytes() == was.tobytes()


@pytest.mark.slow
def test_kernel_rows_are_independent_and_float64_input_gives_the_same():
    obs = real_observations(2, 6, seed=9)
    slots, glob = rack_features(obs, 40)
    one = [rack_features(obs[i : i + 1], 40) for i in (0, len(obs) // 2, len(obs) - 1)]
    for (s, g), i in zip(one, (0, len(obs) // 2, len(obs) - 1), strict=True):
        assert np.array_equal(s[0], slots[i]) and np.array_equal(g[0], glob[i])
    s64, g64 = rack_features(obs.astype(np.float64), 40)
    assert np.array_equal(s64, slots) and np.array_equal(g64, glob)
    assert flat_features(slots, glob).shape == (len(obs), 10 * SLOT_FEATURES + GLOBAL_FEATURES)
    empty = rack_features(obs[:0], 40)
    assert empty[0].shape == (0, 10, SLOT_FEATURES) and empty[1].shape == (0, GLOBAL_FEATURES)


def test_planner_placements_equal_planning_each_new_rack():
    """Each placement's cost from the prefix/suffix tables equals a fresh plan of that rack."""
    obs = random_observations(2, 40, seed=3)
    n = 40
    rack = np.rint(obs[:, RACK] * n).astype(np.int64)
    avail = (obs[:, UNSEEN][:, :n] + obs[:, IN_DISCARD][:, :n]).astype(np.int64)
    plan = feature_planner(rack, avail)
    cards = np.arange(1, n + 1)[None, :].repeat(len(obs), axis=0)
    costs = plan.placements(cards)
    for row in range(0, len(obs), 4):
        for c in (1, 7, 20, 33, 40):
            for s in range(10):
                placed = rack[row].copy()
                placed[s] = c
                fresh = feature_planner(placed[None], avail[row : row + 1]).base[0]
                assert costs[row, c - 1, s] == pytest.approx(fresh, rel=1e-12, abs=1e-12)
    # the tables' base is the definition's plan cost
    for row in range(len(obs)):
        want = _plan_cost(rack[row].tolist(), avail[row].tolist(), n)
        assert min(plan.base[row], NO_PLAN) == pytest.approx(want, rel=1e-12)


def test_planner_rejects_cards_out_of_range():
    costs = exact_costs(40)
    vals = np.array([[0, *range(1, 11), 41]])
    prefix = np.zeros((1, 42), dtype=np.int64)
    plan = Planner(vals, prefix, costs, np.zeros(1, dtype=np.int64))
    with pytest.raises(ValueError, match="cards must be ints 0..40"):
        plan.placements(np.array([[41]]))
    with pytest.raises(ValueError, match="shape"):
        rack_features(np.zeros((3, 170), np.float32), 40)


def test_opponent_facts_read_the_next_opponents_zone_slot_history():
    """A discard whose zone slot (next opponent) still holds its dealt card reads "dealt" and the
    higher take estimate; the same slot refilled from the draw pile reads "drawn" and the lower
    one; a known neighbour that leaves no room zeroes the estimate. The facts are the last
    ``len(OPP_STATS)`` slot features, and the decision card's are the last global ones."""
    n = 40
    obs = random_observations(2, 1, seed=5)[0]
    obs[RACK] = np.arange(1, 11) * 4 / n  # slot s holds 4(s + 1); card 20 (slot 4) is zone 4
    obs[PHASE] = 0.0
    obs[PHASE.start + 2] = 1.0  # placing a held card
    obs[HELD] = 21 / n
    obs[OPP_SLOTS] = 0.0
    obs[OPP_SLOT_CHANGED] = 0.0
    obs[OPP_SLOT_DRAWN] = 0.0
    obs[OPP_SLOT_OUT] = 0.0
    obs[TURN] = 0.05
    k = len(OPP_STATS)
    facts = dict(zip(OPP_STATS, rack_features(obs[None], n)[0][0, 4, -k:], strict=True))
    assert facts["opp_dealt"] == 1 and facts["opp_drawn"] == 0 and facts["opp_known"] == 0
    assert facts["opp_take"] == pytest.approx(TAKE_DEALT)
    assert facts["opp_age"] == pytest.approx(min(0.05 * AGE_SCALE, 1.0))
    obs[OPP_SLOT_CHANGED.start + 4] = 0.04
    obs[OPP_SLOT_DRAWN.start + 4] = 1.0
    obs[OPP_SLOT_OUT.start + 4] = 30 / n
    slots, glob = rack_features(obs[None], n)
    facts = dict(zip(OPP_STATS, slots[0, 4, -k:], strict=True))
    assert facts["opp_dealt"] == 0 and facts["opp_drawn"] == 1
    assert facts["opp_take"] == pytest.approx(TAKE_REFILLED)
    assert facts["opp_out_gap"] == pytest.approx((30 - 20) / n)
    assert facts["opp_age"] == pytest.approx(0.01 * AGE_SCALE, rel=1e-4)
    held = dict(zip(OPP_STATS, glob[0, -k:], strict=True))  # the held card 21: zone 5, dealt
    assert held["opp_dealt"] == 1 and held["opp_take"] == pytest.approx(TAKE_DEALT)
    obs[OPP_SLOTS.start + 3] = 25 / n  # the opponent's slot left of zone 4 holds 25 > 20
    facts = dict(zip(OPP_STATS, rack_features(obs[None], n)[0][0, 4, -k:], strict=True))
    assert facts["opp_left"] == -1 and facts["opp_take"] == 0
