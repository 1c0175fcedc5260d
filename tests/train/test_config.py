"""The training config schema (train/common/config.py): shipped configs, one line per bad key, bot
specs, files, overrides."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from train.common.config import ConfigError, load_config, parse_config

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke.yaml"


@pytest.mark.parametrize(
    "path",
    [
        "configs/smoke.yaml",
        "configs/2p.yaml",
        "configs/3p.yaml",
        "configs/4p.yaml",
    ],
)
def test_shipped_configs_validate(path: str) -> None:
    cfg = load_config(REPO / path)
    assert cfg.num_players in (2, 3, 4) and cfg.kind == "ppo"


@pytest.mark.parametrize(
    ("path", "players", "rack", "deck", "reward"),
    [
        ("configs/solitaire.yaml", 1, 10, 40, "turns"),
        ("configs/solitaire_k4.yaml", 1, 4, 10, "turns"),
        ("configs/2p_k5.yaml", 2, 5, 20, "win"),
    ],
)
def test_the_variant_configs_validate(
    path: str, players: int, rack: int, deck: int, reward: str
) -> None:
    cfg = load_config(REPO / path)
    rules = cfg.rules_config()
    assert (cfg.num_players, rules.rack_size, rules.num_cards, cfg.reward) == (
        players,
        rack,
        deck,
        reward,
    )
    assert cfg.ppo.policy == "structured" and cfg.ppo.gamma == 1.0


def test_the_main_configs_train_on_the_plain_win_reward() -> None:
    for n in (2, 3, 4):
        cfg = load_config(REPO / "configs" / f"{n}p.yaml")
        assert cfg.reward == "win"


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"bogus": 1}, "bogus: unknown key"),
        ({"ppo": {"learning_rat": 0.1}}, "ppo.learning_rat: unknown key"),
        ({"n_envs": 0}, "n_envs:"),
        ({"num_players": 5}, "num_players:"),
        ({"opponents": {"heuristic": -1}}, "opponents"),
        ({"opponents": {}}, "opponents"),
        ({"rules": {"partners": True}}, "partners"),
        ({"rules": {"empty_pile": "burn"}}, "rules.empty_pile:"),
        ({"ppo": {"batch_size": 4096, "n_steps": 64}, "n_envs": 2}, "batch_size"),
        ({"ppo": {"activation": "gelu"}}, "ppo.activation:"),
        ({"init_from": "x.pt", "pretrain": {"decisions": 10}}, "init_from and pretrain"),
        ({"init_from": "runs/a/final_model.zip"}, "init_from: init_from must be a run's final"),
        # strict types: no silent coercion
        ({"progress_bar": "yes"}, "progress_bar:"),
        ({"n_envs": "2"}, "n_envs:"),
        ({"n_envs": 2.0}, "n_envs:"),
        ({"seed": True}, "seed:"),
        ({"ppo": {"learning_rate": "0.001"}}, "ppo.learning_rate:"),
        # seeds within 0..2**32-1
        ({"seed": -1}, "seed:"),
        ({"seed": 2**32}, "seed:"),
        ({"eval": {"seed": 2**40}}, "eval.seed:"),
        ({"final_eval": {"seed": -5}}, "final_eval.seed:"),
        # finite positive weights
        ({"opponents": {"heuristic": float("inf")}}, "opponents.heuristic:"),
        ({"opponents": {"heuristic": float("nan")}}, "opponents.heuristic:"),
        ({"opponents": {"heuristic": 0.0, "expert": 1.0}}, "must be finite and > 0"),
        ({"ppo": {"gamma": float("nan")}}, "ppo.gamma:"),
        # the run folder
        ({"out": ""}, "out:"),
        ({"out": "   "}, "out:"),
        # every bot the run seats is resolved at load time
        ({"opponents": {"heuristik": 1.0}}, "unknown bot 'heuristik'"),
        ({"eval": {"opponents": ["expret"]}}, "eval.opponents:"),
        ({"final_eval": {"opponents": ["heuristic", "nobody"]}}, "final_eval.opponents:"),
        ({"pretrain": {"teacher": "expertt"}}, "pretrain.teacher:"),
        ({"opponents": {"agents.heuristic:NoSuchBot": 1.0}}, "has no 'NoSuchBot'"),
        ({"opponents": {"no_such_module_x:Bot": 1.0}}, "cannot import module"),
        ({"opponents": {"bots/missing.onnx": 1.0}}, "does not exist"),
        ({"kind": "value"}, "kind:"),
        # solitaire trains on its turns and only it does
        ({"num_players": 1}, "reward: 'win' with num_players 1"),
        ({"num_players": 1, "reward": "score"}, "reward: 'score' with num_players 1"),
        ({"reward": "turns"}, "reward: 'turns' with num_players 2"),
    ],
)
def test_bad_configs_name_the_key(data: dict, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(data, "test.yaml")
    assert key in str(err.value)
    assert "test.yaml" in str(err.value)
    assert "\n" not in str(err.value)  # one line


def test_bot_specs_that_exist_are_accepted(tmp_path: Path) -> None:
    bot = tmp_path / "bot.onnx"
    bot.write_bytes(b"x")
    with pytest.raises(ConfigError, match="no manifest"):
        parse_config({"opponents": {str(bot): 1.0}})
    bot.with_suffix(".json").write_text("{}")
    cfg = parse_config(
        {
            "opponents": {str(bot): 1.0, "agents.heuristic:HeuristicBot": 1.0, "self": 1.0},
            "final_eval": {"opponents": ["random", "expert"]},
        }
    )
    assert cfg.opponents["self"] == 1.0


def test_the_shipped_bots_are_accepted_by_name_as_agents_load_knows_them() -> None:
    cfg = parse_config({"opponents": {"racko_2p": 1.0}, "eval": {"opponents": ["racko_2p"]}})
    assert cfg.opponents == {"racko_2p": 1.0} and cfg.eval.opponents == ["racko_2p"]
    with pytest.raises(ConfigError, match=r"unknown bot 'racko_9p'; known bots are .*'racko_2p'"):
        parse_config({"opponents": {"racko_9p": 1.0}})


def test_config_file_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="missing.yaml"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    bad.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(bad)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"", "is empty"),
        (b"# only a comment\n\n", "is empty"),
        (b"null\n", "is empty"),
        (b"~\n", "is empty"),
        (b"seed: 1\nseed: 2\n", "duplicate key 'seed' (line 2)"),
        (b"ppo: {n_steps: 64, n_steps: 32}\n", "duplicate key 'n_steps'"),
        (b"seed: 1\nout: caf\xe9\n", "not UTF-8 text (byte 0xe9"),
    ],
)
def test_empty_duplicate_and_non_utf8_config_files_are_refused(
    tmp_path: Path, text: bytes, message: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(bad)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("script", "text"),
    [  # a process each (the imports of a trainer): the quick subset runs one per script
        ("train/ppo.py", "seed: 1\nseed: 2\n"),
        pytest.param("train/ppo.py", "# nothing\n", marks=pytest.mark.slow),
        pytest.param(
            "train/ppo.py", "final_eval: {opponents: [heuristc]}\n", marks=pytest.mark.slow
        ),
        pytest.param("train/ppo.py", "opponents: {randm: 1.0}\n", marks=pytest.mark.slow),
    ],
)
def test_cli_config_errors_are_one_line_without_a_traceback(
    tmp_path: Path, script: str, text: str
) -> None:
    import os
    import subprocess
    import sys

    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    out = subprocess.run(
        [sys.executable, script, "--config", str(bad), "--out", str(tmp_path / "run")],
        cwd=REPO,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
        },  # the checkout under test, not another installed copy
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and "bad.yaml" in lines[0], out.stderr
    assert not (tmp_path / "run").exists()  # nothing was started


def test_overrides_apply() -> None:
    cfg = load_config(SMOKE, seed=9, total_steps=100, out="x", n_envs=None)
    assert (cfg.seed, cfg.total_steps, cfg.out) == (9, 100, "x")


def test_update_threads_apply_to_the_gradient_steps_only(monkeypatch) -> None:
    """``update_threads``: PPO's update runs on that many torch threads, the rollout on its own."""
    import torch
    from sb3_contrib import MaskablePPO

    from train.sb3.model import build_model

    seen: list[int] = []
    monkeypatch.setattr(MaskablePPO, "train", lambda self: seen.append(torch.get_num_threads()))
    before = torch.get_num_threads()
    cfg = parse_config({**_smoke_dict(), "update_threads": 2}, "test")
    model = build_model(cfg)
    model.train()
    assert seen == [2] and torch.get_num_threads() == before
    assert type(build_model(parse_config(_smoke_dict(), "test"))) is MaskablePPO
    with pytest.raises(ConfigError, match="update_threads"):
        parse_config({**_smoke_dict(), "update_threads": 0}, "test")


def test_anneal_lr_decays_the_learning_rate_to_zero_over_the_run() -> None:
    """``ppo.anneal_lr``: the rate of each update falls linearly with the run's env steps (SB3
    reads the progress from the step count, so a resumed run continues the same line)."""
    from train.sb3.model import build_model

    data = _smoke_dict()
    data["ppo"] = {**data.get("ppo", {}), "learning_rate": 1e-3}

    def rate_at(model, steps: int) -> float:  # the rate SB3 gives the update at this step
        model._update_current_progress_remaining(steps, 1000)
        return model.lr_schedule(model._current_progress_remaining)

    steady = build_model(parse_config(data, "test"))
    assert [rate_at(steady, s) for s in (0, 500, 1000)] == [1e-3] * 3
    data["ppo"]["anneal_lr"] = True
    annealed = build_model(parse_config(data, "test"))
    assert [rate_at(annealed, s) for s in (0, 250, 1000)] == pytest.approx([1e-3, 7.5e-4, 0.0])


def _smoke_dict() -> dict:
    import yaml

    return yaml.safe_load(SMOKE.read_text())


def test_the_rules_section_is_derived_from_rules_config() -> None:
    """Its keys, defaults and ranges are RulesConfig's: no second declaration to keep equal."""
    from dataclasses import fields

    from racko_env.config import RulesConfig
    from train.common.config import GameConfig, RulesSection

    options = {f.name: f.default for f in fields(RulesConfig)}
    assert RulesSection().model_dump() == {k: v for k, v in options.items() if k != "num_players"}
    schema = GameConfig.model_json_schema()
    assert schema["properties"]["num_players"]["maximum"] == 4
    assert RulesSection.model_json_schema()["properties"]["empty_pile"]["enum"] == [
        "shuffle",
        "flip",
    ]
