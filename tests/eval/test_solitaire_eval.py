"""``racko evaluate --players 1``: every bot on the same deals, mean turns with 95% intervals,
measured as ``racko_env.solitaire`` and the ``solitaire_full`` rubric measure them."""

from __future__ import annotations

import json

import numpy as np
import pytest

import agents
from racko_env import racko_v1, solitaire
from racko_env.solitaire_env import mean_ci95
from racko_eval.evaluate import main
from racko_eval.tournament import deal_seeds, run_tournament

SMALL = {"rack_size": 4, "deck_size": 10}


def _turns_by_hand(spec: str, seed: int, rounds: int, **rules) -> list[int]:
    """The turns of each deal of a solitaire evaluation, played out here on the env: the
    deals of the tournament's seeds, each round's ``game.turn`` (cut at the turn limit)."""
    out = []
    for deal_seed in deal_seeds(seed, rounds):
        bot = agents.load(spec, 1, **rules)
        env = racko_v1.raw_env(num_players=1, **rules)
        env.reset(seed=deal_seed)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else bot.act(obs))
        out.append(env.game.turn)
    return out


def test_every_bot_plays_the_same_deals_and_the_mean_is_the_turns_played() -> None:
    report = run_tournament(["expert", "heuristic"], 1, rounds=40, seed=5, **SMALL)
    assert report["schema"] == "racko-evaluation/1" and set(report) == {
        "schema",
        "config",
        "bots",
        "pairs",
    }
    cfg = report["config"]
    assert cfg["players"] == 1 and cfg["deals"] == 40 and cfg["seatings_per_deal"] == 2
    assert cfg["rules"]["rack_size"] == 4 and cfg["bots"] == ["expert", "heuristic"]
    by = {b["name"]: b for b in report["bots"]}
    for name in ("expert", "heuristic"):
        turns = _turns_by_hand(name, 5, 40, **SMALL)
        mean, lo, hi = mean_ci95(turns)
        assert by[name]["mean_turns"] == pytest.approx(mean, abs=1e-6)
        assert by[name]["mean_turns_ci95"] == pytest.approx([lo, hi], abs=1e-6)
        assert by[name]["played"] == 40 and by[name]["rackos"] + by[name]["cut_off"] == 40
    (pair,) = report["pairs"]
    assert pair["bots"] == ["expert", "heuristic"]
    assert pair["mean_difference"] == pytest.approx(
        by["expert"]["mean_turns"] - by["heuristic"]["mean_turns"], abs=1e-5
    )


@pytest.mark.slow
def test_the_mean_estimates_the_exact_expected_turns() -> None:
    """The same quantity as ``racko_env.solitaire.evaluate``: the exact expected turns of
    ``expert`` lie within 4 standard errors of the played mean (the 95% interval is 1.96)."""
    tiny = {"rack_size": 3, "deck_size": 6}  # a state space the exact evaluation sweeps fast
    report = run_tournament(["expert"], 1, rounds=1500, seed=2, **tiny)
    (bot,) = report["bots"]
    exact = solitaire.evaluate(agents.load("expert", 1, **tiny), 3, 6)
    lo, hi = bot["mean_turns_ci95"]
    se = (hi - lo) / 2 / 1.96
    assert abs(bot["mean_turns"] - exact) < 4 * se


def test_a_cut_off_round_counts_the_turn_limit() -> None:
    report = run_tournament(["random"], 1, rounds=6, seed=0, turn_limit=3)
    (bot,) = report["bots"]
    assert bot["cut_off"] == 6 and bot["mean_turns"] == 3.0 and bot["mean_turns_to_racko"] is None


def test_the_cli_reports_mean_turns_with_intervals(tmp_path, capsys) -> None:
    out, png = tmp_path / "out.json", tmp_path / "out.png"
    argv = ["--players", "1", "--rack-size", "4", "--deck-size", "10", "--rounds", "30"]
    argv += ["--bots", "expert", "heuristic", "--json", str(out), "--plot", str(png)]
    assert main([*argv, "--workers", "2", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("solitaire, 30 deals, each played by every bot, seed 0")
    assert "| bot | rounds | mean turns (95% CI) |" in text and "| expert - heuristic |" in text
    report = json.loads(out.read_text())
    assert png.stat().st_size > 1000
    again = run_tournament(["expert", "heuristic"], 1, rounds=30, workers=1, **SMALL)
    assert again["bots"] == report["bots"]  # the same whatever the workers
    for b in report["bots"]:
        lo, hi = b["mean_turns_ci95"]
        assert lo <= b["mean_turns"] <= hi and np.isfinite([lo, hi]).all()


def test_solitaire_games_are_refused_in_one_line(capsys) -> None:
    assert main(["--players", "1", "--games", "2", "--bots", "expert", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("evaluate: error: ") and "give rounds" in err
