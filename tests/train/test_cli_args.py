"""train/common/cli_args.py: the scripts' command lines fail in one line on bad input."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from train.common.cli_args import OneLineParser, positive_float, positive_int, settings_flags


@dataclass(frozen=True)
class _Settings:
    steps: int = 10
    lr: float = 0.5
    seed: int = 0
    name: str = "x"


def _parser() -> OneLineParser:
    parser = OneLineParser(prog="demo")
    settings_flags(parser, _Settings(), {"seed": int})
    return parser


def test_the_flags_are_the_fields_with_their_defaults_and_types() -> None:
    args = _parser().parse_args(["--steps", "3", "--lr", "1e-3", "--seed", "-4"])
    assert vars(args) == {"steps": 3, "lr": 1e-3, "seed": -4, "name": "x"}
    assert vars(_parser().parse_args([])) == vars(_Settings())
    assert positive_int("7") == 7 and positive_float("0.25") == 0.25


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "0"], "argument --steps: expected a positive integer, got 0"),
        (["--steps", "2.5"], "argument --steps: expected a positive integer, got '2.5'"),
        (["--lr", "-1"], "argument --lr: expected a positive number, got -1"),
        (["--lr", "inf"], "argument --lr: expected a positive number, got inf"),
        (["--lr", "nan"], "argument --lr: expected a positive number, got nan"),
        (["--seed", "x"], "argument --seed: invalid int value: 'x'"),
        (["--colour", "red"], "unrecognized arguments: --colour red"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag(capsys, argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"demo: error: {message}") and err.count("\n") == 1, err
    assert err.endswith("(see demo --help)\n")
