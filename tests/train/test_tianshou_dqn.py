"""train/examples/tianshou_dqn.py: Tianshou's PettingZoo wrapper and its masked multi-agent policies train
on racko_v1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from racko_env.actions import NUM_ACTIONS
from racko_env.observation import OBS_SIZE
from train.examples import tianshou_dqn
from train.examples.tianshou_dqn import BotAlgorithm, Settings, make_algorithm, make_env, train

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


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["heuristic", "racko_2p"])  # racko_2p: the shipped bot file
def test_a_racko_bot_is_a_masked_policy_that_learns_nothing(spec: str) -> None:
    from tianshou.data import Batch

    import agents

    env = make_env(Settings())  # the rules a shipped bot was trained for
    bot = BotAlgorithm(agents.load(spec, 2), env.action_space)
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
        [sys.executable, "train/examples/tianshou_dqn.py", *args, "--opponent", "heuristic"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # the checkout under test
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("best test reward of the learner: ")
    assert ", 0 illegal)" in out.stdout


@pytest.mark.slow  # builds the algorithm; the flag errors below are the quick one-line checks
def test_a_bad_opponent_is_one_line(capsys) -> None:
    assert make_algorithm(make_env(TINY), TINY) is not None
    assert tianshou_dqn.main(["--epochs", "1", "--opponent", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python train/examples/tianshou_dqn.py: error: unknown bot 'nope'")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--epochs", "0"], "argument --epochs: expected a positive integer, got 0"),
        (["--batch", "x"], "argument --batch: expected a positive integer, got 'x'"),
        (["--updates-per-step", "0"], "argument --updates-per-step: expected a positive number"),
        (["--eps-train", "1.5"], "argument --eps-train: expected a number from 0 to 1, got 1.5"),
        (["--train-envs", "-2"], "argument --train-envs: expected a positive integer, got -2"),
    ],
)
def test_a_bad_number_is_one_line_before_anything_runs(capsys, args, message) -> None:
    with pytest.raises(SystemExit) as exc:
        tianshou_dqn.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"python train/examples/tianshou_dqn.py: error: {message}"), err
    assert err.count("\n") == 1


# a process each; the quick subset (torch missing) imports no heavy package before the error
@pytest.mark.parametrize("module", ["torch", pytest.param("tianshou", marks=pytest.mark.slow)])
def test_without_a_package_of_the_extra_the_extra_is_named(module: str) -> None:
    code = f"import sys; sys.modules[{module!r}] = None\nimport train.examples.tianshou_dqn\n"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    last = out.stderr.strip().splitlines()[-1]
    assert (
        f"train/examples/tianshou_dqn.py needs {module}, which is not installed (the 'tianshou'"
        in last
    )
    assert "pip install 'racko[tianshou]'" in last
