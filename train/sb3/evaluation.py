"""How a PPO run evaluates its policy: duplicate rounds of the quick batched check against fixed
bots (``racko_eval.play_duplicate``), head to head with 2 players and at one table with 3-4, in
the evaluation record's shape (``train.common.eval_record``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from train.common.config import TrainConfig
from train.common.eval_record import opponent_result, write_final
from train.sb3.model import make_snapshot


def evaluate_against(
    player: Any,
    cfg: TrainConfig,
    opponents: list[str],
    rounds: int,
    seed: int,
    log: Any = None,
) -> dict[str, Any]:
    """Duplicate rounds of a batch policy against fixed bots (the quick batched check,
    ``racko_eval.quick_eval``).

    2 players: head to head with each opponent. 3-4 players: one table of the player and all the
    opponents together, in every distinct seating (with 4 players and 2 opponents, each of the
    three tables that fill the seats). Per opponent: the player's win rate with its 95% interval
    and that opponent's; a table's win rates add up to 1.
    """
    from agents.batched import load_batch
    from racko_eval import play_duplicate

    rules = cfg.rules_options()
    groups = [[opp] for opp in opponents] if cfg.num_players == 2 else [list(opponents)]
    out: dict[str, Any] = {}
    for group in groups:
        bots = [load_batch(o, cfg.num_players, seed=seed, **rules) for o in group]
        labels = ["learner", *group]
        name = f"evaluation vs {' + '.join(group)}"
        with _maybe_phase(log, name, rounds, "deals") as phase:
            rep = play_duplicate(
                [player, *bots],
                labels,
                cfg.num_players,
                rules,
                rounds,
                seed,
                episode=cfg.episode,
                progress=None if phase is None else phase.update,
            )
        me = rep["bots"]["learner"]
        for opp in group:
            out[opp] = opponent_result(
                opp,
                rounds,
                me["win_rate"],
                me["ci95"],
                seed,
                table=labels,
                opponent_win_rate=rep["bots"][opp]["win_rate"],
                opponent_ci95=rep["bots"][opp]["ci95"],
                seats=me["seats"],
                format=rep["format"],
            )
    return out


def _maybe_phase(log: Any, name: str, total: int, unit: str) -> Any:
    """``log.phase(...)`` when there is a run log, else a context that yields None."""
    import contextlib

    return contextlib.nullcontext() if log is None else log.phase(name, total, unit)


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


def describe_eval(results: dict[str, Any]) -> str:
    """``vs heuristic 83.1% (81.4%-84.7%), vs expert 49.2% (47.0%-51.4%)``; at a table of 3-4
    players, the learner's win rate once and each opponent's beside it."""
    if not results:
        return "no opponents"
    first = next(iter(results.values()))
    if len(first["table"]) > 2:
        lo, hi = first["ci95"]
        others = ", ".join(f"{o} {r['opponent_win_rate']:.1%}" for o, r in results.items())
        return f"at the table: learner {first['win_rate']:.1%} ({lo:.1%}-{hi:.1%}), {others}"
    return ", ".join(
        f"vs {opp} {r['win_rate']:.1%} ({r['ci95'][0]:.1%}-{r['ci95'][1]:.1%})"
        for opp, r in results.items()
    )


class EvalHistory:
    """A run's evaluation record as it grows (eval_history.json): the periodic checks against
    ``eval.opponents`` and the final evaluation, each a row with steps, wall-clock minutes (the
    earlier sessions' too, on resume) and win rates with 95% intervals."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, log: Any) -> None:
        import time

        self.cfg, self.run_dir, self.log = cfg, run_dir, log
        self.rows: list[dict[str, Any]] = []
        self.minutes_before = 0.0  # wall minutes of the earlier sessions of a resumed run
        self.t0 = time.monotonic()

    def resume(self, rows: list[dict[str, Any]]) -> None:
        """Continue the record a checkpoint holds."""
        self.rows = rows
        self.minutes_before = max((r.get("minutes", 0.0) for r in rows), default=0)

    def evaluate(self, model: Any, cb: Any) -> None:
        """Duplicate rounds against ``eval.opponents``: a line, a history row, TensorBoard."""
        import time

        cfg = self.cfg
        t0 = time.time()
        results = evaluate_against(
            make_snapshot(model, "eval"),
            cfg,
            cfg.eval.opponents,
            cfg.eval.rounds,
            cfg.eval.seed,
            self.log,
        )
        steps = int(model.num_timesteps)
        self.record(model, results, cfg.eval.rounds)
        if cb is not None:
            for opp, res in results.items():
                cb.logger.record(f"eval/win_rate_vs_{opp}", res["win_rate"])
        self.log.info(
            f"eval at {steps:,} env steps ({cfg.eval.rounds:,} duplicate rounds, "
            f"{time.time() - t0:.0f} s): {describe_eval(results)}"
        )

    def record(self, model: Any, results: dict[str, Any], rounds: int, final: bool = False) -> None:
        """A row of eval_history.json.

        2 players: the learner's win rate against each opponent, under the opponent's name. 3-4
        players (one table): ``learner`` and each opponent's own win rate at that table.
        """
        import time

        from train.common.eval_record import history_row, write_history

        minutes = self.minutes_before + (time.monotonic() - self.t0) / 60
        timesteps = int(model.num_timesteps)
        row = history_row(results, minutes, rounds, timesteps=timesteps, final=final)
        self.rows.append(row)
        write_history(self.run_dir, self.rows)

    def final(self, model: Any) -> None:
        """The final evaluation (final_eval.json), also the last row of the learning curve."""
        cfg = self.cfg
        if cfg.final_eval.rounds == 0:
            return
        self.log.info(
            f"final evaluation: {cfg.final_eval.rounds:,} duplicate rounds against "
            f"{', '.join(cfg.final_eval.opponents)}"
        )
        results = final_evaluation(model, cfg, self.run_dir, self.log)
        self.log.info(f"final evaluation: {describe_eval(results)}")
        # the learning curve ends with it (eval_history.json: the run's whole evaluation record)
        self.record(model, results, cfg.final_eval.rounds, final=True)
