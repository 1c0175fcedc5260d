"""How a PPO run evaluates its policy: the evaluation every trainer runs
(``train.common.evaluation.evaluate_against``: duplicate rounds of the quick batched check) of a
snapshot of the model, and the run's evaluation record as it grows (``train.common.eval_record``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from train.common.config import TrainConfig
from train.common.eval_record import write_final
from train.common.evaluation import EvalCurve, describe_eval, evaluate_against
from train.sb3.model import make_snapshot

__all__ = ["EvalHistory", "describe_eval", "evaluate_against", "final_evaluation"]


def final_evaluation(
    model: Any, cfg: TrainConfig, run_dir: Path, log: Any = None
) -> dict[str, Any]:
    """``final_eval.rounds`` duplicate rounds of the deterministic policy against the
    ``final_eval`` opponents (``evaluate_against``), saved to ``final_eval.json``."""
    f = cfg.final_eval
    player = make_snapshot(model, "final")
    results = evaluate_against(player, cfg, f.opponents, f.rounds, f.seed, log)
    write_final(run_dir, results)
    return results


class EvalHistory(EvalCurve):
    """A run's evaluation record as it grows (eval_history.json): the periodic checks against
    ``eval.opponents`` and the final evaluation, each a row with steps, wall-clock minutes (the
    earlier sessions' too, on resume) and win rates with 95% intervals (2 players: the learner's
    against each opponent; 3-4 players, one table: ``learner`` and each opponent's own);
    ``resume`` continues the rows a checkpoint holds."""

    def evaluate(self, model: Any, cb: Any) -> None:
        """Duplicate rounds against ``eval.opponents``: a line, a history row, TensorBoard."""
        import time

        cfg = self.cfg
        t0 = time.time()
        player = make_snapshot(model, "eval")
        results = self.run(player, cfg.eval, log=self.log, timesteps=int(model.num_timesteps))
        if cb is not None:
            for opp, res in results.items():
                cb.logger.record(f"eval/win_rate_vs_{opp}", res["win_rate"])
        self.log.info(
            f"eval at {int(model.num_timesteps):,} env steps ({cfg.eval.rounds:,} duplicate "
            f"rounds, {time.time() - t0:.0f} s): {describe_eval(results)}"
        )

    def final(self, model: Any) -> None:
        """The final evaluation (final_eval.json), also the last row of the learning curve."""
        cfg = self.cfg
        if cfg.final_eval.rounds == 0:
            return
        self.log.info(
            f"final evaluation: {cfg.final_eval.rounds:,} duplicate rounds against "
            f"{', '.join(cfg.final_eval.opponents)}"
        )
        player = make_snapshot(model, "final")
        steps = int(model.num_timesteps)
        results = self.run(player, cfg.final_eval, True, self.log, timesteps=steps)
        self.log.info(f"final evaluation: {describe_eval(results)}")
