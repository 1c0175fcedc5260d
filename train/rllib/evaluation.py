"""How the RLlib trainer evaluates (``train/rllib_ppo.py``): the ``main`` module frozen into a batch
policy (``train.rllib.module.batch_player``) in the evaluation every trainer runs
(``train.common.evaluation.evaluate_against``: duplicate rounds of the quick batched check), and the
run's evaluation record (eval_history.json, ``train.common.eval_record``) as it grows, resumed and
ended by the final evaluation."""

from __future__ import annotations

from typing import Any

from train.common.eval_record import EvalCurve, read_history, write_history
from train.common.evaluation import describe_eval, evaluate_against
from train.rllib.config import RLlibConfig


def evaluate_module(
    module: Any, cfg: RLlibConfig, opponents: list[str], rounds: int, seed: int, log: Any = None
) -> dict[str, Any]:
    """The module's deterministic policy in duplicate rounds against ``opponents``."""
    from train.rllib.module import batch_player  # imports ray: not before the run configured it

    return evaluate_against(batch_player(module), cfg, opponents, rounds, seed, log)


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

    def evaluate(self, algo: Any, writer: Any, state: dict[str, Any]) -> None:
        """The periodic check: the ``main`` module in duplicate rounds against
        ``eval.opponents``, a row, TensorBoard, a line."""
        cfg = self.cfg
        module = algo.get_module(cfg.learner_module)
        results = evaluate_module(module, cfg, cfg.eval.opponents, cfg.eval.rounds, cfg.eval.seed)
        self.record(results, cfg.eval.rounds, state)
        for opp, res in results.items():
            writer.add_scalar(f"eval/win_rate_vs_{opp}", res["win_rate"], state["env_steps"])
        self.log.info(f"eval ({cfg.eval.rounds} duplicate rounds each): {describe_eval(results)}")

    def record(
        self, results: dict[str, Any], rounds: int, state: dict[str, Any], final: bool = False
    ) -> None:
        """A row of ``eval_history.json`` (``train.common.eval_record``)."""
        self.add(results, rounds, final, timesteps=state["env_steps"], iteration=state["iteration"])
