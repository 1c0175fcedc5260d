"""The structured policy: its features against a plain-Python reference, its export, its cache."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gymnasium import spaces  # noqa: E402

from racko_env.observation import (  # noqa: E402
    DISCARD_TOP,
    DRAW_TOP_KNOWN,
    HELD,
    IN_DISCARD,
    OBS_SIZE,
    PHASE,
    RACK,
    UNSEEN,
)
from racko_env.rules import deck_size  # noqa: E402
from train.common.afterstate import EXPERT_PLAN, NO_PLAN  # noqa: E402
from train.export import sample_observations  # noqa: E402
from train.sb3.policy import (  # noqa: E402
    GLOBAL_FEATURES,
    SLOT_FEATURES,
    PolicyGraph,
    RackFeatures,
    StructuredPolicy,
)


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


def _reference(obs: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """RackFeatures for one observation, card by card in plain Python."""
    rack = [round(float(x) * n) for x in obs[RACK]]
    held, top = round(float(obs[HELD]) * n), round(float(obs[DISCARD_TOP]) * n)
    known = round(float(obs[DRAW_TOP_KNOWN]) * n)
    drawing = obs[PHASE.start] > 0.5
    card = top if drawing else held
    has = 1.0 if card > 0 else 0.0
    unseen = [float(obs[UNSEEN.start + c]) for c in range(n)]
    avail = [unseen[c] + float(obs[IN_DISCARD.start + c]) for c in range(n)]
    base = _plan_cost(rack, avail, n)

    def placed(c: int, s: int) -> list[int]:
        return [c if i == s else x for i, x in enumerate(rack)]

    here = [_plan_cost(placed(card, s), avail, n) for s in range(10)] if card else [base] * 10
    best_here = min(here)
    gain = 0.0
    if drawing:
        pool = [known] if known else [c + 1 for c in range(n) if unseen[c] > 0]
        for c in pool:
            gain += base - min(base, min(_plan_cost(placed(c, s), avail, n) for s in range(10)))
        gain /= max(len(pool), 1)

    def slog(x: float) -> float:
        return math.copysign(math.log1p(abs(x)), x)

    def saving(b: float, c: float) -> list[float]:
        s = min(b, NO_PLAN) - min(c, NO_PLAN)
        return [slog(s), max(-10.0, min(10.0, s)) / 10.0]

    slots = []
    for s in range(10):
        r = rack[s]
        prev = rack[s - 1] if s else 0
        nxt = rack[s + 1] if s < 9 else n + 1
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
            ((r - 1) * 10 / n - s) / 10,
        ]
        slots.append(row + [float(s == i) for i in range(10)])
    take = base - best_here - gain if drawing and top > 0 else 0.0
    glob = [
        *obs[PHASE],
        *obs[[47, 48, 49, 43, 56]],
        *obs[50:53],
        *obs[53:56],
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
        sum(rack[i + 1] > rack[i] for i in range(9)) / 9,
    ]
    return np.array(slots, dtype=np.float64), np.array(glob, dtype=np.float64)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_features_match_a_plain_python_reference(num_players):
    n = deck_size(num_players)
    obs, _ = sample_observations(num_players, {}, 60, seed=num_players)
    slots, glob = RackFeatures(n)(torch.as_tensor(obs))
    assert slots.shape == (60, 10, SLOT_FEATURES) and glob.shape == (60, GLOBAL_FEATURES)
    for row in range(len(obs)):
        ref_slots, ref_glob = _reference(obs[row], n)
        np.testing.assert_allclose(slots[row].numpy(), ref_slots, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(glob[row].numpy(), ref_glob, rtol=1e-4, atol=1e-4)


def test_draw_rows_only_gives_the_same_features():
    obs, _ = sample_observations(2, {}, 300, seed=5)
    o = torch.as_tensor(obs)
    full = RackFeatures(40)(o)
    rows = RackFeatures(40, draw_rows_only=True)(o)
    for a, b in zip(full, rows, strict=True):
        assert torch.equal(a, b)


def _policy(num_cards: int = 40, seed: int = 0) -> StructuredPolicy:
    torch.manual_seed(seed)
    space = spaces.Box(0, 1, (OBS_SIZE,), np.float32)
    return StructuredPolicy(space, spaces.Discrete(14), lambda _: 1e-3, num_cards=num_cards)


def test_graph_plays_the_policys_masked_argmax():
    policy = _policy()
    obs, masks = sample_observations(2, {}, 200, seed=1)
    action, logits = PolicyGraph(policy)(torch.as_tensor(obs), torch.as_tensor(masks))
    with torch.no_grad():
        dist = policy.get_distribution(torch.as_tensor(obs), action_masks=masks)
    expected = dist.distribution.probs.argmax(1)
    assert torch.equal(action, expected)
    assert masks[np.arange(200), action.numpy()].all()
    assert (logits[~torch.as_tensor(masks)] < -1e7).all()


def test_cached_features_give_the_same_policy():
    from train.sb3.feature_cache import FeatureCache
    from train.sb3.vec_env import RackoVecEnv

    env = FeatureCache(RackoVecEnv(8, num_players=2, opponents=["heuristic"], seed=3), 40)
    cached = env.reset()
    assert cached.shape == (8, env.observation_space.shape[0])
    policy = _policy()
    with torch.no_grad():
        a = policy.extract_features(torch.as_tensor(cached), policy.features_extractor)
        b = policy.extract_features(
            torch.as_tensor(cached[:, :OBS_SIZE]), policy.features_extractor
        )
    assert torch.equal(a, b)
    masks = env.action_masks()
    for _ in range(30):  # terminal observations are cached too (SB3 bootstraps from them)
        actions = np.array([np.flatnonzero(m)[0] for m in masks])
        cached, _, dones, infos = env.step(actions)
        masks = env.action_masks()
        for done, info in zip(dones, infos, strict=True):
            if done:
                assert info["terminal_observation"].shape == cached.shape[1:]
