"""The ``racko-record/1`` file format as a pydantic model, and the loader that checks a file.

``load_record(path)`` reads a record (docs/evaluation/records.md) and returns it as a plain dict, or raises
``RecordError`` with one line naming the file and the first problem: not JSON, another format or
version, a missing or mistyped field, rules that are not rules, a move that does not replay. The
JSON Schema of the format, docs/records.schema.json, is generated from ``RecordModel``
(``python -m racko_eval.record_schema > docs/records.schema.json``; a test checks it is current).
Nothing in a record is ever executed: it is JSON data, checked field by field.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from racko_env.actions import NUM_ACTIONS
from racko_env.config import RulesConfig
from racko_env.rules import MAX_PLAYERS
from racko_eval.records import FORMAT, RecordError, replay_states

Seat = Annotated[int, Field(ge=0, lt=MAX_PLAYERS)]
Card = Annotated[int, Field(ge=1, le=60)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class MoveModel(_Strict):
    """One decision: the seat on turn, its action id and, where the bot has one, its explain()."""

    seat: Seat
    action: Annotated[int, Field(ge=0, lt=NUM_ACTIONS)]
    explain: str | None = None


class ChanceModel(_Strict):
    """What chance decided: the first dealer, each round's deck (index 0 = top card), and each
    reshuffled draw pile (list end = top), in the order the game needed them."""

    first_dealer: Seat
    dealer_draw: list[Card]
    decks: Annotated[list[list[Card]], Field(min_length=1)]
    refills: list[list[Card]]


class SeatModel(BaseModel):
    """Who sat in a seat: a label (``bot``), and how to load it again where known (``spec``)."""

    model_config = ConfigDict(extra="allow")
    bot: str
    spec: str | None = None


class ForfeitModel(BaseModel):
    """The seat whose bot failed (None when no seat is to blame), its label and the reason."""

    model_config = ConfigDict(extra="allow")
    seat: Seat | None = None
    bot: str
    reason: str


class ResultModel(_Strict):
    """How the game ended: points of every finished round, totals per seat, the game's end and
    winning team, each seat's share of the win as its match scored it, and any forfeit."""

    round_points: list[list[int]]
    totals: list[int]
    game_over: bool
    winner: Seat | None
    win: list[float] | None
    forfeit: ForfeitModel | None


class RecordModel(_Strict):
    """A recorded game of Rack-O (docs/evaluation/records.md)."""

    format: Literal["racko-record/1"]
    episode: Literal["round", "game"]
    rules: dict[str, Any]
    seed: int | None
    seats: list[SeatModel]
    context: dict[str, Any]
    chance: ChanceModel
    moves: list[MoveModel]
    result: ResultModel

    @field_validator("rules")
    @classmethod
    def _rules(cls, rules: dict[str, Any]) -> dict[str, Any]:
        try:
            return RulesConfig.from_dict(rules).to_dict()
        except (TypeError, ValueError) as err:
            raise ValueError(str(err)) from err


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "the record"
    return f"{where}: {first['msg']}"


def check_record(data: Any, source: str = "record") -> dict[str, Any]:
    """Validate a parsed record and replay it; return it as a plain dict, or raise RecordError."""
    if not isinstance(data, dict):
        raise RecordError(f'{source}: not a game record (a JSON object with "format": {FORMAT!r})')
    found = data.get("format")
    if found != FORMAT:
        raise RecordError(
            f"{source}: format {found!r} is not {FORMAT!r}, the only record format this racko reads"
        )
    try:
        model = RecordModel.model_validate(data)
    except ValidationError as err:
        raise RecordError(f"{source}: {_first_error(err)}") from None
    record = model.model_dump()
    n = record["rules"]["num_players"]
    if len(record["seats"]) != n:
        raise RecordError(f"{source}: {len(record['seats'])} seat(s) for {n} players")
    if any(
        len(row) != n for row in (record["result"]["totals"], *record["result"]["round_points"])
    ):
        raise RecordError(f"{source}: result rows must have one entry per seat ({n})")
    try:
        replay_states(record)
    except RecordError as err:
        raise RecordError(f"{source}: does not replay: {err}") from None
    return record


def load_record(path: str | Path) -> dict[str, Any]:
    """Read and check a record file (see the module docstring)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise RecordError(f"{path}: cannot be read: {err}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordError(f"{path}: not JSON ({err})") from None
    return check_record(data, str(path))


def json_schema() -> str:
    """The JSON Schema of the format (docs/records.schema.json)."""
    schema = RecordModel.model_json_schema()
    schema["$id"] = "https://racko.invalid/records.schema.json"
    schema["title"] = FORMAT
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    sys.stdout.write(json_schema())
