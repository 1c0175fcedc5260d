"""The trainers' one front door (train/common/front_door.py): the same flags, the same one-line
errors and exit status, the run kinds of the run-folder contract, for every trainer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from racko_env.cli import OneLineParser
from train.common.front_door import (
    FrontDoor,
    Launch,
    one_line,
    positive_float,
    positive_int,
    settings_flags,
)
from train.common.runs import RunKind

REPO = Path(__file__).resolve().parents[2]
TOY_CONFIG = REPO / "configs" / "smoke.yaml"


def _doors() -> dict[str, FrontDoor]:
    from train.sb3 import run as ppo

    doors = {"ppo": ppo.PPO}
    try:
        from train.rllib import run as rllib_ppo
    except ImportError:  # the cluster extra is not installed
        return doors
    return {**doors, "rllib_ppo": rllib_ppo.RLLIB}


def test_every_trainer_has_the_common_flags_and_its_own() -> None:
    for name, door in _doors().items():
        assert door.name == name
        flags = {a.dest for a in door.parser()._actions}
        assert {"config", "out", "resume", door.run.length} <= flags, name
        assert ("seed" in flags) == door.seed
    doors = _doors()
    assert "no_progress" in {a.dest for a in doors["ppo"].parser()._actions}
    if "rllib_ppo" in doors:
        assert "address" in {a.dest for a in doors["rllib_ppo"].parser()._actions}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "--config is required (e.g. configs/2p.yaml)"),
        (["--resume"], "--resume needs --out RUN_DIR or the --config that names it"),
        (["--config", "nowhere.yaml"], "nowhere.yaml"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys) -> None:
    from train.sb3 import run as ppo

    assert ppo.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ppo: error: ") and message in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_new_run_then_its_resume_reach_the_trainer(tmp_path: Path, capsys) -> None:
    """A toy run kind: the door prepares the folder and passes the command line."""
    from train.common.config import TrainConfig

    seen: list[Launch] = []

    def train(run: Launch) -> None:
        seen.append(run)
        (run.run_dir / "done").write_text("1")

    toy = RunKind(
        command="python train/toy.py",
        schema=TrainConfig,
        length="total_steps",
        holds_a_run=lambda run_dir: (run_dir / "done").is_file(),
        example="configs/smoke.yaml",
    )
    door = FrontDoor(toy, "a toy", train, errors=(KeyError,))
    run = tmp_path / "run"
    assert door.main(["--config", str(TOY_CONFIG), "--out", str(run), "--seed", "4"]) == 0
    first = seen[-1]
    assert first.cfg.seed == 4 and first.run_dir == run and not first.args.resume
    assert door.main(["--config", str(TOY_CONFIG), "--out", str(run)]) == 2  # holds a run
    assert "already holds a run" in capsys.readouterr().err
    assert door.main(["--resume", "--out", str(run), "--total-steps", "4096"]) == 0
    assert seen[-1].args.resume and seen[-1].cfg.total_steps == 4096

    def broken(run: Launch) -> None:
        raise KeyError("a trainer's own bad input\nsecond line")

    assert FrontDoor(toy, "a toy", broken, errors=(KeyError,)).main(["--resume", "--out", str(run)])
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_one_line_joins_a_report() -> None:
    assert one_line(ValueError("2 errors:\n  a\n  b")) == "2 errors:   a;   b"


# ---------------------------------------------------------------- scripts that are not front doors


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
