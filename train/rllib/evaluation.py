"""How the RLlib trainer evaluates (``train/rllib_ppo.py``): the ``main`` module frozen into a batch
policy (``train.rllib.module.batch_player``) in the evaluation every trainer runs
(``train.common.evaluation.evaluate_against``: duplicate rounds of the quick batched check), and the
run's evaluation record (eval_history.json, ``train.common.eval_record``) as it grows, resumed and
ended by the final evaluation."""

from __future__ import annotations

from typing import Any

from train.common.eval_record import read_history, write_history
from train.common.evaluation import EvalCurve, describe_eval


class EvalHistory(EvalCurve):
    """The run's eval_history.json: a row per evaluation, with the wall-clock minutes of the
    earlier sessions of a resumed run added."""

    def resume(self, iteration: int) -> None:
        """The curve as the checkpoint at ``iteration`` left it: later rows (and a final one)
        are redone."""
        kept = [
            r
            for r in read_history(self.run_dir)
            if r["iteration"] <= iteration and not r.get("final")
        ]
        write_history(self.run_dir, kept)
        super().resume(kept)

    def evaluate(self, algo: Any, writer: Any, state: dict[str, Any], final: bool = False) -> Any:
        """The periodic check (``eval``) or, with ``final``, the final one (``final_eval``, also
        ``final_eval.json``): the ``main`` module in duplicate rounds against the section's
        opponents, a row of ``eval_history.json``, TensorBoard, a line; the results."""
        from train.rllib.module import batch_player  # imports ray: not before the run set it up

        section, tag = (self.cfg.final_eval, "final") if final else (self.cfg.eval, "eval")
        player = batch_player(algo.get_module(self.cfg.learner_module))
        steps = {"timesteps": state["env_steps"], "iteration": state["iteration"]}
        results = self.run(player, section, final, **steps)
        for opp, res in results.items():
            writer.add_scalar(
                f"{tag}/win_rate_vs_{opp}", res["win_rate"], 0 if final else state["env_steps"]
            )
        label = "final eval" if final else "eval"
        self.log.info(f"{label} ({section.rounds} duplicate rounds each): {describe_eval(results)}")
        return results
