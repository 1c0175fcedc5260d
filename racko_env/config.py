"""The rules options of a game, as one validated, immutable object."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from racko_env.rules import MAX_PLAYERS, MIN_PLAYERS, RACK_SIZE, TARGET_SCORE

EMPTY_PILE_MODES = ("shuffle", "flip")
DEFAULT_TURN_LIMIT = 400


@dataclass(frozen=True)
class RulesConfig:
    """Every rules option of the rule book, ``docs/rules.md``.

    num_players: 2-4; the deck is 1-40, 1-50 or 1-60.
    empty_pile: ``"shuffle"`` (default) or ``"flip"``: how the discard pile becomes the draw pile.
    turn_limit: turns (all players together) after which a round without Rack-O is cut off.
    min_run: 0 (default) or 3..10; the 2-player variant where Rack-O also needs a run this long.
    bonus: Bonus Rack-O (the player going Rack-O scores a bonus for the longest run).
    partners: 4 players in two teams (seats 0+2 against 1+3) adding their scores.
    target_score: points that win the game (500 in the rule book).
    """

    num_players: int = 2
    empty_pile: str = "shuffle"
    turn_limit: int = DEFAULT_TURN_LIMIT
    min_run: int = 0
    bonus: bool = False
    partners: bool = False
    target_score: int = TARGET_SCORE

    def __post_init__(self) -> None:
        def need_int(name: str, value: Any) -> None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"rules option {name!r} must be an int, got {value!r}")

        def need_bool(name: str, value: Any) -> None:
            if not isinstance(value, bool):
                raise TypeError(f"rules option {name!r} must be a bool, got {value!r}")

        need_int("num_players", self.num_players)
        if not MIN_PLAYERS <= self.num_players <= MAX_PLAYERS:
            raise ValueError(
                f"rules option 'num_players' must be between {MIN_PLAYERS} and {MAX_PLAYERS}, "
                f"got {self.num_players}"
            )
        if self.empty_pile not in EMPTY_PILE_MODES:
            raise ValueError(
                f"rules option 'empty_pile' must be one of {EMPTY_PILE_MODES}, got {self.empty_pile!r}"
            )
        need_int("turn_limit", self.turn_limit)
        if self.turn_limit < 1:
            raise ValueError(f"rules option 'turn_limit' must be at least 1, got {self.turn_limit}")
        need_int("min_run", self.min_run)
        if self.min_run != 0 and not 3 <= self.min_run <= RACK_SIZE:
            raise ValueError(
                f"rules option 'min_run' must be 0 (off) or between 3 and {RACK_SIZE}, "
                f"got {self.min_run}"
            )
        if self.min_run and self.num_players != 2:
            raise ValueError(
                f"rules option 'min_run' (the run variant) is for 2 players only, "
                f"got num_players={self.num_players}"
            )
        need_bool("bonus", self.bonus)
        need_bool("partners", self.partners)
        if self.partners and self.num_players != 4:
            raise ValueError(
                f"rules option 'partners' needs exactly 4 players, got num_players={self.num_players}"
            )
        need_int("target_score", self.target_score)
        if self.target_score < 1:
            raise ValueError(
                f"rules option 'target_score' must be at least 1, got {self.target_score}"
            )

    @classmethod
    def from_dict(cls, options: dict[str, Any]) -> RulesConfig:
        """Build from keyword options, naming any key that is not a rules option."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(
                f"unknown rules option(s) {unknown}; known options are {sorted(known)}"
            )
        return cls(**options)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def team_of(self, player: int) -> int:
        """Partners sit opposite: team 0 is seats 0 and 2, team 1 is seats 1 and 3."""
        return player % 2 if self.partners else player

    @property
    def num_teams(self) -> int:
        return 2 if self.partners else self.num_players
