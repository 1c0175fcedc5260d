"""train/common/plot.py: any trainer's evaluation record (train/common/eval_record.py) plots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_plot_curve(tmp_path: Path) -> None:
    from train.common.plot import plot

    run = tmp_path / "run"
    run.mkdir()
    rows = [
        {
            "timesteps": t,
            "minutes": m,
            "rounds": 100,
            "heuristic": w,
            "heuristic_ci95": [w - 0.1, w + 0.1],
        }
        for t, m, w in ((0, 1.0, 0.2), (20, 3.0, 0.4))
    ]
    (run / "eval_history.json").write_text(json.dumps(rows))
    plot(run, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 1000
    with pytest.raises(FileNotFoundError, match="no eval_history"):
        plot(tmp_path, tmp_path / "d.png")


def _rows_of_every_trainer() -> dict[str, list[dict]]:
    """eval_history.json as each trainer writes it (their own writer calls, no training)."""
    from train.common.eval_record import history_row, opponent_result
    from train.common.solitaire_eval import solitaire_result

    def res(opp: str, w: float, **extra) -> dict:
        return opponent_result(opp, 100, w, (w - 0.1, w + 0.1), 0, **extra)

    table = {"table": ["learner", "heuristic", "expert"]}
    three = {
        "heuristic": res(
            "heuristic", 0.4, opponent_win_rate=0.1, opponent_ci95=[0.05, 0.15], **table
        ),
        "expert": res("expert", 0.4, opponent_win_rate=0.5, opponent_ci95=[0.45, 0.55], **table),
    }
    solitaire = {
        "learner": solitaire_result("learner", 100, 3.1, (2.9, 3.3), 0, 2.5, 2.3),
        "expert": solitaire_result("expert", 100, 2.4, (2.3, 2.5), 0, 2.43, 2.3),
    }
    return {
        "ppo solitaire": [history_row(solitaire, m, 100, timesteps=t) for t, m in ((0, 1), (9, 2))],
        "ppo": [
            history_row({"heuristic": res("heuristic", w)}, m, 100, timesteps=t)
            for t, m, w in ((0, 1.0, 0.2), (512, 2.0, 0.4))
        ],
        "ppo 3 players": [history_row(three, 1.0, 100, timesteps=64)],
        "rllib": [
            history_row({"heuristic": res("heuristic", w)}, m, 100, timesteps=256 * i, iteration=i)
            for i, m, w in ((1, 1.0, 0.2), (2, 2.0, 0.3))
        ],
        "value": [
            history_row({"expert": res("expert", w)}, m, 100, iteration=i)
            for i, m, w in ((1, 1.0, 0.4), (2, 2.5, 0.5))
        ],
        "cleanrl": [
            history_row({"heuristic": res("heuristic", 0.1)}, 0.5, 100, timesteps=400, final=True)
        ],
    }


@pytest.mark.parametrize("trainer", sorted(_rows_of_every_trainer()))
def test_every_trainers_record_plots(trainer: str, tmp_path: Path) -> None:
    from train.common.eval_record import opponents_of
    from train.common.plot import plot

    rows = _rows_of_every_trainer()[trainer]
    for row in rows:  # the schema: a length, minutes, rounds, and rate + interval per curve
        assert ("timesteps" in row or "iteration" in row) and {"minutes", "rounds"} <= set(row)
        assert all(row[f"{k}_ci95"][0] <= row[k] <= row[f"{k}_ci95"][1] for k in opponents_of(rows))
    run = tmp_path / "run"
    run.mkdir()
    (run / "eval_history.json").write_text(json.dumps(rows))
    plot(run, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 1000
