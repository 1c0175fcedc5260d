"""Teacher-data collection for the behaviour-cloning warm start (train/sb3/warmstart.py)."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from racko_env.observation import OBS_SIZE, OPP_PRESENT
from train.sb3.warmstart import collect_teacher_data


@pytest.mark.parametrize("teacher", ["heuristic", "expert"])
def test_batched_collection_records_the_teachers_own_decisions(teacher: str) -> None:
    obs, masks, actions = collect_teacher_data(
        teacher, 2, {}, 3000, seed=0, batched=True, n_envs=64
    )
    assert obs.shape == (3000, OBS_SIZE) and masks.shape == (3000, 14) and actions.shape == (3000,)
    assert masks[np.arange(3000), actions].all()
    assert len(np.unique(obs, axis=0)) > 2500  # many games, not one state repeated
    bot = agents.load(teacher, num_players=2)
    for i in np.random.default_rng(0).choice(3000, 200, replace=False):
        observation = {"observation": obs[i], "action_mask": masks[i].astype(np.int8)}
        assert bot.act(observation) == actions[i]


def test_batched_collection_is_deterministic_and_seeded() -> None:
    a = collect_teacher_data("expert", 2, {}, 1000, seed=3, batched=True, n_envs=32)
    b = collect_teacher_data("expert", 2, {}, 1000, seed=3, batched=True, n_envs=32)
    c = collect_teacher_data("expert", 2, {}, 1000, seed=4, batched=True, n_envs=32)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0], c[0])


def test_batched_collection_plays_the_requested_table() -> None:
    obs, masks, actions = collect_teacher_data(
        "expert", 3, {"bonus": True}, 500, seed=0, batched=True, n_envs=16
    )
    assert obs.shape == (500, OBS_SIZE) and masks[np.arange(500), actions].all()
    assert np.allclose(obs[:, OPP_PRESENT].sum(axis=1), 2)  # two opponents at every table


def test_batched_collection_refuses_a_teacher_without_a_vectorized_twin() -> None:
    with pytest.raises(ValueError, match="batched collection needs one of"):
        collect_teacher_data("agents.heuristic:HeuristicBot", 2, {}, 100, seed=0, batched=True)
    with pytest.raises(ValueError, match="decisions must be at least 1"):
        collect_teacher_data("expert", 2, {}, 0, seed=0, batched=True)


@pytest.mark.slow
def test_behaviour_cloning_learns_the_teacher() -> None:
    import torch
    from sb3_contrib import MaskablePPO

    from racko_env.gym_env import RackoGymEnv
    from train.sb3.warmstart import agreement, clone_actor, collect_teacher_data

    obs, masks, actions = collect_teacher_data("heuristic", 2, {}, 4000, seed=0)
    assert obs.shape == (4000, OBS_SIZE) and masks[np.arange(4000), actions].all()
    torch.manual_seed(0)
    env = RackoGymEnv(num_players=2, opponents=["random"])
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [64, 64]}, seed=0)
    before = agreement(model.policy, obs, masks, actions)
    losses = clone_actor(model.policy, obs, masks, actions, 15, 128, 1e-3, 0, holdout=0.0)["losses"]
    assert losses[-1] < losses[0]
    assert agreement(model.policy, obs, masks, actions) > max(before + 0.2, 0.65)
