"""benchmarks/openspiel_bots.py: OpenSpiel's ISMCTS and DQN play duplicate rounds against expert."""

from __future__ import annotations

import json

import pytest

from racko_eval.results import load_results

pytest.importorskip("pyspiel")


def _run(module, tmp_path, capsys, *args: str) -> dict:
    assert module.main([*args, "--results-dir", str(tmp_path)]) == 0
    return json.loads(capsys.readouterr().out.splitlines()[0])


def test_ismcts_plays_both_seatings_of_a_deal_and_reports_its_time(
    tmp_path, capsys, benchmark_script
):
    module = benchmark_script("openspiel_bots")
    args = ("ismcts", "--rounds", "1", "--simulations", "2", "--evaluator", "progress")
    result = _run(module, tmp_path, capsys, *args)
    assert result["rounds_played"] == 2 and result["opponent"] == "expert"
    low, high = result["win_rate_ci95"]
    assert 0.0 <= low <= result["win_rate"] <= high <= 1.0
    assert result["decisions"] > 0 and result["ms_per_decision"] > 0
    # the results file gathers runs: this one's row, named by its command, once
    _run(module, tmp_path, capsys, *args)
    data = load_results("openspiel", tmp_path)
    rows = data["tables"][0]["rows"]
    assert len(rows) == 1 and rows[0][-1] == data["command"]
    assert data["command"].startswith("python -m benchmarks.openspiel_bots ismcts --rounds 1")
    assert "--results-dir" not in data["command"]


@pytest.mark.slow
def test_dqn_trains_and_plays(tmp_path, capsys, benchmark_script):
    pytest.importorskip("torch")
    module = benchmark_script("openspiel_bots")
    result = _run(module, tmp_path, capsys, "dqn", "--train-minutes", "0.05", "--rounds", "1")
    assert result["episodes"] >= 1 and result["steps"] > 0 and result["rounds_played"] == 2


def test_the_progress_evaluator_prefers_the_better_rack(benchmark_script):
    module = benchmark_script("openspiel_bots")
    assert module.longest_increasing([5, 1, 2, 3, 9, 4, 6, 7, 8, 10]) == 8
    assert module.longest_increasing([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["ismcts", "--players", "5"],
            "argument --players: invalid choice: 5 (choose from 2, 3, 4)",
        ),
        (["ismcts", "--rounds", "0"], "argument --rounds: expected a positive integer, got 0"),
        (["ismcts", "--simulations", "0"], "argument --simulations: expected a positive integer"),
        (["dqn", "--train-minutes", "-1"], "argument --train-minutes: expected a positive number"),
        (["chess"], "argument algorithm: invalid choice: 'chess'"),
    ],
)
def test_bad_input_is_one_line(benchmark_script, capsys, args, message):
    module = benchmark_script("openspiel_bots")
    with pytest.raises(SystemExit) as exc:
        module.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m benchmarks.openspiel_bots") and err.count("\n") == 1, err
    assert f"error: {message}" in err
