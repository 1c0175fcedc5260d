"""Training pipeline: config validation, the smoke run (train, checkpoint, resume, export), pool."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

import agents
from racko_env.gym_env import RackoGymEnv
from train import ppo
from train.config import ConfigError, load_config, parse_config
from train.selfplay import SnapshotPool
from train.snapshot import SnapshotPolicy

REPO = Path(__file__).resolve().parent.parent
SMOKE = REPO / "configs" / "smoke.yaml"


@pytest.mark.parametrize("name", ["smoke", "2p", "3p", "4p", "2p_finetune"])
def test_shipped_configs_validate(name: str) -> None:
    cfg = load_config(REPO / "configs" / f"{name}.yaml")
    assert cfg.num_players in (2, 3, 4)


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
        ({"init_from": "x.zip", "pretrain": {"decisions": 10}}, "init_from and pretrain"),
    ],
)
def test_bad_configs_name_the_key(data: dict, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(data, "test.yaml")
    assert key in str(err.value)
    assert "test.yaml" in str(err.value)


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


def _params(run_dir: Path) -> dict:
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(run_dir / "final_model.zip", device="cpu")
    return {k: v.clone() for k, v in model.policy.state_dict().items()}, model


def _same(a: dict, b: dict) -> bool:
    return all(bool((a[k] == b[k]).all()) for k in a)


@pytest.mark.slow
def test_smoke_trains_checkpoints_resumes_and_exports(tmp_path: Path, assert_plays_legally) -> None:
    full, split = tmp_path / "full", tmp_path / "split"
    assert ppo.main(["--config", str(SMOKE), "--out", str(full), "--no-progress"]) == 0
    for name in ("config.yaml", "final_model.zip", "bot.onnx", "bot.json", "eval_history.json"):
        assert (full / name).is_file(), name
    assert sorted(p.name for p in (full / "checkpoints").iterdir()) == [
        "step_000000001024",
        "step_000000002048",
    ]
    assert list((full / "tb").iterdir()), "no TensorBoard logs"
    manifest = json.loads((full / "bot.json").read_text())
    assert manifest["training"]["seed"] == 0 and manifest["training"]["timesteps"] == 2048
    assert "final_eval" in manifest["evaluation"]
    assert yaml.safe_load((full / "config.yaml").read_text())["total_steps"] == 2048

    # the exported bot loads through agents.load and plays only legal actions
    bot = agents.load(str(full / "bot.onnx"), num_players=2)
    assert_plays_legally(bot, 2, [bot], steps=300, seed=0)

    # stop half way, resume: the same model as the uninterrupted run, bit for bit
    ppo.main(
        ["--config", str(SMOKE), "--out", str(split), "--total-steps", "1024", "--no-progress"]
    )
    with pytest.raises(FileExistsError, match="--resume"):
        ppo.main(["--config", str(SMOKE), "--out", str(split), "--no-progress"])
    ppo.main(["--resume", "--out", str(split), "--total-steps", "2048", "--no-progress"])
    a, model_a = _params(full)
    b, model_b = _params(split)
    assert model_b.num_timesteps == 2048
    assert _same(a, b)

    def history(run: Path) -> list[dict]:  # wall-clock minutes differ between runs
        rows = json.loads((run / "eval_history.json").read_text())
        return [{k: v for k, v in row.items() if k != "minutes"} for row in rows]

    assert history(full) == history(split)


def test_init_from_starts_from_a_saved_policy(tmp_path: Path) -> None:
    """A run warm-started from another run's model begins with exactly its weights."""
    source = tmp_path / "source"
    assert ppo.main(["--config", str(SMOKE), "--out", str(source), "--no-progress"]) == 0
    cfg = load_config(SMOKE, init_from=str(source / "final_model.zip"), total_steps=256)
    from train.envs import make_vec_env

    env = make_vec_env(cfg, ["heuristic"], [1.0])
    model = ppo.build_model(cfg, env)
    ppo.init_policy_from(model, cfg.init_from)
    want, _ = _params(source)
    got = model.policy.state_dict()
    assert _same(want, got)
    bigger = load_config(SMOKE, ppo={"net_arch": [64, 64]})
    other = ppo.build_model(bigger, env)
    with pytest.raises(ValueError, match="does not match ppo.net_arch"):
        ppo.init_policy_from(other, source / "final_model.zip")
    with pytest.raises(FileNotFoundError, match="init_from"):
        ppo.init_policy_from(other, tmp_path / "missing.zip")
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


def test_resume_without_checkpoint_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="config.yaml"):
        ppo.main(["--resume", "--out", str(tmp_path / "nothing")])


def test_wilson_interval_of_the_periodic_evaluation() -> None:
    from train.tournament import wilson_interval

    lo, hi = wilson_interval(60, 100)
    assert lo < 0.6 < hi and 0.49 < lo < 0.51 and 0.69 < hi < 0.70


@pytest.mark.parametrize("kind", ["zone", "ascending"])
def test_shaping_adds_the_potential_gain(kind: str) -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from train.shaping import RackShaping, ascending_length, zone_potential

    assert ascending_length(np.array([5, 9, 13, 24, 25, 32, 4, 35, 42, 55])) == 9
    assert ascending_length(np.array([3, 2, 1])) == 1
    home = np.array([1, 5, 9, 13, 17, 21, 25, 29, 33, 37]) / 40
    assert zone_potential(home, 40) == 1.0
    assert zone_potential(home[::-1], 40) < 0.6

    def phi(o):
        return zone_potential(o[:10], 40) if kind == "zone" else ascending_length(o[:10]) / 10

    def make():
        return RackoGymEnv(num_players=2, opponents=["heuristic"], seat=0)

    plain = DummyVecEnv([make])
    shaped = RackShaping(DummyVecEnv([make]), coef=2.0, kind=kind, num_players=2)
    plain.seed(4)
    shaped.seed(4)
    obs_p, obs_s = plain.reset(), shaped.reset()
    rng = np.random.default_rng(0)
    gains = 0
    for _ in range(300):
        mask = plain.env_method("action_masks")[0]
        a = np.array([rng.choice(np.flatnonzero(mask))])
        prev = obs_p[0, :10].copy()
        obs_p, r_p, d_p, info_p = plain.step(a)
        obs_s, r_s, d_s, _ = shaped.step(a)
        after = info_p[0]["terminal_observation"] if d_p[0] else obs_p[0]
        gain = phi(after) - phi(prev)
        gains += gain != 0
        assert r_s[0] == pytest.approx(r_p[0] + 2.0 * gain, abs=1e-6)
    assert gains > 0


@pytest.mark.slow
def test_batched_vec_env_switch_trains(tmp_path: Path) -> None:
    cfg = yaml.safe_load(SMOKE.read_text())
    cfg.update(vec_env="batched", n_envs=16, total_steps=2048, final_eval={"rounds": 0})
    cfg["ppo"]["n_steps"] = 64
    path = tmp_path / "batched.yaml"
    path.write_text(yaml.safe_dump(cfg))
    full, split = tmp_path / "full", tmp_path / "split"
    ppo.main(["--config", str(path), "--out", str(full), "--no-progress"])
    assert (full / "bot.onnx").is_file()
    ppo.main(["--config", str(path), "--out", str(split), "--total-steps", "1024", "--no-progress"])
    ppo.main(["--resume", "--out", str(split), "--no-progress", "--total-steps", "2048"])
    assert _same(_params(full)[0], _params(split)[0])


def test_plot_curve(tmp_path: Path) -> None:
    from train.plot_curve import plot

    run = tmp_path / "run"
    run.mkdir()
    (run / "eval_history.json").write_text(
        json.dumps([{"timesteps": 10, "heuristic": 0.2}, {"timesteps": 20, "heuristic": 0.4}])
    )
    plot(run, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 1000
    with pytest.raises(FileNotFoundError, match="no eval_history"):
        plot(tmp_path, tmp_path / "d.png")


def test_behaviour_cloning_learns_the_teacher() -> None:
    import torch
    from sb3_contrib import MaskablePPO

    from train.pretrain import agreement, behaviour_clone, collect_teacher_data

    obs, masks, actions = collect_teacher_data("heuristic", 2, {}, 4000, seed=0)
    assert obs.shape == (4000, 177) and masks[np.arange(4000), actions].all()
    torch.manual_seed(0)
    env = RackoGymEnv(num_players=2, opponents=["random"])
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [64, 64]}, seed=0)
    before = agreement(model, obs, masks, actions)
    losses = behaviour_clone(model, obs, masks, actions, epochs=15, batch_size=128, seed=0)
    assert losses[-1] < losses[0]
    assert agreement(model, obs, masks, actions) > max(before + 0.2, 0.65)


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_checkpoints_and_exports(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "train/ppo.py", "--config", str(SMOKE), "--out", str(out)]
        + ["--total-steps", "100000000", "--no-progress"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.time() + 120
    while not (out / "checkpoints").is_dir() and time.time() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, output
    assert "stop requested" in output
    assert (out / "bot.onnx").is_file() and (out / "final_model.zip").is_file()
    _, model = _params(out)
    assert 0 < model.num_timesteps < 100_000_000
