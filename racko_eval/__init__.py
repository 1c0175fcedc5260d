"""Evaluation of bots: duplicate-round tournaments through the AEC env, the quick batched check
on the batched engine, win rates with 95% Wilson intervals and OpenSkill ratings.

The layer between the bots and everything that judges them: every trainer, ``racko evaluate``,
``racko grade`` and ``racko league`` import it, through the names below only. It needs bots and
envs, never torch: a trainer that evaluates a torch policy builds the batch policy itself and
passes it in (``play_duplicate`` / ``quick_win_rate`` take any object with ``act_batch``).

- ``racko_eval.tournament``: the duplicate format (tables, seatings, deal seeds) and
  ``run_tournament`` with its JSON report (``docs/evaluation/evaluate.md``);
- ``racko_eval.quick_eval``: the same format played on ``racko_env.vector``, all games at once;
- ``racko_eval.evaluate``: the ``racko evaluate`` command;
- ``racko_eval.records``: records of games (``racko-record/1``, docs/evaluation/records.md), written while
  they are played and replayed with the engine; ``racko_eval.record_schema`` checks a file on load.
"""

from __future__ import annotations

from racko_eval.quick_eval import DealChance, play_duplicate, quick_win_rate, quick_win_rates
from racko_eval.records import GameRecorder, RecordError, replay_states, write_record
from racko_eval.tournament import (
    REPORT_SCHEMA,
    WIN_POINTS,
    BotError,
    DealPlayer,
    IllegalActionError,
    SeatResult,
    TableSetup,
    deal_seeds,
    run_tournament,
    seat_labels,
    seatings,
    tables_for,
    unique_labels,
    wilson_interval,
)

__all__ = [
    "REPORT_SCHEMA",
    "WIN_POINTS",
    "BotError",
    "DealChance",
    "DealPlayer",
    "GameRecorder",
    "IllegalActionError",
    "RecordError",
    "SeatResult",
    "TableSetup",
    "deal_seeds",
    "play_duplicate",
    "quick_win_rate",
    "quick_win_rates",
    "replay_states",
    "run_tournament",
    "seat_labels",
    "seatings",
    "tables_for",
    "unique_labels",
    "wilson_interval",
    "write_record",
]
