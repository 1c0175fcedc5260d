"""benchmarks/take_rate.py: counting expert's takes changes none of its moves, and it reports."""

from __future__ import annotations

import json

from agents.batched import load_batch
from racko_eval import play_duplicate


def test_counting_changes_no_move_of_the_counted_policy(benchmark_script):
    mod = benchmark_script("take_rate")
    counting = mod.CountingPolicy(load_batch("expert", 2, seed=0))
    plain = load_batch("expert", 2, seed=0)
    heuristic = load_batch("heuristic", 2, seed=0)
    args = (["expert", "heuristic"], 2, {}, 12, 3)
    counted = play_duplicate([counting, heuristic], *args)
    assert counted["bots"] == play_duplicate([plain, heuristic], *args)["bots"]
    assert 0 < counting.taken < counting.offered


def test_script_reports_the_take_rate(benchmark_script, tmp_path):
    mod = benchmark_script("take_rate")
    out = tmp_path / "take.json"
    mod.main(["--bot", "heuristic", "--rounds", "10", "--json", str(out)])
    (row,) = json.loads(out.read_text())
    assert row["rounds"] == 10 and row["bot_discards"] > 0
    assert 0 <= row["take_ci95"][0] <= row["take_rate"] <= row["take_ci95"][1] <= 1
