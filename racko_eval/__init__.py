"""Evaluation of bots: duplicate-round tournaments through the AEC env, the quick batched check
on the batched engine, win rates with 95% Wilson intervals and OpenSkill ratings, game records.

Every trainer, ``racko evaluate``, ``racko grade`` and ``racko league`` import it, through the
names below. It needs bots and envs, never torch: a trainer passes its torch policy in as any
object with ``act_batch``.
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
