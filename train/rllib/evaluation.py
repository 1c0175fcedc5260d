"""How the RLlib trainer evaluates (``train/rllib_ppo.py``): the exported bot in duplicate
rounds against fixed bots, as ``train/evaluate.py`` runs them, and the run's evaluation record
(eval_history.json, ``train.common.eval_record``) as it grows, resumed and ended by the final
evaluation."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from train.common.eval_record import (
    append_history,
    history_row,
    opponent_result,
    read_history,
    write_history,
)
from train.rllib.config import RLlibConfig
from train.rllib.export import export_bot


def duplicate_eval(
    bot_path: Path, cfg: RLlibConfig, opponents: list[str], rounds: int, seed: int, workers: int
) -> dict[str, Any]:
    """The SB3 trainer's evaluation: a duplicate tournament of the bot file against each
    opponent (``racko_eval.tournament``, as ``train/evaluate.py`` runs it)."""
    from racko_eval import run_tournament

    results = {}
    for opp in opponents:
        report = run_tournament(
            [str(bot_path), opp],
            num_players=cfg.num_players,
            rounds=rounds,
            seed=seed,
            workers=workers,
            **cfg.rules_options(),
        )
        bot = report["bots"][0]
        results[opp] = opponent_result(
            opp,
            rounds,
            bot["win_rate"],
            bot["win_rate_ci95"],
            seed,
            played=bot["played"],
            mean_round_score=bot["mean_round_score"],
        )
    return results


class EvalHistory:
    """The run's eval_history.json: a row per evaluation, with the wall-clock minutes of the
    earlier sessions of a resumed run added."""

    def __init__(self, cfg: RLlibConfig, run_dir: Path, log: Any) -> None:
        self.cfg, self.run_dir, self.log = cfg, run_dir, log
        self.t0 = time.monotonic()
        self.minutes_before = 0.0  # wall minutes of the earlier sessions of a resumed run

    def resume(self, iteration: int) -> None:
        """The curve as the checkpoint at ``iteration`` left it: later rows (and a final one)
        are redone."""
        kept = [
            r
            for r in read_history(self.run_dir)
            if r["iteration"] <= iteration and not r.get("final")
        ]
        write_history(self.run_dir, kept)
        self.minutes_before = max((r["minutes"] for r in kept), default=0.0)

    def evaluate(self, algo: Any, writer: Any, state: dict[str, Any]) -> None:
        """The periodic check: the ``main`` module exported to a temp folder, duplicate rounds
        against ``eval.opponents``, a row, TensorBoard, a line."""
        cfg = self.cfg
        with tempfile.TemporaryDirectory(dir=self.run_dir, prefix=".eval_") as tmp:
            onnx_path, _ = export_bot(algo.get_module(cfg.learner_module), Path(tmp), cfg)
            results = duplicate_eval(
                onnx_path, cfg, cfg.eval.opponents, cfg.eval.rounds, cfg.eval.seed, 1
            )
        self.record(results, cfg.eval.rounds, state)
        for opp, res in results.items():
            writer.add_scalar(f"eval/win_rate_vs_{opp}", res["win_rate"], state["env_steps"])
        line = ", ".join(f"{o} {r['win_rate']:.1%}" for o, r in results.items())
        self.log.info(f"eval ({cfg.eval.rounds} duplicate rounds each): {line}")

    def record(
        self, results: dict[str, Any], rounds: int, state: dict[str, Any], final: bool = False
    ) -> None:
        """A row of ``eval_history.json`` (``train.common.eval_record``)."""
        minutes = self.minutes_before + (time.monotonic() - self.t0) / 60
        row = history_row(
            results,
            minutes,
            rounds,
            timesteps=state["env_steps"],
            iteration=state["iteration"],
            final=final,
        )
        append_history(self.run_dir, row)
