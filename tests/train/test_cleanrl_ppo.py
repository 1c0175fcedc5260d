"""train/reference/cleanrl_ppo.py: a smoke run end to end, its pieces (masking, GAE, rewards), and seeding."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import agents
from racko_env.actions import NUM_ACTIONS
from racko_env.observation import OBS_SIZE
from train.reference.cleanrl_ppo import (
    Agent,
    SolitaireTable,
    Table,
    Trajectory,
    collect_rollout,
    compute_gae,
    parse_args,
    train,
    zone_potential,
)

REPO = Path(__file__).resolve().parents[2]
# A few seconds: short rounds (turn limit 40), two small updates, a short evaluation.
SMOKE = [
    "--total-timesteps", "400", "--rollout-steps", "200", "--num-envs", "4",
    "--turn-limit", "40", "--hidden", "32", "--eval-rounds", "10", "--export-check", "40",
]  # fmt: skip


def small_args(**changes: object) -> Any:
    return dataclasses.replace(parse_args([*SMOKE, "--quiet"]), **changes)


@pytest.mark.slow  # a whole (tiny) training run
def test_smoke_run_exports_and_evaluates(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.run(
        [
            sys.executable,
            "train/reference/cleanrl_ppo.py",
            *SMOKE,
            "--out",
            str(out),
            "--tensorboard",
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},  # the checkout under test
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "against heuristic: won" in proc.stdout
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["history"][-1]["global_step"] >= 400
    evaluation = metrics["evaluation"]
    assert evaluation["opponent"] == "heuristic" and evaluation["rounds"] == 20
    low, high = evaluation["win_rate_ci95"]
    assert 0 <= low <= evaluation["win_rate"] <= high <= 1
    # the evaluation record of every trainer (train/common/eval_record.py)
    final = json.loads((out / "final_eval.json").read_text())["heuristic"]
    assert final["win_rate"] == evaluation["win_rate"] and final["rounds"] == 10
    (row,) = json.loads((out / "eval_history.json").read_text())
    assert row["final"] and row["heuristic_ci95"] == [low, high] and row["timesteps"] >= 400
    assert any((out / "tb").iterdir())
    manifest = json.loads((out / "bot.json").read_text())
    assert manifest["export_check"] == {"observations": 40, "disagreements": 0}
    assert manifest["rules"]["turn_limit"] == 40
    assert not list(out.glob("*.tmp")) and [p.name for p in out.iterdir() if p.is_dir()] == ["tb"]
    bot = agents.load(str(out / "bot.onnx"), num_players=2, turn_limit=40)  # plays as a bot file
    obs = {"observation": np.zeros(OBS_SIZE, np.float32), "action_mask": np.zeros(14, np.int8)}
    obs["action_mask"][[10, 11]] = 1
    assert bot.act(obs) in (10, 11)


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (["--opponent", "nobody"], "--opponent"),
        (["--num-players", "5"], "--num-players must be 2, 3 or 4"),
        (["--reward", "money"], "--reward must be 'score' or 'win'"),
        (["--tensorboard"], "--tensorboard needs --out"),
        (["--num-envs", "0"], "--num-envs must be at least 1"),
    ],
)
def test_bad_arguments_fail_with_one_line(bad: list[str], words: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(bad)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_masking_gives_illegal_actions_no_probability() -> None:
    torch.manual_seed(0)
    agent = Agent(hidden=16)
    obs = torch.rand(64, OBS_SIZE)
    mask = torch.zeros(64, NUM_ACTIONS, dtype=torch.bool)
    mask[:32, 10:12] = True  # a draw decision
    mask[32:, :10] = True  # a slot decision
    for _ in range(5):
        action, logprob, entropy, value = agent.get_action_and_value(obs, mask)
        assert mask[torch.arange(64), action].all()
    with torch.no_grad():
        probs = torch.softmax(agent.masked_logits(obs, mask), dim=1)
    assert float(probs[~mask].max()) == 0.0
    assert torch.allclose(probs.sum(dim=1), torch.ones(64))
    assert value.shape == (64,) and bool((entropy <= np.log(10) + 1e-5).all())
    greedy = agent.greedy(obs.numpy(), mask.numpy())
    assert mask[torch.arange(64), torch.as_tensor(greedy)].all()


def test_gae_matches_a_hand_computation() -> None:
    traj = Trajectory(values=[0.5, 0.2, -0.1], rewards=[0.0, 0.0, 1.0])
    gamma, lam = 0.9, 0.8
    d2 = 1.0 - (-0.1)
    d1 = 0.0 + gamma * -0.1 - 0.2
    d0 = 0.0 + gamma * 0.2 - 0.5
    a2 = d2
    a1 = d1 + gamma * lam * a2
    a0 = d0 + gamma * lam * a1
    adv, ret = compute_gae(traj, gamma, lam)
    assert adv == pytest.approx([a0, a1, a2], abs=1e-6)
    assert ret == pytest.approx([a0 + 0.5, a1 + 0.2, a2 - 0.1], abs=1e-6)
    # gamma = lambda = 1: the advantage is the return still to come minus the value.
    adv1, ret1 = compute_gae(traj, 1.0, 1.0)
    assert ret1 == pytest.approx([1.0, 1.0, 1.0], abs=1e-6)


@pytest.mark.parametrize("opponent", ["heuristic", "self"])
def test_rollouts_are_whole_rounds_with_the_envs_rewards(opponent: str) -> None:
    """Each finished trajectory's rewards add up to what the env paid that seat for the round."""
    args = small_args(opponent=opponent, reward="score", rollout_steps=150, num_envs=3)
    torch.manual_seed(0)
    agent = Agent(hidden=16)
    tables = [Table(args, i) for i in range(args.num_envs)]
    trajectories, returns = collect_rollout(agent, tables, args, np.random.default_rng(0))
    assert sum(len(t.actions) for t in trajectories) >= 150
    assert all(t.done for t in tables)  # the rollout ends with every round complete
    per_round = 2 if opponent == "self" else 1
    assert len(returns) % per_round == 0 and len(returns) >= len(trajectories)
    for t in trajectories:
        assert len(t.obs) == len(t.actions) == len(t.rewards) == len(t.values)
        assert all(t.masks[i][a] for i, a in enumerate(t.actions))  # only legal moves
        # Score rewards: the round's points / 75, paid once at the end, to the last decision.
        assert all(r == 0 for r in t.rewards[:-1])
        points = t.rewards[-1] * 75
        assert points == pytest.approx(round(points)) and round(points) % 5 == 0


def test_same_seed_same_run() -> None:
    args = small_args(total_timesteps=150, rollout_steps=150, num_envs=2)
    runs = []
    for _ in range(2):
        agent, training = train(args)
        runs.append((training["history"], [p.detach().clone() for p in agent.parameters()]))
    (h1, p1), (h2, p2) = runs
    assert [r["mean_return"] for r in h1] == [r["mean_return"] for r in h2]
    assert all(torch.equal(a, b) for a, b in zip(p1, p2, strict=True))


def test_zone_shaping_is_potential_based_and_stays_out_of_the_return() -> None:
    for n_cards in (40, 50, 60):  # every card in its home slot: 1; every card 9 slots off: 0
        home = [1 + i * n_cards // 10 for i in range(10)]
        assert zone_potential(home, n_cards) == pytest.approx(1.0)
        assert zone_potential([n_cards] + [1] * 9, n_cards) < 0.5
    args = small_args(shaping=1.0, reward="win", rollout_steps=300, num_envs=1, gamma=1.0)
    torch.manual_seed(0)
    table = Table(args, 0)
    trajectories, _ = collect_rollout(Agent(16), [table], args, np.random.default_rng(0))
    assert trajectories
    for traj in trajectories:  # with gamma 1 the shaped terms telescope to -phi(s0)
        rack0 = [round(float(x) * 40) for x in traj.obs[0][:10]]
        total = sum(traj.rewards) + zone_potential(rack0, 40)  # = the round's win reward
        assert min(abs(total - r) for r in (-1.0, 0.0, 1.0)) < 1e-6, total
    args = small_args(shaping=1.0, reward="score", rollout_steps=150, num_envs=2)
    args = small_args(shaping=1.0, reward="score", rollout_steps=150, num_envs=2)
    torch.manual_seed(0)
    tables = [Table(args, i) for i in range(2)]
    trajectories, returns = collect_rollout(Agent(16), tables, args, np.random.default_rng(0))
    assert any(r != 0 for t in trajectories for r in t.rewards[:-1])  # a signal on every move
    for ret in returns:  # what is reported is the env's own reward: round points / 75
        assert ret * 75 == pytest.approx(round(ret * 75)) and round(ret * 75) % 5 == 0


@pytest.mark.slow  # a whole (tiny) training run
def test_solitaire_run_exports_a_bot_for_one_player(tmp_path: Path) -> None:
    """--num-players 1 trains on full-size solitaire; its bot file loads for one player only and
    plays legal moves on the env's deals."""
    from agents.onnx_bot import BotFileError
    from racko_env.solitaire_env import play_turns

    out = tmp_path / "run"
    flags = ["--num-players", "1", "--total-timesteps", "300", "--rollout-steps", "100"]
    flags += ["--num-envs", "2", "--turn-limit", "30", "--hidden", "16", "--shaping", "5"]
    flags += ["--eval-rounds", "3", "--eval-opponent", "heuristic", "--export-check", "30"]
    proc = subprocess.run(
        [sys.executable, "train/reference/cleanrl_ppo.py", *flags, "--out", str(out)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "mean turns" in proc.stdout and "on the same 3 deals" in proc.stdout
    evaluation = json.loads((out / "metrics.json").read_text())["evaluation"]
    assert 1 <= evaluation["bot_mean_turns"] <= 30 and evaluation["deals"] == 3
    manifest = json.loads((out / "bot.json").read_text())
    assert manifest["num_players"] == 1 and manifest["observation_size"] == 101
    rules = {"rack_size": 10, "deck_size": 40, "turn_limit": 30}
    bot = agents.load(str(out / "bot.onnx"), 1, **rules)
    turns = play_turns(bot, range(3), turn_limit=30)  # raises on an illegal move
    assert ((turns >= 1) & (turns <= 30)).all()
    with pytest.raises(BotFileError, match="trained for 1 players, asked to play with 2"):
        agents.load(str(out / "bot.onnx"), 2, turn_limit=30)


def test_solitaire_rounds_pay_minus_the_turns_and_a_progress_bonus() -> None:
    args = small_args(num_players=1, shaping=0.0, turn_cost=1.0, rollout_steps=1, num_envs=1)
    table = SolitaireTable(args, 0)
    trajectories, returns = collect_rollout(
        Agent(16, table.width), [table], args, np.random.default_rng(0)
    )
    (traj,) = trajectories
    assert returns == [-table.env.game.turn] and sum(traj.rewards) == pytest.approx(returns[0])
    args = dataclasses.replace(args, shaping=1.0, turn_cost=0.0)
    table = SolitaireTable(args, 0)
    (traj,), _ = collect_rollout(Agent(16, table.width), [table], args, np.random.default_rng(0))
    rack0 = [round(float(x) * 40) for x in traj.obs[0][:10]]
    final = (
        1.0
        if table.env.game.racko_player is not None
        else zone_potential(table.env.game.racks[0], 40)
    )
    assert sum(traj.rewards) == pytest.approx(final - zone_potential(rack0, 40))
