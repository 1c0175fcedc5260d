"""Records of games (``racko-record/1``, docs/evaluation/records.md): written while a game is
played, replayed with the engine.

A record keeps the chance outcomes the engine drew (first dealer, decks, reshuffled draw piles)
beside the actions, so a replay needs no random stream: the JS twin (``web/js/replay.js``) replays
it exactly as Python does, whatever seeding dealt the game. ``GameRecorder`` is fed by the game
loops (``racko_eval.tournament.DealPlayer``, the referee, ``racko play``); ``replay_states`` plays
a record back through ``RackoGame`` and checks it ends where the record says;
``racko_eval.record_schema`` validates a file on load.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agents.base import Bot
from racko_env.actions import Phase
from racko_env.config import RulesConfig
from racko_env.engine import RackoGame
from racko_env.files import write_text_atomic

FORMAT = "racko-record/1"


class RecordError(ValueError):
    """A record that cannot be read or does not replay: one line naming the file and the problem."""


# ----------------------------------------------------------------------------- writing


def dealt_deck(game: RackoGame) -> list[int]:
    """The deck order (index 0 = top) that produced the deal just made, read back from the table."""
    n, size = game.num_players, game.rack_size
    deck = [game.racks[(game.dealer + 1 + k) % n][size - 1 - k // n] for k in range(size * n)]
    return deck + [game.discard[0]] + game.draw[::-1]


def has_explain(bot: Any) -> bool:
    """Whether a bot has an ``explain()`` of its own worth recording.

    Not ``agents.base.Bot``'s default (it only names the move ``act`` picks), and not a bot that
    says ``explain_in_records = False`` (a sandboxed student bot, whose explain would run the
    student's code again outside its move clock)."""
    explain = getattr(type(bot), "explain", None)
    return (
        callable(explain)
        and explain is not Bot.explain
        and bool(getattr(bot, "explain_in_records", True))
    )


class Explainer:
    """Asks a bot why, without changing the game: ``before(bot)`` copies it before it acts and
    ``after(obs)`` asks the copy, so a bot whose explain draws random numbers (the search bot)
    or remembers the round plays exactly as it would unrecorded. None where it has no explain or
    its explain fails (an explanation is extra; the game goes on)."""

    def __init__(self) -> None:
        self._shadow: Any = None

    def before(self, bot: Any) -> None:
        self._shadow = None
        if has_explain(bot):
            try:
                self._shadow = copy.deepcopy(bot)
            except Exception:  # a bot holding what cannot be copied (a session, a socket)
                self._shadow = None

    def after(self, observation: Mapping[str, Any]) -> str | None:
        shadow, self._shadow = self._shadow, None
        if shadow is None:
            return None
        try:
            text = shadow.explain(observation)
        except Exception:
            return None
        return " ".join(str(text).split()) or None


class GameRecorder:
    """Collects one game's record while it is played.

    ``start(game, seed)`` right after the env's reset; ``move(seat, action, explanation)`` after
    every ``env.step``, reading any new deal or reshuffle off the engine; ``finish(...)`` returns
    the record (a JSON-ready dict). A game cut short by a forfeit finishes with ``forfeit``: its
    moves up to the failure replay as they were played.
    """

    def __init__(
        self,
        episode: str,
        seats: Sequence[Mapping[str, Any]],
        context: Mapping[str, Any] | None = None,
    ) -> None:
        if episode not in ("round", "game"):
            raise ValueError(f"episode must be 'round' or 'game', got {episode!r}")
        self.episode = episode
        self.seats = [dict(s) for s in seats]
        self.context = dict(context or {})
        self.game: RackoGame | None = None
        self.seed: int | None = None
        self.moves: list[dict[str, Any]] = []
        self.chance: dict[str, Any] = {}
        self.round_points: list[list[int]] = []
        self._where = (0, 0)
        self._rounds_moved = 0  # the last round a move was played in

    def start(self, game: RackoGame, seed: int | None) -> None:
        self.game = game
        self.seed = seed
        self.moves = []
        self.round_points = []
        self._rounds_moved = 0
        self.chance = {
            "first_dealer": game.dealer,
            "dealer_draw": list(game.dealer_draw),
            "decks": [dealt_deck(game)],
            "refills": [],
        }
        self._where = (game.round_number, game.reshuffles)

    def move(self, seat: int, action: int, explanation: str | None = None) -> None:
        game = self.game
        if game is None:
            raise RuntimeError("GameRecorder.start must be called before the first move")
        self._rounds_moved = self._where[0]
        entry: dict[str, Any] = {"seat": int(seat), "action": int(action)}
        if explanation:
            entry["explain"] = explanation
        self.moves.append(entry)
        new_round = game.round_number != self._where[0]
        if new_round or game.round_over:
            self.round_points.append([int(p) for p in game.last_round_points])
        if new_round:
            self.chance["decks"].append(dealt_deck(game))
        elif game.reshuffles != self._where[1] and game.config.empty_pile == "shuffle":
            self.chance["refills"].append(list(game.draw))
        self._where = (game.round_number, game.reshuffles)

    def finish(
        self,
        win: Sequence[float] | None = None,
        forfeit: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The record: ``win`` is each seat's share of the win as the caller scored it (None when
        it scores no wins, e.g. a game left early); ``forfeit`` names the seat that failed."""
        game = self.game
        if game is None:
            raise RuntimeError("GameRecorder.start was never called")
        rules = game.config.to_dict()
        # a deal that no move of the record plays (a game stopped between rounds, a bot failing
        # on its first move of a round) is left out: every deck in a record is played
        chance = {**self.chance, "decks": self.chance["decks"][: max(1, self._rounds_moved)]}
        result: dict[str, Any] = {
            "round_points": self.round_points,
            "totals": [int(t) for t in game.scores],
            "game_over": bool(game.game_over),
            "winner": game.game_winner,
            "win": None if win is None else [round(float(w), 6) for w in win],
            "forfeit": None if forfeit is None else dict(forfeit),
        }
        return {
            "format": FORMAT,
            "episode": self.episode,
            "rules": rules,
            "seed": self.seed,
            "seats": self.seats,
            "context": self.context,
            "chance": chance,
            "moves": list(self.moves),
            "result": result,
        }


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    """A file or folder name from a label (bot specs hold colons and slashes)."""
    return _UNSAFE.sub("_", text).strip("._") or "game"


def write_record(folder: str | Path, name: str, record: Mapping[str, Any]) -> Path:
    """Write ``record`` as ``folder/name.json`` atomically (the folder made if missing)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{safe_name(name)}.json"
    write_text_atomic(path, json.dumps(record, separators=(",", ":")) + "\n")
    return path


# ----------------------------------------------------------------------------- replaying


class _RecordedRefills(random.Random):
    """The engine's random stream during a replay: a reshuffle returns the recorded pile."""

    def __init__(self, refills: Sequence[Sequence[int]]) -> None:
        super().__init__(0)
        self.refills = [list(r) for r in refills]

    def shuffle(self, x: list[Any]) -> None:  # type: ignore[override]
        if not self.refills:
            raise RecordError("the draw pile ran out more often than the record reshuffled it")
        pile = self.refills.pop(0)
        if sorted(pile) != sorted(x):
            raise RecordError("a recorded reshuffle does not hold the cards under the discard top")
        x[:] = pile


def snapshot(game: RackoGame, step: int) -> dict[str, Any]:
    """Everything on the table after ``step`` moves, every rack face up (the JS twin builds the
    same dict: web/js/replay.js)."""
    return {
        "step": step,
        "round": game.round_number,
        "turn": game.turn,
        "dealer": game.dealer,
        "current": game.current,
        "phase": Phase(game.phase).name,
        "racks": [list(r) for r in game.racks],
        "discard": list(game.discard),
        "draw": list(game.draw),
        "held": game.held,
        "held_from_discard": bool(game.held_from_discard),
        "totals": list(game.scores),
        "round_points": list(game.last_round_points),
        "round_over": bool(game.round_over),
        "game_over": bool(game.game_over),
        "racko_player": game.racko_player,
    }


def replay_states(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every state of a recorded game: index 0 the first deal, index k after move k.

    A state after a round's last move shows that round's racks; the next round is dealt before
    the next move, as the env deals it. Raises RecordError when a move is not the recorded seat's
    or not legal, the chance outcomes do not fit, or the result differs from the record's."""
    rules = RulesConfig.from_dict(dict(record["rules"]))
    chance = record["chance"]
    decks = [list(d) for d in chance["decks"]]
    game = RackoGame(rules)
    try:
        game.new_game(first_dealer=chance["first_dealer"], deck_order=decks[0])
    except ValueError as err:
        raise RecordError(f"the first deal does not fit the rules: {err}") from err
    game.dealer_draw = list(chance["dealer_draw"])
    game.rng = _RecordedRefills(chance["refills"])
    next_deck = 1
    states = [snapshot(game, 0)]
    round_points: list[list[int]] = []
    for k, move in enumerate(record["moves"], 1):
        if game.round_over:
            if record["episode"] != "game" or game.game_over:
                raise RecordError(f"move {k} comes after the {record['episode']} ended")
            if next_deck >= len(decks):
                raise RecordError(f"move {k} starts round {game.round_number + 1}: no deck for it")
            try:
                game.start_round(deck_order=decks[next_deck])
            except ValueError as err:
                raise RecordError(f"deck {next_deck} does not fit the rules: {err}") from err
            next_deck += 1
        seat, action = move["seat"], move["action"]
        if seat != game.current:
            raise RecordError(f"move {k} is by seat {seat}, but seat {game.current} is on turn")
        try:
            game.apply(action)
        except ValueError as err:
            raise RecordError(f"move {k}: {err}") from err
        if game.round_over:
            round_points.append(list(game.last_round_points))
        states.append(snapshot(game, k))
    _check_result(record, game, round_points, next_deck, len(decks))
    return states


def _check_result(
    record: Mapping[str, Any],
    game: RackoGame,
    round_points: list[list[int]],
    decks_used: int,
    decks: int,
) -> None:
    result = record["result"]
    if round_points != [list(p) for p in result["round_points"]]:
        raise RecordError(
            f"the replay scores rounds {round_points}, the record says {result['round_points']}"
        )
    if list(game.scores) != list(result["totals"]):
        raise RecordError(
            f"the replay ends at totals {game.scores}, the record says {result['totals']}"
        )
    if bool(game.game_over) != bool(result["game_over"]) or game.game_winner != result["winner"]:
        raise RecordError("the replay's end of game differs from the record's")
    if decks_used != decks:
        raise RecordError(f"the record holds {decks} deck(s); the replay dealt {decks_used}")
