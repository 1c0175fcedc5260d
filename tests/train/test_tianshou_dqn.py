"""train/tianshou_dqn.py: Tianshou's PettingZoo wrapper and its masked multi-agent policies train
on racko_v0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from racko_env.actions import NUM_ACTIONS
from racko_env.observation import OBS_SIZES
from train import tianshou_dqn
from train.tianshou_dqn import BotAlgorithm, Settings, make_algorithm, make_env, train

OBS_SIZE = OBS_SIZES[1]  # the examples train on racko_v0, layout version 1
ROOT = Path(__file__).resolve().parents[2]
# a few hundred steps: short rounds (turn limit 20), one epoch, two test rounds
TINY = Settings(
    epochs=1, steps_per_epoch=300, train_envs=2, test_episodes=2, batch=32, hidden=16, turn_limit=20
)


def test_the_wrapper_takes_the_env_as_it_is_with_its_mask() -> None:
    env = make_env(TINY)
    obs, _ = env.reset(seed=0)
    assert env.observation_space["observation"].shape == (OBS_SIZE,)
    assert env.action_space.n == NUM_ACTIONS
    assert obs["agent_id"] in env.agents and obs["obs"].shape == (OBS_SIZE,)
    assert obs["mask"] == [False] * 10 + [True, True, False, False]  # draw or take the discard


def test_a_racko_bot_is_a_masked_policy_that_learns_nothing() -> None:
    from tianshou.data import Batch

    import agents

    bot = BotAlgorithm(agents.load("heuristic", 2), make_env(TINY).action_space)
    env = make_env(TINY)
    obs, _ = env.reset(seed=3)
    batch = Batch(obs=Batch(obs=obs["obs"][None], mask=np.array([obs["mask"]])))
    act = bot.policy(batch).act
    assert act.shape == (1,) and obs["mask"][int(act[0])]
    assert not list(bot.parameters())


@pytest.mark.slow  # two tiny trainings through Tianshou's trainer (about 10 s of CPU each)
def test_a_few_hundred_steps_train_legally_and_the_same_seed_repeats_the_run() -> None:
    first = train(TINY, quiet=True)
    assert first["learner_decisions"] > 0 and first["illegal"] == 0
    assert -1.0 <= first["best_reward"] <= 1.0
    second = train(TINY, quiet=True)
    assert second["learner_decisions"] == first["learner_decisions"]
    a, b = (
        {k: v for k, v in r["algorithm"].state_dict().items() if torch.is_tensor(v)}
        for r in (first, second)
    )
    assert a and a.keys() == b.keys()  # the network's and its target's weights
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_against_a_racko_bot_from_the_command_line() -> None:
    args = ["--epochs", "1", "--steps-per-epoch", "200", "--train-envs", "2", "--batch", "32"]
    args += ["--test-episodes", "2", "--hidden", "16", "--turn-limit", "20", "--quiet"]
    out = subprocess.run(
        [sys.executable, "train/tianshou_dqn.py", *args, "--opponent", "heuristic"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # the checkout under test
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("best test reward of the learner: ")
    assert ", 0 illegal)" in out.stdout


def test_a_bad_opponent_is_one_line(capsys) -> None:
    assert make_algorithm(make_env(TINY), TINY) is not None
    assert tianshou_dqn.main(["--epochs", "1", "--opponent", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tianshou_dqn: error: unknown bot 'nope'") and err.count("\n") == 1


def test_without_tianshou_the_extra_is_named() -> None:
    code = "import sys; sys.modules['tianshou'] = None\nimport train.tianshou_dqn\n"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    last = out.stderr.strip().splitlines()[-1]
    assert "train/tianshou_dqn.py needs tianshou" in last
    assert "pip install 'racko[tianshou]'" in last
