"""benchmarks/variants.py: the configs it trains, the exact diagnosis of a bot, and a part run
alone replacing its own rows only."""

from __future__ import annotations

import numpy as np
import pytest

from racko_eval.results import load_results

pytest.importorskip("torch")


@pytest.mark.parametrize("key", ["k3n8", "k4n10", "k4n11", "full", "2p_k5"])
def test_each_part_trains_a_shipped_config_at_its_size(benchmark_script, tmp_path, key):
    from train.common.config import load_config

    m = benchmark_script("variants")
    part = m.PARTS[key]
    curve = key in m.CURVE_PARTS
    cfg = load_config(m.part_config(part, tmp_path / key, curve))
    rules = cfg.rules_config()
    assert (cfg.num_players, rules.rack_size, rules.num_cards) == (
        part.num_players,
        part.rack_size,
        part.deck_size,
    )
    assert cfg.out == str(tmp_path / key) and cfg.final_eval.rounds == 0
    assert cfg.eval.opponents == []  # the run itself evaluates at most its learner
    assert (cfg.eval.every_steps < cfg.total_steps) == curve


def test_the_solvers_action_in_one_decision_closes_that_decisions_share(benchmark_script):
    from racko_env.solitaire import evaluate, solve

    m = benchmark_script("variants")
    solution = solve(3, 8)
    optimum = solution.expected_turns
    assert m.phase_fixes(solution.policy, solution.policy, 3, 8) == pytest.approx([optimum] * 3)
    from agents.batched import load_batch
    from racko_env.solitaire_env import batch_table

    table = batch_table(load_batch("expert", 1, rack_size=3, deck_size=8), 3, 8)
    expert = evaluate(table, 3, 8, turn_limit=400)
    fixed = m.phase_fixes(table, solution.policy, 3, 8)
    assert all(optimum - 1e-9 <= t <= expert + 1e-9 for t in fixed) and min(fixed) < expert


def test_a_part_run_alone_replaces_its_rows_only(benchmark_script, tmp_path):
    m = benchmark_script("variants")

    def part(key: str, gap: float) -> tuple[dict, dict]:
        row = [key, "size", 2.3, 2.29, gap, 6.4, 100.0, 150.0, 1000, 1.0, "now"]
        return {"exact": [row]}, {f"{key}_gap_percent": gap}

    m.write({"k4n11": part("k4n11", 3.0), "k3n8": part("k3n8", 1.0)}, "c", tmp_path)
    m.write({"k4n10": part("k4n10", 2.0)}, "c --only k4n10", tmp_path)
    m.write({"k3n8": part("k3n8", 0.5)}, "c --only k3n8", tmp_path)
    data = load_results("variants", tmp_path)
    (table,) = data["tables"]
    assert [(r[0], r[4]) for r in table["rows"]] == [("k3n8", 0.5), ("k4n10", 2.0), ("k4n11", 3.0)]
    assert data["figures"] == {
        "k3n8_gap_percent": 0.5,
        "k4n10_gap_percent": 2.0,
        "k4n11_gap_percent": 3.0,
    }


def test_each_tuning_experiment_changes_the_shipped_config_only_where_it_says(
    benchmark_script, tmp_path
):
    from train.common.config import load_config

    m = benchmark_script("variants")
    part = m.PARTS["k4n10"]
    shipped = load_config(m.part_config(part, tmp_path / "shipped", False))
    labels = [label for label, _ in m.ABLATION]
    assert len(set(labels)) == len(labels) and labels[0].startswith("the recipe before")
    for i, (_, changes) in enumerate(m.ABLATION):
        cfg = load_config(m.part_config(part, tmp_path / f"t{i}", False, changes, f"t{i}"))
        for section, values in changes.items():
            for key, value in values.items() if isinstance(values, dict) else [(None, values)]:
                got = getattr(cfg, section) if key is None else getattr(getattr(cfg, section), key)
                assert got == value
        assert cfg.rules_config() == shipped.rules_config() and cfg.out == str(tmp_path / f"t{i}")
    assert m.merged({"a": {"b": 1, "c": 2}, "d": 3}, {"a": {"c": 4}}) == {
        "a": {"b": 1, "c": 4},
        "d": 3,
    }


def test_the_solvers_own_decisions_are_its_policy_on_whole_games(benchmark_script):
    from racko_env.solitaire import evaluate, solve
    from racko_env.solitaire_env import observation_index

    m = benchmark_script("variants")
    solution = solve(3, 8)
    obs, masks, actions = m.optimal_decisions(solution, games=300, seed=1)
    assert len(obs) == len(masks) == len(actions) > 300
    assert masks[np.arange(len(actions)), actions].all()
    table = [solution.policy[observation_index(o, 3, 8)] for o in obs]
    assert np.array_equal(actions, table)
    # about as many decisions per game as optimal play takes turns (three decisions a turn at most)
    turns = evaluate(solution.policy, 3, 8)
    assert len(obs) / 300 <= 3 * turns * 1.3
