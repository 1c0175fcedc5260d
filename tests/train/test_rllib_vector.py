"""The RLlib trainer's vector path (train/rllib/vector.py): RLlib's env runner builds
``RackoVectorEnv`` through gymnasium's vector entry point, the module's dict observations, seeds,
and the league snapshots the env runners seat (they play the module's own moves)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from agents.features import GLOBAL_FEATURES, RACK_SIZE, SLOT_FEATURES
from racko_env.observation import OBS_SIZE

pytest.importorskip("ray.rllib", reason="the cluster extra (ray[rllib]) is not installed")
from racko_env.vector_env import RackoVectorEnv  # noqa: E402
from train.common.config import load_config  # noqa: E402
from train.rllib.config import RLlibConfig  # noqa: E402
from train.rllib.env import observation_space  # noqa: E402
from train.rllib.vector import DictObservations, SnapshotLeague, make_vector_env  # noqa: E402

WIDTH = RACK_SIZE * SLOT_FEATURES + GLOBAL_FEATURES

REPO = Path(__file__).resolve().parents[2]
CFG = load_config(REPO / "configs" / "smoke_rllib.yaml", RLlibConfig)


def _env(num_envs: int = 8, salt: int = 0) -> DictObservations:
    return make_vector_env({**CFG.env_config(salt), "num_envs": num_envs})


def _play(env: DictObservations, seed: int, steps: int) -> list:
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = []
    for _ in range(steps):
        masks = obs["action_mask"] > 0.5
        step = env.step((rng.random(masks.shape) * masks).argmax(axis=1))
        obs = step[0]
        out.append(step)
    return out


def test_dict_observations_fit_the_modules_space() -> None:
    env = _env()
    assert isinstance(env.unwrapped, RackoVectorEnv)
    assert env.single_observation_space == observation_space(features=True)
    obs, info = env.reset(seed=3)
    assert info == {}
    assert obs["observation"].shape == (8, OBS_SIZE) and obs["features"].shape == (8, WIDTH)
    assert obs["action_mask"].dtype == np.float32
    assert env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs["action_mask"] > 0.5, env.unwrapped.action_masks())


def test_seeds_and_salt_fix_the_stream() -> None:
    a, b, c = _play(_env(), 5, 40), _play(_env(), 5, 40), _play(_env(salt=7), 5, 40)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x[0]["observation"], y[0]["observation"])
        np.testing.assert_array_equal(x[1], y[1])
    assert any(
        not np.array_equal(x[0]["observation"], z[0]["observation"])
        for x, z in zip(a, c, strict=True)
    )


@pytest.mark.slow
def test_rllib_env_runner_builds_it_through_the_vector_entry_point() -> None:
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    from train.rllib.run import build_algo_config

    runner = SingleAgentEnvRunner(config=build_algo_config(CFG.model_copy(deep=True)))
    try:
        assert isinstance(runner.env.unwrapped, RackoVectorEnv)
        assert runner.num_envs == CFG.resources.envs_per_runner
        episodes = runner.sample(num_timesteps=200, random_actions=False)
        assert sum(len(e) for e in episodes) >= 200
        done = [e for e in episodes if e.is_done]
        assert done and all(e.get_return() in (-1.0, 1.0) for e in done)
    finally:
        runner.stop()


def test_league_snapshots_play_the_modules_moves() -> None:
    import gymnasium as gym
    import torch

    from racko_env.actions import NUM_ACTIONS
    from train.rllib.module import MaskedActorCritic, module_actions

    torch.manual_seed(0)
    model = {**CFG.model.model_dump(), "num_cards": 40}
    module = MaskedActorCritic(
        observation_space=observation_space(True),
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        model_config=model,
    )
    league = SnapshotLeague(size=2, latest_weight=0.5)
    league.add(module, "snapshot@1")
    env = _env(16)
    runner = SimpleNamespace(env=env)
    algo = SimpleNamespace(
        config=SimpleNamespace(num_env_runners=1),
        env_runner_group=SimpleNamespace(
            foreach_env_runner=lambda fn, local_env_runner: [fn(runner)]
        ),
    )
    league.push(algo)
    pool = env.unwrapped.opponent_pool
    assert [type(p).__name__ for p in pool[-1:]] == ["FrozenPolicy"]
    obs, _ = env.reset(seed=0)
    masks = obs["action_mask"]
    np.testing.assert_array_equal(
        pool[-1].act_batch(obs["observation"], masks > 0.5),
        module_actions(module, obs["observation"], masks),
    )
