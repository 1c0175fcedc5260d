"""How a PPO run evaluates: a snapshot of the model in the evaluation every trainer runs
(``train.common.evaluation``), and the run's record as it grows."""

from __future__ import annotations

import time
from typing import Any

from train.common.evaluation import EvalCurve, describe_eval
from train.sb3.model import make_snapshot


class EvalHistory(EvalCurve):
    """A PPO run's eval_history.json: the periodic checks against ``eval.opponents`` and the final
    evaluation, a row each (``train.common.eval_record``)."""

    def evaluate(self, model: Any, cb: Any) -> None:
        """Duplicate rounds against ``eval.opponents``: a line, a history row, TensorBoard."""
        cfg = self.cfg
        t0 = time.time()
        player = make_snapshot(model, "eval")
        results = self.run(player, cfg.eval, log=self.log, timesteps=int(model.num_timesteps))
        if cb is not None:
            for opp, res in results.items():
                if "mean_turns" in res:  # solitaire
                    cb.logger.record(f"eval/mean_turns_{opp}", res["mean_turns"])
                    if res["gap_percent"] is not None:
                        cb.logger.record(f"eval/exact_gap_percent_{opp}", res["gap_percent"])
                else:
                    cb.logger.record(f"eval/win_rate_vs_{opp}", res["win_rate"])
        self.log.info(
            f"eval at {int(model.num_timesteps):,} env steps ({cfg.eval.rounds:,} "
            f"{'deals' if cfg.num_players == 1 else 'duplicate rounds'}, "
            f"{time.time() - t0:.0f} s): {describe_eval(results)}"
        )

    def final(self, model: Any) -> None:
        """The final evaluation (final_eval.json), also the last row of the learning curve."""
        cfg = self.cfg
        if cfg.final_eval.rounds == 0:
            return
        what = "deals beside" if cfg.num_players == 1 else "duplicate rounds against"
        self.log.info(
            f"final evaluation: {cfg.final_eval.rounds:,} {what} "
            f"{', '.join(cfg.final_eval.opponents)}"
        )
        player = make_snapshot(model, "final")
        steps = int(model.num_timesteps)
        results = self.run(player, cfg.final_eval, True, self.log, timesteps=steps)
        self.log.info(f"final evaluation: {describe_eval(results)}")
