"""Training pipeline: config validation, the smoke run (train, checkpoint, resume, export), pool."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

import agents
from racko_env.gym_env import RackoGymEnv
from train import ppo
from train.common.config import ConfigError, load_config, parse_config
from train.common.snapshot import SnapshotPolicy
from train.sb3.selfplay import SnapshotPool

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke.yaml"


@pytest.mark.parametrize(
    "path",
    [
        "configs/smoke.yaml",
        "configs/2p.yaml",
        "configs/3p.yaml",
        "configs/4p.yaml",
        "experiments/configs/2p_dagger.yaml",
        "experiments/configs/2p_finetune.yaml",
    ],
)
def test_shipped_configs_validate(path: str) -> None:
    cfg = load_config(REPO / path)
    assert cfg.num_players in (2, 3, 4) and cfg.kind == "ppo"


def test_the_main_configs_train_on_the_plain_win_reward() -> None:
    for n in (2, 3, 4):
        cfg = load_config(REPO / "configs" / f"{n}p.yaml")
        assert (cfg.reward, cfg.shaping) == ("win", 0.0)


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"bogus": 1}, "bogus: unknown key"),
        ({"ppo": {"learning_rat": 0.1}}, "ppo.learning_rat: unknown key"),
        ({"n_envs": 0}, "n_envs:"),
        ({"vec_env": "threads"}, "vec_env:"),
        ({"num_players": 5}, "num_players:"),
        ({"opponents": {"heuristic": -1}}, "opponents"),
        ({"opponents": {}}, "opponents"),
        ({"rules": {"partners": True}}, "partners"),
        ({"rules": {"empty_pile": "burn"}}, "rules.empty_pile:"),
        ({"ppo": {"batch_size": 4096, "n_steps": 64}, "n_envs": 2}, "batch_size"),
        ({"ppo": {"activation": "gelu"}}, "ppo.activation:"),
        ({"shaping": -1}, "shaping:"),
        ({"shaping_kind": "zone"}, "shaping_kind:"),
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


@pytest.mark.parametrize(
    ("script", "text"),
    [
        ("train/ppo.py", "seed: 1\nseed: 2\n"),
        ("train/ppo.py", "# nothing\n"),
        ("train/ppo.py", "final_eval: {opponents: [heuristc]}\n"),
        ("train/value_iteration.py", "kind: value\nopponent: randm\n"),
        ("train/value_iteration.py", "kind: value\nseed: '3'\n"),
    ],
)
def test_cli_config_errors_are_one_line_without_a_traceback(
    tmp_path: Path, script: str, text: str
) -> None:
    import subprocess
    import sys

    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    out = subprocess.run(
        [sys.executable, script, "--config", str(bad), "--out", str(tmp_path / "run")],
        cwd=REPO,
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


def test_pool_mix_shares_the_self_weight() -> None:
    layer = [(np.zeros((14, 177), np.float32), np.zeros(14, np.float32))]
    pool = SnapshotPool(size=3, latest_weight=0.5)
    with pytest.raises(ValueError, match="empty"):
        pool.mix({"self": 1.0})
    snaps = [SnapshotPolicy(layer, "tanh", f"s{i}") for i in range(4)]
    pool.add(snaps[0])
    specs, w = pool.mix({"heuristic": 1.0, "self": 2.0, "expert": 0.0})
    assert specs == ["heuristic", snaps[0]] and w == [1.0, 2.0]
    for s in snaps[1:]:
        pool.add(s)
    specs, w = pool.mix({"heuristic": 1.0, "self": 2.0})
    assert specs == ["heuristic", snaps[3], snaps[1], snaps[2]]  # the oldest dropped out
    assert w == [1.0, 1.0, 0.5, 0.5]


def _params(run_dir: Path) -> tuple[dict, int]:
    """The final policy weights of a run and its step count (read as data only)."""
    import torch

    data = torch.load(run_dir / "final_model.pt", map_location="cpu", weights_only=True)
    return data["policy"], data["timesteps"]


def _same(a: dict, b: dict) -> bool:
    return all(bool((a[k] == b[k]).all()) for k in a)


@pytest.mark.slow
def test_smoke_trains_checkpoints_resumes_and_exports(
    tmp_path: Path, assert_plays_legally, capsys, eval_rows
) -> None:
    full, split = tmp_path / "full", tmp_path / "split"
    assert ppo.main(["--config", str(SMOKE), "--out", str(full), "--no-progress"]) == 0
    for name in ("config.yaml", "final_model.pt", "bot.onnx", "bot.json", "eval_history.json"):
        assert (full / name).is_file(), name
    assert sorted(p.name for p in (full / "checkpoints").iterdir()) == [
        "step_000000001024",
        "step_000000002048",
    ]
    assert list((full / "tb").iterdir()), "no TensorBoard logs"
    manifest = json.loads((full / "bot.json").read_text())
    assert manifest["training"]["seed"] == 0 and manifest["training"]["timesteps"] == 2048
    assert "final_eval" in manifest["evaluation"]
    saved = yaml.safe_load((full / "config.yaml").read_text())
    assert saved["total_steps"] == 2048 and saved["kind"] == "ppo"
    assert not list(full.rglob(".tmp_*")), "temporary files left behind"

    # the exported bot loads through agents.load and plays only legal actions
    bot = agents.load(str(full / "bot.onnx"), num_players=2)
    assert_plays_legally(bot, 2, [bot], steps=300, seed=0)

    # stop half way, resume: the same model as the uninterrupted run, bit for bit
    ppo.main(
        ["--config", str(SMOKE), "--out", str(split), "--total-steps", "1024", "--no-progress"]
    )
    assert ppo.main(["--config", str(SMOKE), "--out", str(split), "--no-progress"]) == 2
    assert "already holds a run; use --resume" in capsys.readouterr().err
    ppo.main(["--resume", "--out", str(split), "--total-steps", "2048", "--no-progress"])
    a, steps_a = _params(full)
    b, steps_b = _params(split)
    assert steps_a == steps_b == 2048
    assert _same(a, b)

    assert eval_rows(full) == eval_rows(split)


def test_init_from_starts_from_a_saved_policy(tmp_path: Path) -> None:
    """A run warm-started from another run's model begins with exactly its weights."""
    from train.common.files import RunFolderError

    source = tmp_path / "source"
    assert ppo.main(["--config", str(SMOKE), "--out", str(source), "--no-progress"]) == 0
    cfg = load_config(SMOKE, init_from=str(source / "final_model.pt"), total_steps=256)
    from train.sb3.envs import make_vec_env

    env = make_vec_env(cfg, ["heuristic"], [1.0])
    model = ppo.build_model(cfg, env)
    ppo.init_policy_from(model, cfg.init_from)
    want, _ = _params(source)
    got = model.policy.state_dict()
    assert _same(want, got)  # actor and critic
    assert any(k.startswith("value_net") for k in want)
    bigger = load_config(SMOKE, ppo={"net_arch": [64, 64]})
    other = ppo.build_model(bigger, env)
    with pytest.raises(RunFolderError, match="does not match the config's policy"):
        ppo.init_policy_from(other, source / "final_model.pt")
    with pytest.raises(RunFolderError, match="init_from"):
        ppo.init_policy_from(other, tmp_path / "missing.pt")
    env.close()


@pytest.mark.slow
def test_same_seed_same_run_other_seed_differs(tmp_path: Path) -> None:
    args = ["--config", str(SMOKE), "--total-steps", "512", "--no-progress"]
    ppo.main([*args, "--out", str(tmp_path / "a")])
    ppo.main([*args, "--out", str(tmp_path / "b")])
    ppo.main([*args, "--out", str(tmp_path / "c"), "--seed", "1"])
    a, _ = _params(tmp_path / "a")
    b, _ = _params(tmp_path / "b")
    c, _ = _params(tmp_path / "c")
    assert _same(a, b)
    assert not _same(a, c)


def test_resume_without_checkpoint_is_refused(tmp_path: Path, capsys) -> None:
    assert ppo.main(["--resume", "--out", str(tmp_path / "nothing")]) == 2
    assert "config.yaml not found" in capsys.readouterr().err


def test_wilson_interval_of_the_periodic_evaluation() -> None:
    from racko_eval import wilson_interval

    lo, hi = wilson_interval(60, 100)
    assert lo < 0.6 < hi and 0.49 < lo < 0.51 and 0.69 < hi < 0.70


def test_shaping_is_potential_based_and_telescopes() -> None:
    """Over whole episodes the discounted shaped terms sum to -coef * phi(s0) (gamma-correct)."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from train.sb3.shaping import RackShaping, ascending_length, potential

    assert ascending_length(np.array([5, 9, 13, 24, 25, 32, 4, 35, 42, 55])) == 9
    assert ascending_length(np.array([3, 2, 1])) == 1

    def make():
        return RackoGymEnv(num_players=2, opponents=["heuristic"], seat=0)

    coef, gamma = 2.0, 0.9
    plain = DummyVecEnv([make])
    shaped = RackShaping(DummyVecEnv([make]), coef=coef, gamma=gamma)
    plain.seed(4)
    shaped.seed(4)
    obs_p, obs_s = plain.reset(), shaped.reset()
    rng = np.random.default_rng(0)
    episodes, t, discounted, phi0 = 0, 0, 0.0, potential(obs_p[0])
    while episodes < 4:
        mask = plain.env_method("action_masks")[0]
        a = np.array([rng.choice(np.flatnonzero(mask))])
        obs_p, r_p, d_p, _ = plain.step(a)
        obs_s, r_s, d_s, _ = shaped.step(a)
        assert np.array_equal(obs_p, obs_s) and d_p[0] == d_s[0]
        discounted += gamma**t * float(r_s[0] - r_p[0])
        t += 1
        if d_p[0]:
            assert discounted == pytest.approx(-coef * phi0, abs=1e-4)
            assert phi0 > 0
            episodes += 1
            t, discounted, phi0 = 0, 0.0, potential(obs_p[0])


def test_shaping_term_ends_at_zero() -> None:
    from train.sb3.shaping import shaping_term

    assert shaping_term(0.3, 0.5, False, 0.99) == pytest.approx(0.99 * 0.5 - 0.3)
    assert shaping_term(0.3, 0.5, True, 0.99) == pytest.approx(-0.3)  # phi = 0 at the end


@pytest.mark.slow
def test_dummy_vec_env_trains_and_resumes_with_fresh_deals(tmp_path: Path) -> None:
    cfg = yaml.safe_load(SMOKE.read_text())
    cfg.update(vec_env="dummy", n_envs=2, total_steps=2048, final_eval={"rounds": 0})
    cfg["ppo"]["n_steps"] = 256
    path = tmp_path / "dummy.yaml"
    path.write_text(yaml.safe_dump(cfg))
    full, split = tmp_path / "full", tmp_path / "split"
    assert ppo.main(["--config", str(path), "--out", str(full), "--no-progress"]) == 0
    assert (full / "bot.onnx").is_file()
    ppo.main(["--config", str(path), "--out", str(split), "--total-steps", "1024", "--no-progress"])
    ckpt = split / "checkpoints" / "step_000000001024"
    assert json.loads((ckpt / "state.json").read_text())["env"] is None  # no games saved
    assert (
        ppo.main(["--resume", "--out", str(split), "--no-progress", "--total-steps", "2048"]) == 0
    )
    # resumed with fresh deals: a different (still seeded) continuation, as docs/training.md says
    assert _params(split)[1] == 2048
