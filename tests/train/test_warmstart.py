"""The warm start: cloning moves only the actor, the critic warm-up only the critic, and helps."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gymnasium import spaces  # noqa: E402

from racko_env.observation import OBS_SIZE  # noqa: E402
from train.sb3.feature_cache import FeatureCache  # noqa: E402
from train.sb3.policy import StructuredPolicy  # noqa: E402
from train.sb3.vec_env import RackoVecEnv  # noqa: E402
from train.sb3.warmstart import (  # noqa: E402
    actor_parameters,
    clone_actor,
    collect_teacher_data,
    critic_parameters,
    rollout_returns,
    warm_critic,
)

# One worker builds the module fixtures (--dist loadgroup), not each worker its own copy.
pytestmark = pytest.mark.xdist_group("test_warmstart")


@pytest.fixture(scope="module")
def setup():
    torch.manual_seed(0)
    env = FeatureCache(RackoVecEnv(32, num_players=2, opponents=["heuristic"], seed=0), 40)
    policy = StructuredPolicy(
        env.observation_space,
        spaces.Discrete(14),
        lambda _: 1e-3,
        num_cards=40,
        slot_hidden=(16, 16),
        trunk_hidden=(32, 32),
    )
    return env, policy


def _snapshot(params):
    return [p.detach().clone() for p in params]


def _same(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_actor_and_critic_split_the_weights(setup):
    _, policy = setup
    actor, critic = actor_parameters(policy), critic_parameters(policy)
    assert critic and actor
    assert len(actor) + len(critic) == len(list(policy.parameters()))
    assert not {id(p) for p in actor} & {id(p) for p in critic}


def test_cloning_moves_the_actor_only_and_imitates(setup):
    env, policy = setup
    obs, masks, actions = collect_teacher_data("expert", 2, {}, 3000, seed=1, batched=True)
    inputs = env.augment(obs)
    critic_before = _snapshot(critic_parameters(policy))
    info = clone_actor(policy, inputs, masks, actions, 3, 256, 1e-3, seed=0)
    assert _same(critic_before, critic_parameters(policy))
    assert info["losses"][-1] < info["losses"][0]
    assert info["agreement"] > 0.7  # held out; a random policy agrees on about a third


@pytest.mark.slow
def test_critic_warm_up_lowers_the_held_out_value_loss_and_freezes_the_actor(setup):
    env, policy = setup
    inputs, returns = rollout_returns(policy, env, 4000, gamma=1.0, seed=0)
    assert inputs.shape[1] == env.observation_space.shape[0] > OBS_SIZE
    assert set(np.unique(returns)) <= {-1.0, 0.0, 1.0}  # whole episodes of the win reward
    actor_before = _snapshot(actor_parameters(policy))
    info = warm_critic(policy, inputs, returns, 5, 256, 1e-3, seed=0)
    assert _same(actor_before, actor_parameters(policy))
    assert info["value_loss_after"] < info["value_loss_before"]
