"""One evaluation path (train/common/evaluation.py): every trainer's periodic and final evaluations
are the batched duplicate rounds of ``evaluate_against``, written in one record."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from train.common.config import TrainConfig
from train.common.eval_record import read_history, write_iteration_record
from train.common.evaluation import evaluate_against, evaluate_iteration

REPO = Path(__file__).resolve().parents[2]


class _Log:
    """A run log that keeps its lines (``evaluate_against`` opens no phase without a log)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, line: str) -> None:
        self.lines.append(line)

    def phase(self, name: str, *args, **kwargs):
        import contextlib

        log = self

        class Phase:
            def advance(self, n: int = 1, note: str = "") -> None:
                pass

        @contextlib.contextmanager
        def opened():
            yield Phase()
            log.info(f"{name}: done")

        return opened()


def test_an_iteration_trainers_record_is_the_ppo_trainers(tmp_path: Path) -> None:
    """At a table of 3 players the value and distillation records hold the learner's and each
    opponent's rate at that table, as the PPO trainer's rows do."""
    from agents.batched import load_batch
    from train.sb3.evaluation import EvalHistory

    cfg = TrainConfig(
        num_players=3, eval={"opponents": ["random", "heuristic"], "rounds": 6, "seed": 3}
    )
    log = _Log()
    fields = evaluate_iteration(load_batch("heuristic", 3), cfg, log, 0)
    assert fields["eval"] == evaluate_against(
        load_batch("heuristic", 3), cfg, ["random", "heuristic"], 6, 3
    )
    assert log.lines[0] == "iteration 0: evaluating: done"
    assert log.lines[1].startswith("iteration 0: vs random won ") and "95% CI" in log.lines[1]
    write_iteration_record(tmp_path, [{**fields, "iteration": 0}], 6, 3, iterations=1)
    (row,) = read_history(tmp_path)

    class Model:
        num_timesteps = 0

    ppo = EvalHistory(cfg, tmp_path / "ppo", log)
    (tmp_path / "ppo").mkdir()
    ppo.add(fields["eval"], 6, final=True, timesteps=Model.num_timesteps)
    ppo_row = ppo.rows[0]
    drop = ("minutes", "timesteps", "iteration")
    assert {k: v for k, v in row.items() if k not in drop} == {
        k: v for k, v in ppo_row.items() if k not in drop
    }
    assert {"learner", "learner_ci95", "random", "heuristic"} <= set(row)


def test_rows_of_older_runs_without_the_results_still_make_the_record(tmp_path: Path) -> None:
    old = {
        "iteration": 0,
        "win_rate": {"heuristic": 0.25},
        "win_rate_ci95": {"heuristic": [0.1, 0.4]},
    }
    write_iteration_record(tmp_path, [old], 40, 7, iterations=1)
    (row,) = read_history(tmp_path)
    assert row["heuristic"] == 0.25 and row["heuristic_ci95"] == [0.1, 0.4] and row["final"]


@pytest.mark.slow  # two exports and evaluations; quick: the record tests above
def test_rllib_evaluates_the_module_as_its_exported_bot_plays(tmp_path: Path) -> None:
    """The RLlib trainer's evaluation (the module frozen into a batch policy, no export, no
    per-game tournament) gives the numbers of the exported bot file on the same deals."""
    pytest.importorskip("ray.rllib", reason="the cluster extra (ray[rllib]) is not installed")
    import gymnasium as gym
    import torch

    from agents.batched import load_batch
    from train.rllib.config import load_rllib_config
    from train.rllib.env import observation_space
    from train.rllib.export import export_bot

    cfg = load_rllib_config(REPO / "configs" / "smoke_rllib.yaml")
    torch.manual_seed(0)
    for model_config in (
        {"encoder": "structured", "hidden": [16], "slot_hidden": [8]},
        {"encoder": "mlp", "hidden": [16]},
    ):
        from train.rllib.module import MaskedActorCritic, batch_player

        module = MaskedActorCritic(
            observation_space=observation_space(features=True),
            action_space=gym.spaces.Discrete(14),
            model_config=model_config,
        )
        ours = evaluate_against(batch_player(module), cfg, ["heuristic"], 6, 5)
        onnx_path, _ = export_bot(module, tmp_path / model_config["encoder"], cfg)
        bot = load_batch(str(onnx_path), cfg.num_players)
        assert ours == evaluate_against(bot, cfg, ["heuristic"], 6, 5), model_config
        assert ours["heuristic"]["rounds"] == 6 and ours["heuristic"]["seats"] == 12


def test_the_rllib_front_door_imports_no_ray_before_it_configures_it() -> None:
    """``train/rllib_ppo.py`` sets Ray's authentication in the environment before Ray is first
    imported (a driver that imported it earlier cannot talk to the cluster it starts)."""
    code = "import sys, train.rllib_ppo; print(sorted(m for m in sys.modules if m == 'ray'))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
