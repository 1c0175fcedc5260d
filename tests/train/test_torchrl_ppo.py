"""train/examples/torchrl_ppo.py: TorchRL's PettingZoo wrapper and its action masks train on racko_v1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from racko_env.actions import NUM_ACTIONS
from racko_env.observation import OBS_SIZE
from train.examples import torchrl_ppo
from train.examples.torchrl_ppo import LEARNER, MASK, OBS, Settings, make_env, train

ROOT = Path(__file__).resolve().parents[2]
# a few hundred steps: short rounds (turn limit 20) so that several end in each batch
TINY = Settings(frames=512, frames_per_batch=256, epochs=2, minibatch=64, hidden=16, turn_limit=20)


def test_the_wrapper_takes_the_env_as_it_is_with_its_mask() -> None:
    env = make_env(TINY)
    assert env.observation_spec[OBS].shape[-1] == OBS_SIZE
    assert env.full_action_spec[LEARNER, "action"].space.n == NUM_ACTIONS
    td = env.reset()
    acting = td[LEARNER, "mask"].item()
    mask = td[MASK].reshape(-1)
    assert mask.dtype.is_floating_point is False and len(mask) == NUM_ACTIONS
    # the learner on turn sees racko's mask (draw or take the discard); off turn, all true
    assert mask.tolist() == ([False] * 10 + [True, True, False, False] if acting else [True] * 14)
    env.close()


def test_the_shipped_bot_plays_the_opponent_seat() -> None:
    """The fixed opponent reads the env's observation (racko_v1's layout), the shipped file too."""
    env = make_env(Settings())  # the rules racko_2p was trained for
    td = env.reset()
    acting = td[LEARNER, "mask"]
    bot = torchrl_ppo.FixedBot("racko_2p", seed=0, turn_limit=Settings().turn_limit)
    action = bot(td[OBS], td[MASK], acting)
    assert acting.item() and bool(td[MASK].reshape(-1)[action.item()])
    env.close()


@pytest.mark.slow  # two tiny trainings through TorchRL's collector (about 10 s of CPU each)
def test_a_few_hundred_steps_train_legally_and_the_same_seed_repeats_the_run() -> None:
    rows = train(TINY, quiet=True)
    assert len(rows) == 2
    assert sum(r["rounds"] for r in rows) > 0
    assert all(r["learner_steps"] > 0 and r["illegal"] == 0 for r in rows)
    assert all(-1.0 <= r["mean_reward"] <= 1.0 for r in rows if r["rounds"])
    assert train(TINY, quiet=True) == rows  # same seed, same run


@pytest.mark.slow
def test_against_a_racko_bot_from_the_command_line() -> None:
    args = ["--frames", "256", "--frames-per-batch", "256", "--hidden", "16", "--turn-limit", "20"]
    out = subprocess.run(
        [sys.executable, "train/examples/torchrl_ppo.py", *args, "--opponent", "heuristic"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # the checkout under test
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("batch 1: ")


def test_a_bad_opponent_is_one_line(capsys) -> None:
    assert (
        torchrl_ppo.main(["--frames", "256", "--frames-per-batch", "256", "--opponent", "nope"])
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("python train/examples/torchrl_ppo.py: error: unknown bot 'nope'")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--frames-per-batch", "0"], "argument --frames-per-batch: expected a positive integer"),
        (["--hidden", "0"], "argument --hidden: expected a positive integer, got 0"),
        (["--epochs", "-1"], "argument --epochs: expected a positive integer, got -1"),
        (["--lr", "abc"], "argument --lr: expected a positive number, got 'abc'"),
        (["--turn-limit", "0"], "argument --turn-limit: expected a positive integer, got 0"),
        (["--frames", "100", "--frames-per-batch", "200"], "--frames must be at least"),
    ],
)
def test_a_bad_number_is_one_line_before_anything_runs(capsys, args, message) -> None:
    with pytest.raises(SystemExit) as exc:
        torchrl_ppo.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"python train/examples/torchrl_ppo.py: error: {message}"), err
    assert err.count("\n") == 1


# a process each; the quick subset (torch missing) imports no heavy package before the error
@pytest.mark.parametrize(
    "module",
    [
        "torch",
        pytest.param("tensordict", marks=pytest.mark.slow),
        pytest.param("torchrl", marks=pytest.mark.slow),
    ],
)
def test_without_a_package_of_the_extra_the_extra_is_named(module: str) -> None:
    code = f"import sys; sys.modules[{module!r}] = None\nimport train.examples.torchrl_ppo\n"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    last = out.stderr.strip().splitlines()[-1]
    assert (
        f"train/examples/torchrl_ppo.py needs {module}, which is not installed (the 'torchrl' extra)"
        in (last)
    )
    assert "pip install 'racko[torchrl]'" in last
