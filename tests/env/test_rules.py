"""The rules API (``racko_env.rules``) and option validation (``RulesConfig``), read as the rule book.

Every case is a row of a table: the rack, what the rule book says it scores, and why.
"""

from __future__ import annotations

import pytest

from racko_env import racko_v1
from racko_env.config import RulesConfig
from racko_env.rules import deck_size, hand_score, is_racko, longest_run

ASCENDING = (1, 2, 4, 8, 16, 20, 25, 30, 33, 40)  # Rack-O with no run longer than 2

# ----------------------------------------------------------------- hand_score


@pytest.mark.parametrize(
    ("rack", "went_racko", "bonus", "expected"),
    [
        pytest.param(
            (5, 9, 13, 24, 25, 32, 4, 35, 42, 55), False, False, 30, id="worked-example-30"
        ),
        pytest.param((10, 3, 4, 5, 6, 7, 8, 9, 11, 12), False, False, 5, id="slot2-below-slot1-5"),
        pytest.param((1, 2, 3, 4, 5, 6, 7, 8, 9, 10), True, False, 75, id="racko-75"),
        pytest.param(ASCENDING, True, False, 75, id="racko-any-ascending-sequence"),
        pytest.param(ASCENDING, False, False, 50, id="ascending-but-not-racko-50"),
        pytest.param((3, 3, 5, 6, 7, 8, 9, 10, 11, 12), False, False, 5, id="equal-is-a-break"),
        pytest.param(
            (2, 4, 6, 1, 9, 10, 11, 12, 13, 14), False, False, 15, id="order-after-break-ignored"
        ),
        pytest.param((40, 1, 2, 3, 4, 5, 6, 7, 8, 9), False, False, 5, id="only-first-card"),
        pytest.param((1, 2, 4, 6, 8, 10, 12, 14, 16, 3), False, False, 45, id="break-at-last-slot"),
        pytest.param(ASCENDING, True, True, 75, id="bonus-no-run-of-3"),
        pytest.param(
            (1, 2, 3, 10, 12, 14, 20, 22, 24, 30), True, True, 125, id="bonus-run3-plus50"
        ),
        pytest.param(
            (1, 2, 3, 4, 12, 14, 20, 22, 24, 30), True, True, 175, id="bonus-run4-plus100"
        ),
        pytest.param((1, 2, 3, 4, 5, 14, 20, 22, 24, 30), True, True, 275, id="bonus-run5-plus200"),
        pytest.param((1, 2, 3, 4, 5, 6, 20, 22, 24, 30), True, True, 475, id="bonus-run6-plus400"),
        pytest.param((1, 2, 3, 4, 5, 6, 7, 8, 9, 10), True, True, 475, id="bonus-run10-plus400"),
        pytest.param(
            (1, 2, 3, 10, 11, 12, 13, 20, 30, 40),
            True,
            True,
            175,
            id="bonus-only-longest-run-counts",
        ),
        pytest.param(
            (1, 2, 3, 4, 5, 6, 20, 22, 24, 30), True, False, 75, id="runs-ignored-without-bonus"
        ),
        pytest.param((1, 2, 3, 4, 5, 6, 20, 22, 24, 3), False, True, 45, id="bonus-only-for-racko"),
    ],
)
def test_hand_score(rack: tuple[int, ...], went_racko: bool, bonus: bool, expected: int) -> None:
    assert hand_score(rack, went_racko, bonus) == expected


def test_hand_score_bonus_defaults_to_off() -> None:
    assert hand_score((1, 2, 3, 4, 5, 6, 7, 8, 9, 10), True) == 75


# ----------------------------------------------------------------- is_racko


@pytest.mark.parametrize(
    ("rack", "min_run", "expected"),
    [
        pytest.param(ASCENDING, 0, True, id="ascending"),
        pytest.param((1, 2, 3, 4, 5, 6, 7, 8, 10, 9), 0, False, id="last-pair-descending"),
        pytest.param((2, 1, 3, 4, 5, 6, 7, 8, 9, 10), 0, False, id="first-pair-descending"),
        pytest.param((1, 2, 3, 4, 5, 5, 7, 8, 9, 10), 0, False, id="equal-cards-not-strict"),
        pytest.param((1, 2, 3, 4, 5, 6, 7, 8, 9), 0, False, id="nine-cards"),
        pytest.param(ASCENDING, 3, False, id="variant-no-run-of-3"),
        pytest.param((1, 5, 6, 7, 12, 20, 25, 30, 33, 40), 3, True, id="variant-run-of-3"),
        pytest.param((1, 5, 6, 12, 13, 20, 25, 30, 33, 40), 3, False, id="variant-runs-of-2-only"),
        pytest.param((1, 5, 6, 7, 8, 20, 25, 30, 33, 40), 4, True, id="variant-run-of-4-needs-4"),
        pytest.param((1, 5, 6, 7, 12, 20, 25, 30, 33, 40), 4, False, id="variant-run-of-3-not-4"),
        pytest.param((1, 2, 3, 4, 5, 6, 7, 8, 10, 9), 3, False, id="variant-still-needs-ascending"),
    ],
)
def test_is_racko(rack: tuple[int, ...], min_run: int, expected: bool) -> None:
    assert is_racko(rack, min_run) is expected


def test_is_racko_min_run_defaults_to_off() -> None:
    assert is_racko(ASCENDING)


# ----------------------------------------------------------------- longest_run


@pytest.mark.parametrize(
    ("rack", "expected"),
    [
        pytest.param(ASCENDING, 2, id="pairs-only"),
        pytest.param((1, 3, 5, 7, 9, 11, 13, 15, 17, 19), 1, id="no-consecutive"),
        pytest.param((17, 18, 19, 1, 2, 30, 31, 32, 33, 5), 4, id="longest-of-several"),
        pytest.param((1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10, id="whole-rack"),
        pytest.param((10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 1, id="descending-is-no-run"),
        pytest.param((5, 7, 6, 8, 9, 10, 20, 21, 22, 40), 3, id="adjacent-slots-only"),
        pytest.param((4, 5, 6, 1, 2, 3, 20, 21, 22, 23), 4, id="run-at-the-back"),
    ],
)
def test_longest_run(rack: tuple[int, ...], expected: int) -> None:
    assert longest_run(rack) == expected


# ----------------------------------------------------------------- deck_size


@pytest.mark.parametrize(
    ("players", "cards"), [(1, 40), (2, 40), (3, 50), (4, 60)], ids=["solitaire", "2p", "3p", "4p"]
)
def test_deck_size(players: int, cards: int) -> None:
    assert deck_size(players) == cards


@pytest.mark.parametrize("players", [0, 5, -2], ids=["0p", "5p", "negative"])
def test_deck_size_rejects_player_counts(players: int) -> None:
    with pytest.raises(ValueError, match="num_players"):
        deck_size(players)


@pytest.mark.parametrize("players", [2.0, "2", True], ids=["float", "str", "bool"])
def test_deck_size_rejects_non_int(players: object) -> None:
    with pytest.raises(TypeError, match="num_players"):
        deck_size(players)  # type: ignore[arg-type]


# ----------------------------------------------------------------- RulesConfig


def test_config_defaults_follow_the_rule_book() -> None:
    cfg = RulesConfig()
    assert (cfg.num_players, cfg.empty_pile, cfg.min_run, cfg.bonus, cfg.partners) == (
        2,
        "shuffle",
        0,
        False,
        False,
    )
    assert cfg.target_score == 500
    assert cfg.turn_limit >= 1


@pytest.mark.parametrize(
    ("options", "error", "name"),
    [
        pytest.param({"num_players": 5}, ValueError, "num_players", id="5-players"),
        pytest.param({"num_players": 0}, ValueError, "num_players", id="0-players"),
        pytest.param({"rack_size": 2}, ValueError, "rack_size", id="rack-2"),
        pytest.param({"rack_size": 11}, ValueError, "rack_size", id="rack-11"),
        pytest.param({"rack_size": 5.0}, TypeError, "rack_size", id="rack-not-int"),
        pytest.param({"deck_size": 61}, ValueError, "deck_size", id="deck-61"),
        pytest.param({"deck_size": 4}, ValueError, "deck_size", id="deck-4"),
        pytest.param({"deck_size": 21}, ValueError, "deck_size", id="deck-leaves-no-draw-2p"),
        pytest.param(
            {"num_players": 1, "rack_size": 3, "deck_size": 4},
            ValueError,
            "deck_size",
            id="deck-4-solitaire",
        ),
        pytest.param(
            {"num_players": 4, "rack_size": 10, "deck_size": 41},
            ValueError,
            "deck_size",
            id="deck-41-4p",
        ),
        pytest.param({"rack_size": 4, "min_run": 5}, ValueError, "min_run", id="run-past-rack"),
        pytest.param({"num_players": 1, "partners": True}, ValueError, "partners", id="solo-team"),
        pytest.param({"num_players": "3"}, TypeError, "num_players", id="players-not-int"),
        pytest.param({"turn_limit": -1}, ValueError, "turn_limit", id="negative-turn-limit"),
        pytest.param({"turn_limit": 0}, ValueError, "turn_limit", id="zero-turn-limit"),
        pytest.param({"turn_limit": 2.5}, TypeError, "turn_limit", id="turn-limit-not-int"),
        pytest.param(
            {"num_players": 3, "partners": True}, ValueError, "partners", id="partners-3p"
        ),
        pytest.param(
            {"num_players": 2, "partners": True}, ValueError, "partners", id="partners-2p"
        ),
        pytest.param({"partners": "yes"}, TypeError, "partners", id="partners-not-bool"),
        pytest.param({"num_players": 3, "min_run": 3}, ValueError, "min_run", id="min-run-3p"),
        pytest.param({"num_players": 4, "min_run": 3}, ValueError, "min_run", id="min-run-4p"),
        pytest.param({"min_run": 2}, ValueError, "min_run", id="min-run-2"),
        pytest.param({"min_run": 11}, ValueError, "min_run", id="min-run-11"),
        pytest.param({"min_run": -3}, ValueError, "min_run", id="min-run-negative"),
        pytest.param({"empty_pile": "burn"}, ValueError, "empty_pile", id="bad-empty-pile"),
        pytest.param({"empty_pile": None}, ValueError, "empty_pile", id="empty-pile-none"),
        pytest.param({"bonus": 1}, TypeError, "bonus", id="bonus-not-bool"),
        pytest.param({"target_score": 0}, ValueError, "target_score", id="zero-target"),
        pytest.param({"target_score": -500}, ValueError, "target_score", id="negative-target"),
    ],
)
def test_config_rejects_bad_options(options: dict, error: type[Exception], name: str) -> None:
    with pytest.raises(error, match=name):
        RulesConfig(**options)
    with pytest.raises(error, match=name):
        RulesConfig.from_dict(options)


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"num_players": 4, "partners": True, "bonus": True}, id="partners-bonus"),
        pytest.param({"num_players": 2, "min_run": 3}, id="run-variant"),
        pytest.param({"num_players": 3, "empty_pile": "flip", "turn_limit": 1}, id="flip-limit-1"),
        pytest.param({"target_score": 1}, id="target-1"),
        pytest.param({"num_players": 1}, id="solitaire"),
        pytest.param({"num_players": 1, "rack_size": 3, "deck_size": 5}, id="smallest-solitaire"),
        pytest.param({"num_players": 4, "rack_size": 3, "deck_size": 14}, id="smallest-4p"),
        pytest.param({"num_players": 2, "rack_size": 4, "min_run": 4}, id="run-the-whole-rack"),
        pytest.param({"num_players": 4, "deck_size": 42}, id="deck-42-4p"),
    ],
)
def test_config_accepts_valid_options(options: dict) -> None:
    cfg = RulesConfig.from_dict(options)
    assert {k: getattr(cfg, k) for k in options} == options
    assert RulesConfig.from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize(
    ("options", "cards"),
    [({}, 40), ({"num_players": 1}, 40), ({"num_players": 4}, 60), ({"deck_size": 30}, 30)],
)
def test_config_num_cards(options: dict, cards: int) -> None:
    assert RulesConfig(**options).num_cards == cards


def test_config_errors_are_one_line() -> None:
    with pytest.raises(ValueError) as err:
        RulesConfig(num_players=3, rack_size=6, deck_size=19)
    assert str(err.value) == (
        "rules option 'deck_size' must be at least num_players x rack_size + 2 = 20 (the deal "
        "leaves a discard top and a draw pile), got 19"
    )


def test_config_unknown_key_is_named() -> None:
    with pytest.raises(ValueError, match="partner_mode"):
        RulesConfig.from_dict({"num_players": 4, "partner_mode": True})


def test_config_is_immutable() -> None:
    cfg = RulesConfig()
    with pytest.raises(AttributeError):
        cfg.num_players = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        pytest.param({"partner_mode": True}, "partner_mode", id="unknown-option"),
        pytest.param({"num_players": 5}, "num_players", id="5-players"),
        pytest.param({"turn_limit": -1}, "turn_limit", id="negative-turn-limit"),
        pytest.param({"num_players": 3, "partners": True}, "partners", id="partners-3p"),
        pytest.param({"episode": "match"}, "episode", id="bad-episode"),
        pytest.param({"reward": "points"}, "reward", id="bad-reward"),
        pytest.param({"render_mode": "rgb_array"}, "render_mode", id="bad-render-mode"),
        pytest.param({"viewer": 2}, "viewer", id="viewer-not-a-seat"),
    ],
)
def test_env_rejects_bad_options(kwargs: dict, name: str) -> None:
    for make in (racko_v1.env, racko_v1.raw_env):
        with pytest.raises(ValueError, match=name):
            make(**kwargs)


def test_team_of_partners_sit_opposite() -> None:
    cfg = RulesConfig(num_players=4, partners=True)
    assert [cfg.team_of(p) for p in range(4)] == [0, 1, 0, 1]
    assert cfg.num_teams == 2
    solo = RulesConfig(num_players=4)
    assert [solo.team_of(p) for p in range(4)] == [0, 1, 2, 3]
    assert solo.num_teams == 4


def test_every_rules_option_is_declared_once_and_derived_everywhere() -> None:
    """The flags of every command and the web page's table come from RulesConfig's declaration:
    each option has its type, default and help there, and a flag with that default."""
    import argparse
    from dataclasses import fields

    from racko_env.cli import RULES_FLAGS, add_rules_arguments, flag
    from racko_env.config import option_table

    names = [f.name for f in fields(RulesConfig)]
    assert [row["name"] for row in option_table()] == names
    assert all(row["help"] and row["label"] for row in option_table())
    parser = argparse.ArgumentParser()
    add_rules_arguments(parser)
    defaults = vars(parser.parse_args([]))
    assert set(RULES_FLAGS) == set(names) - {"num_players"} == set(defaults)
    assert RulesConfig(**defaults) == RulesConfig()
    assert flag("turn_limit") == "--turn-limit" and flag("num_players") == "--players"
    given = vars(parser.parse_args(["--turn-limit", "60", "--empty-pile", "flip", "--bonus"]))
    assert RulesConfig(**given) == RulesConfig(turn_limit=60, empty_pile="flip", bonus=True)
