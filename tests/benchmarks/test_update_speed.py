"""benchmarks/update_speed.py times the structured policy's gradient steps and counts their work."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


def test_multiply_adds_follow_the_layer_shapes(benchmark_script):
    mod = benchmark_script("update_speed")
    one = mod.forward_macs(26, 31, [64, 64], [128, 128])
    # both towers: ten slots through 26->64->64 plus the global half once, the trunk 159->128->128
    tower = 10 * 26 * 64 + 31 * 64 + 10 * 64 * 64 + 159 * 128 + 128 * 128
    assert one == 2 * tower + 10 * (64 + 128) + 128 * 5
    assert mod.forward_macs(26, 31, [32, 32], [64, 64]) < one


def test_it_times_a_small_update_and_derives_the_ceilings(capsys, benchmark_script):
    rows = benchmark_script("update_speed").main(
        ["--batch", "64", "--repeats", "1", "--threads", "1", "--rollout-us", "50"]
    )
    (row,) = rows
    assert row["threads"] == 1 and row["ms_per_minibatch"] > 0
    # the ceiling with the rollout: its 50 us a step on top of the update's time a step (the rates
    # are rounded, and on a loaded machine they may round to the same number)
    per_step = 1 / row["steps_per_s_update_only"] + 50e-6
    assert row["steps_per_s_with_rollout"] == pytest.approx(1 / per_step, rel=0.02, abs=1)
    assert "env steps/s" in capsys.readouterr().out
