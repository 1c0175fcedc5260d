"""An impossible variant (a rack of 2, 5 players, a deck too small for the players' racks) is one
line naming the option, from the config loader and from every command, before any work starts
and without a run folder left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from train.common.config import ConfigError, parse_config

REPO = Path(__file__).resolve().parents[2]

# (config keys, the config key named, RulesConfig's words, the flags, the flag named)
VARIANTS = [
    (
        {"rules": {"rack_size": 2}},
        "rules.rack_size",
        "rules option 'rack_size' must be between 3 and 10, got 2",
        ["--rack-size", "2"],
        "--rack-size must be between 3 and 10, got 2",
    ),
    (
        {"num_players": 5},
        "num_players",
        "rules option 'num_players' must be between 1 and 4, got 5",
        ["--players", "5"],
        "--players",
    ),
    (
        {"num_players": 4, "rules": {"deck_size": 20}},
        "rules.deck_size",
        "rules option 'deck_size' must be at least num_players x rack_size + 2 = 42",
        ["--players", "4", "--deck-size", "20"],
        "--deck-size must be at least num_players x rack_size + 2 = 42",
    ),
    (
        {"num_players": 1, "rules": {"rack_size": 5, "deck_size": 6}},
        "rules.deck_size",
        "rules option 'deck_size' must be at least num_players x rack_size + 2 = 7",
        ["--players", "1", "--rack-size", "5", "--deck-size", "6"],
        "--deck-size must be at least num_players x rack_size + 2 = 7",
    ),
]
IDS = ["rack-of-2", "5-players", "deck-too-small", "solitaire-deck-too-small"]


def _yaml(keys: dict) -> str:
    import yaml

    return yaml.safe_dump(keys)


@pytest.mark.parametrize(("keys", "key", "words", "flags", "flag"), VARIANTS, ids=IDS)
def test_the_config_loader_names_the_option_in_one_line(keys, key, words, flags, flag) -> None:
    """Both trainers' schemas: ``invalid config FILE: KEY: RulesConfig's words``."""
    from train.rllib.config import RLlibConfig

    for schema in (None, RLlibConfig):
        with pytest.raises(ConfigError) as err:
            parse_config(keys, "bad.yaml", **({} if schema is None else {"schema": schema}))
        text = str(err.value)
        assert "\n" not in text and text.startswith(f"invalid config bad.yaml: {key}: {words}")


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *argv],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},  # the checkout under test
        capture_output=True,
        text=True,
        timeout=300,
    )


def _one_line(out: subprocess.CompletedProcess, *words: str) -> str:
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    for w in words:
        assert w in lines[0], out.stderr
    return lines[0]


TRAINERS = [  # a process each (a trainer's imports): the quick subset runs the first
    ("train/ppo.py", 0),
    pytest.param("train/ppo.py", 1, marks=pytest.mark.slow),
    pytest.param("train/ppo.py", 2, marks=pytest.mark.slow),
    pytest.param("train/rllib_ppo.py", 2, marks=pytest.mark.slow),
    pytest.param("-m racko_apps.cli train", 1, marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("command", "case"), TRAINERS)
def test_the_trainers_stop_in_one_line_before_any_run_folder(tmp_path, command, case) -> None:
    keys, key, words, _, _ = VARIANTS[case]
    bad = tmp_path / "bad.yaml"
    bad.write_text(_yaml(keys))
    argv = [*command.split(), "--config", str(bad), "--out", str(tmp_path / "run")]
    line = _one_line(_run(argv, REPO), "error:", "bad.yaml", f"{key}: {words}")
    assert line.split(": error: ")[0] in ("ppo", "rllib_ppo")
    assert not (tmp_path / "run").exists()  # nothing was started


@pytest.mark.parametrize(("keys", "key", "words", "flags", "flag"), VARIANTS, ids=IDS)
def test_evaluate_names_the_flag_in_one_line(capsys, keys, key, words, flags, flag) -> None:
    from racko_eval.evaluate import main

    argv = [*flags, "--bots", "expert", "heuristic", "--rounds", "2", "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("evaluate: error: ") and flag in err


@pytest.mark.parametrize(("keys", "key", "words", "flags", "flag"), VARIANTS, ids=IDS)
def test_play_and_league_name_the_flag(tmp_path, capsys, keys, key, words, flags, flag) -> None:
    """Their errors name the flag in their last line (a usage error, argparse's, comes after
    the usage lines); no game starts and nothing is written in the league's folder."""
    from racko_apps.cli import main as racko

    for command, argv in (
        ("racko", ["play", *flags, "--watch", "--bots", "expert", "expert"]),
        ("racko league", ["league", str(tmp_path), *flags]),
    ):
        try:
            status = racko(argv)
        except SystemExit as stop:
            status = stop.code
        assert status == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith(f"{command}: error: ") and "Traceback" not in "\n".join(err)
        if command == "racko":  # play names RulesConfig's flags; league's --players is a choice
            assert flag in err[-1]
        else:
            assert any(f in err[-1] for f in flags if f.startswith("--"))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("keys", "key", "words", "flags", "flag"), VARIANTS, ids=IDS)
def test_grade_names_the_rubrics_rules_in_one_line(tmp_path, capsys, keys, key, words, flags, flag):
    import yaml

    from racko_apps.cli import main as racko

    (rubric,) = (REPO / "racko_apps").rglob("rubrics/quick.yaml")  # the shipped quick rubric
    data = yaml.safe_load(rubric.read_text())
    data["players"] = keys.get("num_players", 2)
    data["rules"] = {**data.get("rules", {}), **keys.get("rules", {})}
    path = tmp_path / "bad_rubric.yaml"
    path.write_text(yaml.safe_dump(data))
    assert racko(["grade", "expert", "--rubric", str(path), "--no-isolation"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("racko grade: error: rubric ")
    option = key.removeprefix("rules.")
    assert option in err or "players" in err


@pytest.mark.parametrize(("keys", "key", "words", "flags", "flag"), VARIANTS, ids=IDS)
def test_the_envs_name_the_option_in_one_line(keys, key, words, flags, flag) -> None:
    from racko_env import racko_v1
    from racko_env.vector import VectorRacko

    options = {"num_players": keys.get("num_players", 2), **keys.get("rules", {})}
    for make in (racko_v1.env, racko_v1.raw_env, lambda **o: VectorRacko(2, **o)):
        with pytest.raises(ValueError) as err:
            make(**options)
        assert "\n" not in str(err.value) and words in str(err.value)
