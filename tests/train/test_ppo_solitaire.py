"""The main job on solitaire (``num_players: 1``, ``reward: turns``): a short run of the shipped
config at k=3, N=8 trains, evaluates its learner exactly against the optimum and exports a bot
file that plays that size with numpy and onnxruntime."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

import agents
from racko_env.solitaire import evaluate, solve
from train.sb3 import run as ppo

REPO = Path(__file__).resolve().parents[2]


def _smoke_config(tmp_path: Path) -> Path:
    """configs/solitaire_k4.yaml at k=3, N=8, a few hundred steps of everything."""
    data = yaml.safe_load((REPO / "configs" / "solitaire_k4.yaml").read_text())
    data["rules"].update(rack_size=3, deck_size=8)
    data.update(total_steps=1024, n_envs=16, checkpoint_every=512, progress_bar=False)
    data["ppo"].update(n_steps=32, batch_size=256, n_epochs=1, net_arch=[16], slot_hidden=[8])
    data["pretrain"].update(decisions=1000, epochs=1, critic_steps=256, critic_epochs=1)
    data["eval"].update(every_steps=512, rounds=20)
    data["final_eval"].update(rounds=30, opponents=["expert"])
    path = tmp_path / "solitaire_smoke.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.slow
def test_a_one_player_config_trains_evaluates_exactly_and_exports(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert ppo.main(["--config", str(_smoke_config(tmp_path)), "--out", str(out)]) == 0
    optimum = solve(3, 8).expected_turns

    history = json.loads((out / "eval_history.json").read_text())
    # the warm start, PPO's periodic check, the final evaluation
    assert [(row["timesteps"], row.get("final", False)) for row in history] == [
        (0, False),
        (512, False),
        (1024, True),
    ]
    for row in history:
        assert row["unit"] == "turns" and row["learner_ci95"][0] <= row["learner"]
        assert row["learner_exact_turns"] >= optimum and row["expert_exact_turns"] >= optimum
        assert 0.0 <= row["eval_minutes"] <= row["minutes"]
    final = json.loads((out / "final_eval.json").read_text())
    assert set(final) == {"learner", "expert"}
    learner = final["learner"]
    assert learner["rounds"] == 30 and learner["optimum"] == pytest.approx(optimum)
    assert learner["gap_percent"] == pytest.approx(100 * (learner["exact_turns"] / optimum - 1))

    # the bot file is the trained policy: its exact expected turns are the final evaluation's
    manifest = json.loads((out / "bot.json").read_text())
    assert manifest["num_players"] == 1
    bot = agents.load(str(out / "bot.onnx"), num_players=1, rack_size=3, deck_size=8)
    turns = evaluate(bot, 3, 8, turn_limit=400)
    assert math.isfinite(turns) and turns == pytest.approx(learner["exact_turns"], rel=1e-9)


def test_solitaire_refuses_the_two_player_rewards() -> None:
    from train.common.config import ConfigError, parse_config

    with pytest.raises(ConfigError, match="num_players: 1\\) trains on reward: turns"):
        parse_config({"num_players": 1, "reward": "win"}, "x.yaml")
