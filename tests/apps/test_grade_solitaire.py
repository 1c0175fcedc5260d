"""The solitaire rubric grades exactly: the optimal policy and values at full marks, the starter
and a random policy lower, and bad rubrics and value tables named in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from racko_apps.grade.rubric import RubricError, load_rubric, parse_rubric
from racko_apps.grade.run import grade
from racko_apps.new_bot.solitaire import write_solitaire_bot
from racko_env.solitaire import solve

# the shipped rubric's criteria on a smaller size (3 slots, cards 1-6), so a test is seconds
SMALL = {
    "players": 1,
    "seed": 0,
    "positions": 1,
    "rounds": 1,
    "time_limit": 0.5,
    "kill_after": 5.0,
    "memory_mb": 1024,
    "max_forfeits": 1,
    "round_seconds": 600.0,
    "rules": {"rack_size": 3, "deck_size": 6},
}


def _small_rubric():
    data = dict(SMALL)
    data["criteria"] = [
        {"name": "loads", "check": "loads", "points": 10},
        {
            "name": "policy",
            "check": "solitaire_policy",
            "thresholds": [
                {"gap_percent": 50, "points": 20},
                {"gap_percent": 2, "points": 50},
                {"gap_percent": 0, "points": 60},
            ],
        },
        {
            "name": "values",
            "check": "solitaire_values",
            "file": "values.npy",
            "thresholds": [{"max_error": 0.5, "points": 10}, {"max_error": 1e-6, "points": 30}],
        },
    ]
    return parse_rubric(data, "small.yaml")


def _submission(folder: Path, table: np.ndarray | None, values: np.ndarray | None) -> str:
    write_solitaire_bot("agent", folder)
    text = (folder / "agent" / "__init__.py").read_text()
    text = text.replace(
        "rack_size: int = 3, deck_size: int = 8", "rack_size: int = 3, deck_size: int = 6"
    )
    (folder / "agent" / "__init__.py").write_text(text)
    if table is not None:
        np.save(folder / "agent" / "policy.npy", table)
    if values is not None:
        np.save(folder / "agent" / "values.npy", values)
    return "agent:Bot"


def test_the_optimal_policy_and_values_get_full_marks(tmp_path: Path) -> None:
    solution = solve(3, 6)
    spec = _submission(tmp_path, solution.policy.astype(np.int64), solution.values)
    report = grade(spec, _small_rubric(), folder=tmp_path, isolate=False)
    assert report["total"] == 100, report["criteria"]


def test_the_starter_and_a_random_policy_score_lower(tmp_path: Path) -> None:
    solution = solve(3, 6)
    rng = np.random.default_rng(0)
    legal = solution.space.legal[
        np.arange(solution.space.num_observations) // solution.space.num_states
    ]
    random_table = (rng.random(legal.shape) * legal).argmax(axis=1)
    (tmp_path / "random").mkdir()
    spec = _submission(tmp_path / "random", random_table, -solution.values)
    report = grade(spec, _small_rubric(), folder=tmp_path / "random", isolate=False)
    rows = {r["name"]: r for r in report["criteria"]}
    assert rows["policy"]["points"] < 60 and rows["values"]["points"] == 0
    assert "returns' negatives" in rows["values"]["result"]
    (tmp_path / "starter").mkdir()
    spec = _submission(tmp_path / "starter", None, None)
    report = grade(spec, _small_rubric(), folder=tmp_path / "starter", isolate=False)
    rows = {r["name"]: r for r in report["criteria"]}
    assert 0 < rows["policy"]["points"] < 60 and rows["policy"]["gap_percent"] > 2
    assert "no value table" in rows["values"]["result"]


def test_bad_solitaire_rubrics_are_named_in_one_line() -> None:
    data = dict(SMALL)
    bad_checks = [{"name": "legal", "check": "legal", "points": 5}]
    with pytest.raises(RubricError, match="solitaire rubric .* legal plays games"):
        parse_rubric({**data, "criteria": bad_checks}, "x.yaml")
    bad_step = [
        {"name": "p", "check": "solitaire_policy", "thresholds": [{"win_rate": 1, "points": 1}]}
    ]
    with pytest.raises(RubricError, match="exactly gap_percent and points"):
        parse_rubric({**data, "criteria": bad_step}, "x.yaml")
    huge = {**data, "rules": {"rack_size": 8, "deck_size": 40}}
    ok = [{"name": "loads", "check": "loads", "points": 1}]
    with pytest.raises(RubricError, match="use a smaller deck_size"):
        parse_rubric({**huge, "criteria": ok}, "x.yaml")
    assert load_rubric("solitaire").max_points == 100


def test_solitaire_full_scores_expert_at_full_marks_and_random_lower() -> None:
    import dataclasses

    rubric = dataclasses.replace(load_rubric("solitaire_full"), rounds=12)
    assert rubric.rules == {"rack_size": 10, "deck_size": 40}
    best = grade("expert", rubric, isolate=False)
    assert best["total"] == 100, best["criteria"]
    turns = best["criteria"][1]
    assert turns["excess_percent"] == 0.0 and turns["mean_turns"] > 1
    worse = grade("random", rubric, isolate=False)
    assert worse["criteria"][1]["excess_percent"] > 100
    assert worse["total"] < best["total"]
    other = grade("expert", rubric, seed=7, seed_source="flag", isolate=False)["criteria"][1]
    assert other["expert_mean_turns"] != turns["expert_mean_turns"]  # the seed deals


def test_solitaire_turns_fits_any_size_but_exact_checks_need_one_that_solves() -> None:
    data = dict(SMALL, rules={"rack_size": 10, "deck_size": 40})
    turns = {"name": "t", "check": "solitaire_turns"}
    turns["thresholds"] = [{"excess_percent": 10, "points": 5}]
    assert parse_rubric({**data, "criteria": [turns]}, "t.yaml").criteria[0].points == 5
    exact = {"name": "p", "check": "solitaire_policy"}
    exact["thresholds"] = [{"gap_percent": 10, "points": 5}]
    with pytest.raises(RubricError, match="deck_size"):
        parse_rubric({**data, "criteria": [turns, exact]}, "t.yaml")
