"""The torch twin of the expert's planner (train/network/features.py): plan costs equal
agents.expert's."""

from __future__ import annotations

import pytest
import torch
from reference_expert import ReferencePlanner  # the plain-Python planner

from agents.batched import BatchExpert
from agents.expert_params import ExpertParams
from agents.obs import decode
from racko_env.rules import deck_size
from train.network.features import NO_PLAN, card_tables, placement_plan_costs

torch.set_num_threads(1)


def plan_cost(rack: torch.Tensor, cum: torch.Tensor, *plan: float) -> torch.Tensor:
    """The plan cost (B,) of each rack (B, 10) as it is."""
    return placement_plan_costs(rack, rack[:, :1], cum, *plan)[1]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_plan_cost_is_the_expert_planners_estimate(num_players):
    from train.sb3.vec_env import RackoVecEnv

    env = RackoVecEnv(32, num_players, opponents=["expert"], seed=num_players)
    expert = BatchExpert(num_players)
    obs = env.reset()
    n = deck_size(num_players)
    for _ in range(7):
        masks = env.action_masks()
        o = torch.as_tensor(obs)
        ours = plan_cost(torch.round(o[:, :10] * n).long(), card_tables(o, n)[0]).numpy()
        for i in range(len(obs)):
            view = decode({"observation": obs[i], "action_mask": masks[i]})
            want = min(ReferencePlanner(view, ExpertParams()).value(view.rack), NO_PLAN)
            assert ours[i] == pytest.approx(want, rel=1e-4, abs=1e-3), (i, view.rack)
        obs, *_ = env.step(expert.act_batch(obs, masks))


def test_plan_cost_known_answers():
    n = 40
    cum = torch.cat([torch.zeros(1, 1), torch.cumsum(torch.ones(1, n), 1)], 1)  # all 40 may come
    racks = torch.tensor([list(range(1, 11)), [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]])
    cost = plan_cost(racks, cum.expand(2, -1))
    assert cost[0] == 0  # ascending: nothing to fill
    # descending keeps one card; the cheapest gap structure still costs many draws
    assert cost[1] > 10
    # gap power 1, width power 0: the plan cost is the number of slots still to fill
    swapped = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8, 30, 9], [40, 2, 3, 4, 5, 6, 7, 8, 9, 1]])
    assert plan_cost(swapped, cum.expand(2, -1), 1.0, 0.0).tolist() == [1.0, 2.0]
    blocked = torch.zeros(1, n + 1)  # nothing may come
    stuck = torch.tensor([[5, 4, 3, 2, 1, 6, 7, 8, 9, 10]])
    assert plan_cost(stuck, blocked)[0] == NO_PLAN
