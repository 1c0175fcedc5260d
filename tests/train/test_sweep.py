"""train/rllib/sweep.py: the sweep config's checks (one line naming the key), the planned trials, the
table, and a 2-trial sweep of the smoke config on a local Ray instance, killed and re-run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("ray.tune", reason="the cluster extra (ray[tune]) is not installed")

from train.common.config import ConfigError, parse_config, read_yaml  # noqa: E402
from train.rllib.sweep import SweepConfig, plan_trials, render_table, summarize  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SWEEP = [sys.executable, "-m", "racko_apps.cli", "sweep"]  # racko sweep


def _plan(tmp_path: Path, **data) -> list[dict]:
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump({"config": "configs/smoke.yaml", "out": str(tmp_path), **data}))
    return plan_trials(parse_config(read_yaml(path), str(path), SweepConfig), path)


def test_shipped_sweep_config_plans_four_seeds_of_the_main_job() -> None:
    path = REPO / "configs" / "sweep_2p.yaml"
    trials = plan_trials(parse_config(read_yaml(path), str(path), SweepConfig), path)
    assert [t["seed"] for t in trials] == [0, 1, 2, 3]
    assert {t["config"]["ppo"]["policy"] for t in trials} == {"structured"}
    assert len({t["config"]["out"] for t in trials}) == 4


def test_grid_and_random_search_cross_with_the_seeds(tmp_path: Path) -> None:
    trials = _plan(
        tmp_path,
        seeds=[1, 2],
        grid={"ppo.learning_rate": [0.001, 0.0001], "opponents.heuristic": [0.5]},
        random={"samples": 2, "space": {"ppo.ent_coef": {"loguniform": [0.001, 0.1]}}},
    )
    assert len(trials) == 2 * 2 * 2
    assert {t["config"]["ppo"]["learning_rate"] for t in trials} == {0.001, 0.0001}
    assert len({t["config"]["ppo"]["ent_coef"] for t in trials}) == 2
    assert all(0.001 <= t["config"]["ppo"]["ent_coef"] <= 0.1 for t in trials)
    assert len({t["name"] for t in trials}) == 8
    # the same sweep plans the same trials (a re-run finds their folders)
    again = _plan(
        tmp_path,
        seeds=[1, 2],
        grid={"ppo.learning_rate": [0.001, 0.0001], "opponents.heuristic": [0.5]},
        random={"samples": 2, "space": {"ppo.ent_coef": {"loguniform": [0.001, 0.1]}}},
    )
    assert [t["name"] for t in again] == [t["name"] for t in trials]


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"grid": {"ppo.learnin_rate": [1e-3]}}, "ppo has no key 'learnin_rate'"),
        ({"grid": {"ppo": [1]}}, "is a section"),
        ({"grid": {"seed": [1, 2]}}, "set by the sweep itself"),
        ({"grid": {"ppo.learning_rate": [-1.0]}}, "ppo.learning_rate"),
        ({"random": {"samples": 1, "space": {"ppo.ent_coef": {"normal": [0, 1]}}}}, "normal"),
        ({"seeds": []}, "seeds"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_sweeps_are_one_line_naming_the_key(tmp_path: Path, data: dict, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        _plan(tmp_path, **data)
    assert needle in str(err.value)


def test_cli_error_is_one_line(tmp_path: Path, capsys) -> None:
    from train.rllib.sweep import main

    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump({"config": "configs/smoke.yaml", "grid": {"ppo.lr": [1]}}))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("sweep: error:") and "'lr'" in err[0], err


def test_table_has_intervals_mean_std_and_best() -> None:
    def rec(name: str, seed: int, rate: float) -> dict:
        fe = {"heuristic": {"win_rate": rate, "ci95": [rate - 0.1, rate + 0.1], "rounds": 10}}
        return {"name": name, "seed": seed, "params": {}, "status": "trained",
                "run_dir": name, "bot": f"{name}/bot.onnx", "final_eval": fe}  # fmt: skip

    records = [rec("a", 0, 0.5), rec("b", 1, 0.7)]
    summary = summarize(records)
    assert summary["best"] == "b"
    point = summary["points"][0]["win_rates"]["heuristic"]
    assert point["mean"] == pytest.approx(0.6)
    assert point["std"] == pytest.approx(0.1414, abs=1e-3)
    table = render_table(records, summary)
    assert "70.0% (60.0%-80.0%)" in table
    assert "60.0% ± 14.1%" in table
    assert "best bot: b/bot.onnx" in table


def _children_of(root: str) -> list[int]:
    """Pids of the processes whose command line names ``root`` (Ray's, started by the sweep)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if root in cmd and int(proc.name) != os.getpid():
                pids.append(int(proc.name))
    return pids


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray cluster at a time (pytest -n: --dist loadgroup)
def test_two_trial_sweep_finishes_and_a_killed_sweep_resumes() -> None:
    from train.sb3.checkpoint import CHECKPOINTS

    root = Path(tempfile.mkdtemp(prefix="sw", dir="/tmp"))  # short: Ray's socket paths
    try:
        home, out = root / "home", root / "s"
        home.mkdir()
        # the smoke config, long enough after its first checkpoint (1,024 steps) that the kill
        # below lands while the second trial is still training, however loaded the machine
        run_config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
        run_config["total_steps"] = 8192
        (root / "run.yaml").write_text(yaml.safe_dump(run_config))
        sweep = root / "sweep.yaml"
        sweep.write_text(
            yaml.safe_dump(
                {
                    "config": str(root / "run.yaml"),
                    "seeds": [0, 1],
                    "max_concurrent": 1,
                    "out": str(out),
                }  # fmt: skip
            )
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env.update(HOME=str(home), PYTHONPATH=str(REPO))
        env.pop("XDG_CACHE_HOME", None)
        first_log = (root / "first.log").open("w")
        proc = subprocess.Popen(
            [*SWEEP, "--config", str(sweep)],
            cwd=REPO,
            env=env,
            stdout=first_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        # kill it (SIGKILL, no clean-up) once one trial is finished and the other has a checkpoint
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            trials = sorted((out / "trials").glob("seed*"))
            done = [t for t in trials if (t / "bot.json").is_file()]
            begun = [t for t in trials if t not in done and CHECKPOINTS.latest(t) is not None]
            if done and begun:
                break
            time.sleep(0.2)
        first_log.close()
        log = (root / "first.log").read_text()[-3000:]
        assert proc.poll() is None, f"the sweep ended before it could be killed: {log}"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for pid in _children_of(str(out)):  # Ray's own processes of that session
            os.kill(pid, signal.SIGKILL)
        (finished,), (unfinished,) = done, begun
        finished_bot = (finished / "bot.onnx").stat().st_mtime_ns
        finished_log = (finished / "train.log").read_text()

        again = subprocess.run(
            [*SWEEP, "--config", str(sweep)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert again.returncode == 0, again.stderr[-3000:]
        assert (finished / "bot.onnx").stat().st_mtime_ns == finished_bot  # not trained again
        assert (finished / "train.log").read_text() == finished_log
        assert "resuming from" in (unfinished / "train.log").read_text()
        assert (unfinished / "bot.onnx").is_file()
        results = json.loads((out / "results.json").read_text())
        assert [r["status"] for r in results["trials"]] == ["finished", "finished"]
        assert all("heuristic" in r["final_eval"] for r in results["trials"])
        table = (out / "results.md").read_text()
        assert "vs heuristic (95% CI)" in table and "best bot:" in table
        assert table in again.stdout
        assert not list(home.iterdir()), f"written to $HOME: {list(home.rglob('*'))}"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow
def test_unreachable_address_is_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump({"config": "configs/smoke.yaml", "out": str(tmp_path / "o")}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(HOME=str(tmp_path / "home"), PYTHONPATH=str(REPO))
    res = subprocess.run(
        [*SWEEP, "--config", str(path), "--address", f"127.0.0.1:{port}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2, res.stderr[-2000:]
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and f"cannot reach a Ray cluster at 127.0.0.1:{port}" in lines[0], lines
