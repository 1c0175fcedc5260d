"""The torch twin of the expert's planner (train/common/afterstate.py): plan costs equal
agents.expert's, for every card in every slot."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from reference_expert import ReferencePlanner  # the plain-Python planner

from agents.batched import BatchExpert
from agents.expert_params import ExpertParams
from agents.obs import decode
from racko_env.rules import deck_size
from train.common.afterstate import (
    NO_PLAN,
    card_tables,
    placement_plan_costs,
    plan_cost,
)
from train.common.onnx_export import sample_observations

PLAN = 3 * 10 + 2  # feature index of log1p(plan cost)
torch.set_num_threads(1)


def expert_games(num_players: int, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks met by the learner seat when expert plays expert."""
    from train.sb3.vec_env import RackoVecEnv

    env = RackoVecEnv(32, num_players, opponents=["expert"], seed=seed)
    expert = BatchExpert(num_players)
    obs, seen, masks = env.reset(), [], []
    while len(seen) * 32 < count:
        m = env.action_masks()
        seen.append(obs.copy())
        masks.append(m)
        obs, *_ = env.step(expert.act_batch(obs, m))
    return np.concatenate(seen)[:count], np.concatenate(masks)[:count]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_plan_cost_is_the_expert_planners_estimate(num_players):
    obs, masks = expert_games(num_players, 200, seed=num_players)
    n = deck_size(num_players)
    o = torch.as_tensor(obs)
    cum_a, _ = card_tables(o, n)
    rack = torch.round(o[:, :10] * n).long()[:, None, :]
    ours = plan_cost(rack, cum_a)[:, 0].numpy()
    for i in range(len(obs)):
        view = decode({"observation": obs[i], "action_mask": masks[i]})
        want = min(ReferencePlanner(view, ExpertParams()).value(view.rack), NO_PLAN)
        assert ours[i] == pytest.approx(want, rel=1e-4, abs=1e-3), (i, view.rack)


@pytest.mark.parametrize(
    ("num_players", "plan"), [(2, (2.0, 1.1)), (2, (1.0, 0.0)), (4, (1.0, 1.0))]
)
def test_placement_plan_costs_match_the_full_programme(num_players, plan):
    n = deck_size(num_players)
    obs, _ = sample_observations(num_players, {}, 120, seed=3)
    o = torch.as_tensor(obs)
    cum_a, _ = card_tables(o, n)
    rack = torch.round(o[:, :10] * n).long()
    cards = torch.arange(1, n + 1)[None].expand(len(o), n)
    fast, stay = placement_plan_costs(rack, cards, cum_a, *plan)
    eye = torch.eye(10, dtype=torch.bool)
    racks = torch.where(eye[None, None], cards[:, :, None, None], rack[:, None, None, :])
    full = plan_cost(racks.reshape(len(o), n * 10, 10), cum_a, *plan).reshape(len(o), n, 10)
    torch.testing.assert_close(fast, full, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(stay, plan_cost(rack[:, None], cum_a, *plan)[:, 0])


def test_plan_cost_known_answers():
    n = 40
    cum = torch.cat([torch.zeros(1, 1), torch.cumsum(torch.ones(1, n), 1)], 1)  # all 40 may come
    racks = torch.tensor([[list(range(1, 11)), [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]]])
    cost = plan_cost(racks, cum)[0]
    assert cost[0] == 0  # ascending: nothing to fill
    # descending keeps one card; the cheapest gap structure still costs many draws
    assert cost[1] > 10
    # gap power 1, width power 0: the plan cost is the number of slots still to fill
    swapped = torch.tensor([[[1, 2, 3, 4, 5, 6, 7, 8, 30, 9], [40, 2, 3, 4, 5, 6, 7, 8, 9, 1]]])
    assert plan_cost(swapped, cum, 1.0, 0.0)[0].tolist() == [1.0, 2.0]
    blocked = torch.cat([torch.zeros(1, 1), torch.zeros(1, n)], 1)  # nothing may come
    stuck = torch.tensor([[[5, 4, 3, 2, 1, 6, 7, 8, 9, 10]]])
    assert plan_cost(stuck, blocked)[0, 0] == NO_PLAN
