"""The rules options of a game, as one validated, immutable object."""

from __future__ import annotations

from dataclasses import Field, asdict, dataclass, field, fields
from typing import Any

from racko_env.rules import (
    MAX_CARDS,
    MAX_PLAYERS,
    MIN_RACK_SIZE,
    RACK_SIZE,
    SOLITAIRE,
    TARGET_SCORE,
)
from racko_env.rules import deck_size as default_deck_size

EMPTY_PILE_MODES = ("shuffle", "flip")
DEFAULT_TURN_LIMIT = 400


def option(
    default: Any,
    label: str,
    help: str,
    *,
    choices: tuple[str, ...] | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
    off: int | None = None,
    needs: tuple[str, int, str] | None = None,
    off_means: str = "off",
) -> Any:
    """One rules option's whole declaration, kept in the dataclass field's metadata.

    Everything that shows or checks an option reads it from here: ``RulesConfig`` validates with
    it, ``racko_env.cli`` builds the command-line flags, the training configs' rules section
    (``train/common/config.py``) its schema, and ``web/js/rules_options.js`` (generated) the
    web page's checks. ``off`` is a value allowed outside ``minimum``..``maximum`` (``min_run=0``),
    ``off_means`` what it means;
    ``needs=(other, value, why)`` says a set option needs ``other == value``. ``label`` is the
    option's short name on the web page's form.
    """
    meta = {
        "label": label,
        "help": help,
        "choices": choices,
        "minimum": minimum,
        "maximum": maximum,
        "off": off,
        "off_means": off_means,
    }
    return field(default=default, metadata={**meta, "needs": needs})


@dataclass(frozen=True)
class RulesConfig:
    """Every rules option of the rule book, ``docs/rules.md``: the one declaration of each option
    (its name, type, default, range and help text); see ``option``."""

    num_players: int = option(
        2,
        "Players",
        "players (1: solitaire, Rack-O in as few turns as possible); the deck is 1-40, 1-50 or "
        "1-60 unless deck_size says otherwise",
        minimum=SOLITAIRE,
        maximum=MAX_PLAYERS,
    )
    empty_pile: str = option(
        "shuffle",
        "Empty draw pile",
        "when the draw pile runs out, shuffle the discards or turn them over",
        choices=EMPTY_PILE_MODES,
    )
    turn_limit: int = option(
        DEFAULT_TURN_LIMIT,
        "Turn limit",
        "turns (all players together) after which a round without Rack-O is cut off",
        minimum=1,
    )
    min_run: int = option(
        0,
        "Rack-O needs a run of",
        "2 players: Rack-O also needs a run of this many consecutive numbers (0: off)",
        minimum=3,
        maximum=RACK_SIZE,
        off=0,
        needs=("num_players", 2, "(the run variant) is for 2 players only"),
    )
    bonus: bool = option(
        False, "Bonus Rack-O", "Bonus Rack-O: the player going Rack-O scores its longest run"
    )
    partners: bool = option(
        False,
        "Partners",
        "4 players in two teams (seats 0+2 against 1+3) adding their scores",
        needs=("num_players", 4, "needs exactly 4 players"),
    )
    target_score: int = option(TARGET_SCORE, "Play to", "points that win the game", minimum=1)
    rack_size: int = option(
        RACK_SIZE,
        "Rack slots",
        "slots of a rack (k): smaller racks make smaller games",
        minimum=MIN_RACK_SIZE,
        maximum=RACK_SIZE,
    )
    deck_size: int = option(
        0,
        "Deck",
        "cards 1..N in play (0: 40, 50 or 60 from the players); the deal must leave a discard "
        "top and a draw pile: at least players x rack_size + 2",
        minimum=SOLITAIRE * MIN_RACK_SIZE + 2,
        maximum=MAX_CARDS,
        off=0,
        off_means="from the players",
    )

    def __post_init__(self) -> None:
        """Each option in declaration order: its type, its range or choices, what it needs."""
        for f in fields(self):
            check_option(f, getattr(self, f.name), self)
        check_together(self)

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

    @property
    def num_cards(self) -> int:
        """The deck in play, cards 1..``num_cards``: ``deck_size``, or the players' default."""
        return self.deck_size or default_deck_size(self.num_players)

    @property
    def is_default_size(self) -> bool:
        """The rule book's racks (10 slots) and deck for its players (40/50/60)."""
        return self.rack_size == RACK_SIZE and self.deck_size in (
            0,
            default_deck_size(self.num_players),
        )


# What plays a game of other sizes: the refusals of the components that do not name it.
SMALL_GAME_BOTS = "expert, heuristic and random"


def size_option(rules: RulesConfig) -> str | None:
    """The first option that makes ``rules`` other than the rule book's sizes (10-slot racks, the
    players' deck, 2-4 players) as ``"name=value"``, or None for a rule-book game."""
    if rules.rack_size != RACK_SIZE:
        return f"rack_size={rules.rack_size}"
    if not rules.is_default_size:
        return f"deck_size={rules.deck_size}"
    if rules.num_players == SOLITAIRE:
        return f"num_players={SOLITAIRE}"
    return None


def require_rule_book_sizes(rules: RulesConfig, what: str, supported_by: str) -> None:
    """Refuse, in one line, a game of other sizes for a component (``what``) that plays only the
    rule book's, naming the option and ``supported_by``, what does support it."""
    option = size_option(rules)
    if option is not None:
        raise ValueError(
            f"{option}: {what} supports the rule book's sizes only (rack_size={RACK_SIZE}, the "
            f"players' deck, 2-4 players); {supported_by} support it"
        )


def check_together(rules: RulesConfig) -> None:
    """The checks that read more than one option: the deal must leave a discard top and at least
    one card to draw, and a Rack-O run cannot be longer than the rack."""
    k, players = rules.rack_size, rules.num_players
    if rules.min_run > k:
        raise ValueError(
            f"rules option 'min_run' must be at most rack_size={k}, got {rules.min_run}"
        )
    needed = players * k + 2
    if rules.num_cards < needed:
        given = rules.deck_size or f"0 (the default {rules.num_cards})"
        raise ValueError(
            f"rules option 'deck_size' must be at least num_players x rack_size + 2 = {needed} "
            f"(the deal leaves a discard top and a draw pile), got {given}"
        )


def check_option(f: Field, value: Any, rules: Any) -> None:
    """Raise TypeError/ValueError, in words naming the option, unless ``value`` fits ``f``'s
    declaration (``rules``: the other options, for ``needs``)."""
    meta, name = f.metadata, f.name
    if f.type in ("int", int) and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"rules option {name!r} must be an int, got {value!r}")
    if f.type in ("bool", bool) and not isinstance(value, bool):
        raise TypeError(f"rules option {name!r} must be a bool, got {value!r}")
    if meta["choices"] is not None and value not in meta["choices"]:
        raise ValueError(f"rules option {name!r} must be one of {meta['choices']}, got {value!r}")
    low, high, off = meta["minimum"], meta["maximum"], meta["off"]
    if off is not None and value == off:
        pass
    elif low is not None and high is not None and not low <= value <= high:
        where = f"between {low} and {high}"
        where = where if off is None else f"{off} ({meta['off_means']}) or {where}"
        raise ValueError(f"rules option {name!r} must be {where}, got {value}")
    elif low is not None and high is None and value < low:
        raise ValueError(f"rules option {name!r} must be at least {low}, got {value}")
    if meta["needs"] is not None and value:
        other, wanted, why = meta["needs"]
        if getattr(rules, other) != wanted:
            raise ValueError(f"rules option {name!r} {why}, got {other}={getattr(rules, other)}")


def option_table() -> list[dict[str, Any]]:
    """Every option's declaration as plain data (name, type, default and ``option``'s keys), in
    declaration order: what the web page's generated ``rules_options.js`` holds."""
    return [
        {"name": f.name, "type": str(f.type), "default": f.default, **f.metadata}
        for f in fields(RulesConfig)
    ]
