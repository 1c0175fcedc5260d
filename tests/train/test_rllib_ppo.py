"""The RLlib trainer (train/rllib_ppo.py): config, env wrapper, masked module, the smoke run
(train, checkpoint, Ctrl-C, resume, export), a two-node Ray cluster, and bad input."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("ray.rllib", reason="the cluster extra (ray[rllib]) is not installed")

import agents  # noqa: E402
from train.common.runs import prepare_run  # noqa: E402
from train.rllib.run import STATE_FILE  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke_rllib.yaml"  # the vector path
SMOKE_MULTI = REPO / "configs" / "smoke_rllib_multiagent.yaml"
TRAIN = [sys.executable, str(REPO / "train" / "rllib_ppo.py")]


def _env(home: Path) -> dict[str, str]:
    """A child environment whose $HOME is an empty folder the test can inspect afterwards."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(HOME=str(home), PYTHONPATH=str(REPO), RAY_USAGE_STATS_ENABLED="0")
    env.pop("XDG_CACHE_HOME", None)
    return env


def _run(args: list[str], env: dict[str, str], timeout: float = 400) -> subprocess.CompletedProcess:
    return subprocess.run(
        TRAIN + args, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


# --------------------------------------------------------------------------- config


# --------------------------------------------------------------------------- env wrapper


# --------------------------------------------------------------------------- module + export


# --------------------------------------------------------------------------- smoke run


def _bot_plays_legally(bot_path: Path, assert_plays_legally) -> None:
    bot = agents.load(str(bot_path), num_players=2)
    assert_plays_legally(bot, 2, ["heuristic"], 300, seed=1)


def _module_weights(ckpt: Path, module: str) -> dict[str, np.ndarray]:
    """A module's weights in a checkpoint this test's own run just wrote (RLlib stores them as
    pickled numpy arrays)."""
    import pickle

    path = ckpt / "learner_group" / "learner" / "rl_module" / module / "module_state.pkl"
    with open(path, "rb") as f:
        return pickle.load(f)


def _league_equal_to_main(ckpt: Path) -> list[bool]:
    """Multi-agent path: per league slot, does its checkpointed policy equal ``main``'s?"""
    main = _module_weights(ckpt, "main")
    assert "heads.other_logits.weight" in main  # the structured network
    return [
        all(np.array_equal(v, _module_weights(ckpt, f"league_{s}")[k]) for k, v in main.items())
        for s in range(2)
    ]


def _snapshots_equal_to_learner(ckpt: Path) -> list[bool]:
    """Vector path: per snapshot in the checkpoint, does it hold the learner's weights?"""
    import train.network.frozen  # noqa: F401  (registers the snapshots' kind, "structured")
    from train.common.snapshot import SnapshotPool

    learner = _module_weights(ckpt, "default_policy")
    assert "heads.other_logits.weight" in learner  # the structured network
    pool = SnapshotPool(2, 0.5)
    pool.load(ckpt / "snapshots")
    out = []
    for snap in pool.snapshots:
        state = {k: v.detach().numpy() for k, v in snap.graph.policy.state_dict().items()}
        out.append(
            all(
                np.array_equal(v, state[k.replace("heads.", "mlp_extractor.", 1)])
                for k, v in learner.items()
                if k.startswith("heads.")
            )
        )
    return out


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray cluster at a time (pytest -n: --dist loadgroup)
def test_smoke_trains_checkpoints_stops_resumes_exports(
    tmp_path: Path, assert_plays_legally
) -> None:
    home, out = tmp_path / "home", tmp_path / "run"
    env = _env(home)
    first = _run(["--config", str(SMOKE), "--out", str(out)], env)
    assert first.returncode == 0, first.stderr[-3000:]
    assert (out / "checkpoints" / "iter_000001" / "trainer.json").is_file()
    manifest = json.loads((out / "bot.json").read_text())
    assert manifest["export_check"] == {"observations": 300, "disagreements": 0}
    assert manifest["training"]["iterations"] == 1
    assert "heuristic" in manifest["evaluation"]["final_eval"]
    assert json.loads((out / "eval_history.json").read_text())[0]["iteration"] == 1
    assert list((out / "tb").iterdir())
    assert _snapshots_equal_to_learner(out / "checkpoints" / "iter_000001") == [True]
    _bot_plays_legally(out / "bot.onnx", assert_plays_legally)

    # resume with a long budget, Ctrl-C after the first new iteration: it checkpoints + exports
    proc = subprocess.Popen(
        TRAIN + ["--resume", "--out", str(out), "--iterations", "1000"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # not the caller's SIG_IGN
    )
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if "iteration 2/1000" in line:
            proc.send_signal(signal.SIGINT)
            break
    rest, _ = proc.communicate(timeout=300)
    log = "".join(lines) + rest
    assert proc.returncode == 0, log[-3000:]
    assert "resumed from" in log
    latest = sorted((out / "checkpoints").glob("iter_*"))[-1]
    state = json.loads((latest / "trainer.json").read_text())
    assert 2 <= state["iteration"] < 1000
    assert state["env_steps"] >= 2 * 256
    manifest = json.loads((out / "bot.json").read_text())
    assert manifest["training"]["iterations"] == state["iteration"]
    _bot_plays_legally(out / "bot.onnx", assert_plays_legally)
    assert not list(home.iterdir()), f"written to $HOME: {list(home.rglob('*'))}"


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray cluster at a time (pytest -n: --dist loadgroup)
def test_multi_agent_smoke_trains_and_exports(tmp_path: Path, assert_plays_legally) -> None:
    """The multi-agent path (env: multi_agent: self-play in every seat, league RLModules)."""
    home, out = tmp_path / "home", tmp_path / "run"
    result = _run(["--config", str(SMOKE_MULTI), "--out", str(out)], _env(home))
    assert result.returncode == 0, result.stderr[-3000:]
    assert _league_equal_to_main(out / "checkpoints" / "iter_000001") == [True, False]
    _bot_plays_legally(out / "bot.onnx", assert_plays_legally)
    assert not list(home.iterdir()), f"written to $HOME: {list(home.rglob('*'))}"


# --------------------------------------------------------------------------- cluster

CLUSTER_HELPER = textwrap.dedent(
    """
    import json, sys
    from ray.cluster_utils import Cluster
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "temp_dir": sys.argv[1]},
    )
    worker = cluster.add_node(num_cpus=1, resources={"rollout_node": 1})
    cluster.wait_for_nodes()
    print(json.dumps({"address": cluster.address, "worker": worker.node_id,
                      "head": cluster.head_node.node_id}), flush=True)
    sys.stdin.read()  # until the test closes stdin
    cluster.shutdown()
    """
)


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray cluster at a time (pytest -n: --dist loadgroup)
def test_two_node_cluster_runs_env_runners_on_node_two(tmp_path: Path) -> None:
    """A real two-node Ray cluster on this machine: env runners need a resource only node two
    has, and report the node they ran on."""
    home = tmp_path / "home"
    env = _env(home)
    env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(16))
    ray_tmp = Path("/tmp") / f"rt{secrets.token_hex(3)}"  # short: Ray's socket paths
    helper = subprocess.Popen(
        [sys.executable, "-c", CLUSTER_HELPER, str(ray_tmp)],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert helper.stdout is not None
        info = json.loads(helper.stdout.readline())
        cfg = yaml.safe_load(SMOKE.read_text())
        cfg["resources"] = {**cfg["resources"], "env_runner_resources": {"rollout_node": 1}}
        cfg["eval"]["rounds"] = 0
        config = tmp_path / "cluster.yaml"
        config.write_text(yaml.safe_dump(cfg))
        out = tmp_path / "run"
        result = _run(
            ["--config", str(config), "--out", str(out), "--address", info["address"]], env
        )
        assert result.returncode == 0, result.stderr[-3000:]
        placement = json.loads((out / "cluster.json").read_text())
        assert placement["nodes"] == 2
        assert placement["env_runner_nodes"] == [info["worker"]]
        assert placement["driver_node"] != info["worker"]
        assert (out / "bot.onnx").is_file()
    finally:
        if helper.stdin:
            helper.stdin.close()
        helper.wait(timeout=120)
        import shutil

        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert not list(home.iterdir()), f"written to $HOME: {list(home.rglob('*'))}"


# --------------------------------------------------------------------------- bad input


def _one_line_error(result: subprocess.CompletedProcess, *needles: str) -> None:
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("rllib_ppo: error:")
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_unknown_key_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_players: 2\nlearning_rate: 0.1\n")
    _one_line_error(
        _run(["--config", str(bad)], _env(tmp_path / "h")), "learning_rate: unknown key"
    )


@pytest.mark.slow
def test_resume_without_checkpoint_is_one_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    env = _env(tmp_path / "h")
    _one_line_error(_run(["--resume", "--out", str(run)], env), "--resume", "config.yaml")
    run.mkdir()
    (run / "config.yaml").write_text(SMOKE.read_text())
    _one_line_error(
        _run(["--resume", "--out", str(run)], env), "--resume:", "no complete checkpoint"
    )


@pytest.mark.slow
def test_unreachable_address_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = _run(  # a hang is caught by _run's timeout, not by a measured time
        ["--config", str(SMOKE), "--out", str(tmp_path / "r"), "--address", f"127.0.0.1:{port}"],
        _env(tmp_path / "h"),
    )
    _one_line_error(result, f"cannot reach a Ray cluster at 127.0.0.1:{port}")


def test_resume_refuses_another_config_as_the_other_trainers_do(tmp_path: Path, capsys) -> None:
    """The run-folder contract (train/common/runs.py): only ``iterations`` may change."""
    from train.rllib import run as rllib_ppo

    run = tmp_path / "run"
    (run / "checkpoints" / "iter_000001").mkdir(parents=True)
    (run / "checkpoints" / "iter_000001" / STATE_FILE).write_text("{}")
    (run / "config.yaml").write_text(SMOKE.read_text())
    other = tmp_path / "other.yaml"
    other.write_text(SMOKE.read_text().replace("seed: 0", "seed: 5"))
    assert rllib_ppo.main(["--resume", "--out", str(run), "--config", str(other)]) == 2
    err = capsys.readouterr().err
    assert "differs from the run's" in err and "seed" in err and len(err.splitlines()) == 1
    longer = tmp_path / "longer.yaml"
    longer.write_text(SMOKE.read_text().replace("\niterations: 1\n", "\niterations: 3\n"))
    prepare_run(rllib_ppo.RLLIB_RUN, str(longer), str(run), True)  # the length may differ
    cfg, run_dir = prepare_run(rllib_ppo.RLLIB_RUN, str(SMOKE), str(run), True, iterations=3)
    assert cfg.iterations == 3 and run_dir == run  # more iterations continue the same run
    assert yaml.safe_load((run / "config.yaml").read_text())["iterations"] == 3


def test_a_new_run_records_its_kind_and_refuses_a_folder_holding_a_run(tmp_path: Path) -> None:
    from train.common.files import RunFolderError
    from train.rllib import run as rllib_ppo

    cfg, run = prepare_run(rllib_ppo.RLLIB_RUN, str(SMOKE), str(tmp_path / "run"), False)
    assert yaml.safe_load((run / "config.yaml").read_text())["kind"] == "rllib" == cfg.kind
    (run / "checkpoints" / "iter_000001").mkdir(parents=True)
    (run / "checkpoints" / "iter_000001" / STATE_FILE).write_text("{}")
    with pytest.raises(RunFolderError, match="already holds a run"):
        prepare_run(rllib_ppo.RLLIB_RUN, str(SMOKE), str(run), False)


def test_env_steps_follow_rllibs_lifetime_counter() -> None:
    """Iterations whose results lack the counter count 0 and the next one catches up; after a
    restore (no baseline) the per-iteration count stands in."""
    from train.rllib.run import _env_steps

    def result(lifetime: float | None, sampled: float) -> dict:
        er = {"num_env_steps_sampled": sampled}
        if lifetime is not None:
            er["num_env_steps_sampled_lifetime"] = lifetime
        return {"env_runners": er}

    assert _env_steps(result(None, float("nan")), 0.0) == (0, 0.0)
    assert _env_steps(result(33000.0, 16500), 0.0) == (33000, 33000.0)
    assert _env_steps(result(49000.0, 16000), 33000.0) == (16000, 49000.0)
    assert _env_steps(result(70000.0, 16400), None) == (16400, 70000.0)
    assert _env_steps(result(None, 16400), None) == (16400, None)
