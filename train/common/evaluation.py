"""The one evaluation every trainer runs, periodic and final: duplicate rounds of the quick batched
check (``racko_eval.play_duplicate``) of the learner, as a batch policy, against fixed bots, each
result in the evaluation record's shape (``train.common.eval_record``); in solitaire
(``num_players: 1``) the learner's mean turns to Rack-O beside the fixed bots' on the same deals,
and where the size is small enough its exact expected turns and gap to the optimum
(``racko_env.solitaire``). It never needs torch."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

from racko_env.rules import SOLITAIRE
from train.common.config import GameConfig
from train.common.eval_record import (
    history_row,
    opponent_result,
    write_final,
    write_history,
)


def evaluate_against(
    player: Any,
    cfg: GameConfig,
    opponents: list[str],
    rounds: int,
    seed: int,
    log: Any = None,
) -> dict[str, Any]:
    """Duplicate rounds of a batch policy against fixed bots, for the game of ``cfg`` (its players,
    rules and ``episode``): head to head with each opponent with 2 players; with 3-4, one table of
    the player and all the opponents in every distinct seating. Per opponent: the player's win rate
    with its 95% interval and that opponent's."""
    from agents.batched import load_batch
    from racko_eval import play_duplicate

    if cfg.num_players == SOLITAIRE:
        from train.common.solitaire_eval import solitaire_against

        return solitaire_against(player, cfg, opponents, rounds, seed)
    rules = cfg.rules_options()
    groups = [[opp] for opp in opponents] if cfg.num_players == 2 else [list(opponents)]
    out: dict[str, Any] = {}
    for group in groups:
        bots = [load_batch(o, cfg.num_players, seed=seed, **rules) for o in group]
        labels = ["learner", *group]
        name = f"evaluation vs {' + '.join(group)}"
        shown = contextlib.nullcontext() if log is None else log.phase(name, rounds, "deals")
        with shown as phase:
            rep = play_duplicate(
                [player, *bots],
                labels,
                cfg.num_players,
                rules,
                rounds,
                seed,
                episode=getattr(cfg, "episode", "round"),
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


def describe_eval(results: dict[str, Any]) -> str:
    """``vs heuristic 83.1% (81.4%-84.7%), vs expert 49.2% (47.0%-51.4%)``; at a table of 3-4
    players, the learner's win rate once and each opponent's beside it; in solitaire each one's
    mean turns (``learner 2.31 (2.25-2.37) turns, exact 2.301, gap 0.7%; expert 2.44 ...``)."""
    if not results:
        return "no opponents"
    first = next(iter(results.values()))
    if "mean_turns" in first:
        from train.common.solitaire_eval import describe_turns

        return "; ".join(describe_turns(name, r) for name, r in results.items())
    if len(first["table"]) > 2:
        lo, hi = first["ci95"]
        others = ", ".join(f"{o} {r['opponent_win_rate']:.1%}" for o, r in results.items())
        return f"at the table: learner {first['win_rate']:.1%} ({lo:.1%}-{hi:.1%}), {others}"
    return ", ".join(
        f"vs {opp} {r['win_rate']:.1%} ({r['ci95'][0]:.1%}-{r['ci95'][1]:.1%})"
        for opp, r in results.items()
    )


class EvalCurve:
    """A run's ``eval_history.json`` as it grows: a row per evaluation with the wall-clock minutes
    of the run so far (those of the earlier sessions too, on resume) and the minutes of them spent
    in the evaluations themselves, this one included (``eval_minutes``: their difference is the
    training time, which the learning curves of exact solitaire evaluations are plotted against)."""

    def __init__(self, cfg: Any, run_dir: Path, log: Any) -> None:
        self.cfg, self.run_dir, self.log = cfg, run_dir, log
        self.rows: list[dict[str, Any]] = []
        self.minutes_before = 0.0  # wall minutes of the earlier sessions of a resumed run
        self.eval_minutes = 0.0  # of the wall minutes, those spent evaluating
        self.t0 = time.monotonic()

    def resume(self, rows: list[dict[str, Any]]) -> None:
        """Continue the record ``rows`` (what the checkpoint resumed from left)."""
        self.rows = rows
        self.minutes_before = max((r.get("minutes", 0.0) for r in rows), default=0.0)
        self.eval_minutes = max((r.get("eval_minutes", 0.0) for r in rows), default=0.0)

    def add(
        self,
        results: dict[str, Any],
        rounds: int,
        final: bool = False,
        seconds: float = 0.0,
        **steps: Any,
    ) -> None:
        """The row of one evaluation (``history_row``; ``steps``: its ``timesteps`` and/or
        ``iteration``; ``seconds``: the evaluation's own), and the file rewritten."""
        minutes = self.minutes_before + (time.monotonic() - self.t0) / 60
        self.eval_minutes += seconds / 60
        row = history_row(results, minutes, rounds, final=final, **steps)
        row["eval_minutes"] = round(self.eval_minutes, 2)
        self.rows.append(row)
        write_history(self.run_dir, self.rows)

    def run(
        self, player: Any, section: Any, final: bool = False, log: Any = None, **steps: Any
    ) -> dict[str, Any]:
        """``section``'s evaluation (the config's ``eval`` or ``final_eval``) of a batch policy and
        its row; the final one also writes ``final_eval.json``. ``log``: a run log to show
        progress in."""
        start = time.monotonic()
        results = evaluate_against(
            player, self.cfg, section.opponents, section.rounds, section.seed, log
        )
        if final:
            write_final(self.run_dir, results)
        self.add(results, section.rounds, final, time.monotonic() - start, **steps)
        return results
