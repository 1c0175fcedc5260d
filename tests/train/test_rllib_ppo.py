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
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("ray.rllib", reason="the cluster extra (ray[rllib]) is not installed")

import agents  # noqa: E402
from racko_env import racko_v0  # noqa: E402
from train.rllib.config import ConfigError, load_rllib_config  # noqa: E402
from train.rllib.env import RackoMultiAgentEnv, module_of, policy_mapping_fn  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke_rllib.yaml"
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


@pytest.mark.parametrize("name", ["smoke_rllib", "2p_rllib"])
def test_shipped_configs_validate(name: str) -> None:
    cfg = load_rllib_config(REPO / "configs" / f"{name}.yaml")
    assert cfg.num_players == 2


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"bogus": 1}, "bogus: unknown key"),
        ({"ppo": {"lr": -1}}, "ppo.lr:"),
        ({"ppo": {"minibatch_size": 512, "train_batch_size": 256}}, "minibatch_size"),
        ({"resources": {"env_runners": -1}}, "resources.env_runners:"),
        ({"resources": {"env_runner_resources": {"x": 0}}}, "env_runner_resources"),
        ({"opponents": {"grandmaster": 1.0}}, "grandmaster"),
        ({"opponents": {"self": 0.0}}, "positive sum"),
        ({"model": {"encoder": "nocolon"}}, "model.encoder:"),
        ({"model": {"activation": "gelu"}}, "model.activation:"),
        ({"eval": {"opponents": ["self"]}}, "eval"),
        ({"rules": {"empty_pile": "burn"}}, "rules.empty_pile:"),
    ],
)
def test_bad_configs_name_the_key(tmp_path: Path, data: dict, key: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_rllib_config(path)
    assert key in str(err.value)
    assert "bad.yaml" in str(err.value)


# --------------------------------------------------------------------------- env wrapper


def _heuristic_action(bot: agents.Bot, obs: dict) -> int:
    return bot.act({"observation": obs["observation"], "action_mask": obs["action_mask"] > 0})


@pytest.mark.parametrize("kind", ["self", "league"])
def test_every_seat_reward_reaches_its_module(kind: str) -> None:
    """A scripted episode through the wrapper, recorded the way RLlib's env runner records it:
    each module's return is the reward the AEC env gave the seat it played, the loser's -1 too."""
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

    env = RackoMultiAgentEnv({"num_players": 2, "opponents": {kind: 1.0}, "league_size": 3})
    bot = agents.load("heuristic", 2)
    obs, infos = env.reset(seed=5)
    episode = MultiAgentEpisode(agent_to_module_mapping_fn=policy_mapping_fn)
    episode.add_env_reset(observations=obs, infos=infos)
    actions_taken, seats = [], list(env.seat_agent)
    done = False
    while not done:
        (aid,) = obs
        action = _heuristic_action(bot, obs[aid])
        actions_taken.append(action)
        obs, rew, term, trunc, infos = env.step({aid: action})
        episode.add_env_step(obs, {aid: action}, rew, infos, terminateds=term, truncateds=trunc)
        done = term["__all__"] or trunc["__all__"]
    # replay the same deal and moves in the bare PettingZoo env: its rewards per seat
    aec = racko_v0.env(num_players=2)
    aec.reset(seed=env.deal_seed)
    final = {a: 0.0 for a in aec.possible_agents}
    for action in actions_taken:
        aec.step(action)
        for a in aec.possible_agents:
            final[a] += aec.rewards[a]
    assert sorted(final.values()) == [-1.0, 1.0]
    modules = set()
    for seat, aid in enumerate(seats):
        module = episode.module_for(aid)
        modules.add(module)
        assert module == module_of(aid)
        assert episode.agent_episodes[aid].get_return() == final[f"player_{seat}"]
    assert modules == (
        {"main"} if kind == "self" else {"main", module_of(seats[1 - seats.index("main@0")])}
    )


def test_bot_seats_play_inside_the_env() -> None:
    env = RackoMultiAgentEnv({"num_players": 3, "opponents": {"heuristic": 1.0}})
    obs, _ = env.reset(seed=1)
    steps, done = 0, False
    while not done:
        assert list(obs) == ["main@0"]  # only the learner is ever asked
        mask = obs["main@0"]["action_mask"]
        obs, rew, term, trunc, _ = env.step({"main@0": int(np.flatnonzero(mask)[0])})
        steps += 1
        done = term["__all__"] or trunc["__all__"]
    assert set(rew) == {"main@0"}  # the final reward, to the learner only
    assert rew["main@0"] in (1.0, -0.5, 0.25, 0.0)  # 3 players: win, loss, two-way tie, all tie
    assert env.seat_agent.count(None) == 2


def test_seating_is_reproducible() -> None:
    """Same seed and worker: the same seatings; another worker index: another sequence."""

    def seatings(worker: int) -> list[tuple]:
        cfg = type("Ctx", (dict,), {"worker_index": worker})(
            {"num_players": 3, "opponents": {"self": 1, "league": 1, "expert": 1}, "league_size": 4}
        )
        env = RackoMultiAgentEnv(cfg)
        out = []
        for i in range(12):
            env.reset(seed=7 if i == 0 else None)
            out.append((env.kind, tuple(env.seat_agent), env.aec.unwrapped.rack("player_0")))
        return out

    assert seatings(1) == seatings(1)
    assert seatings(1) != seatings(2)
    kinds = {s[0] for s in seatings(1)}
    assert len(kinds) > 1


# --------------------------------------------------------------------------- module + export


def test_module_masks_and_export_matches(tmp_path: Path) -> None:
    import gymnasium as gym
    import torch

    from racko_env.actions import NUM_ACTIONS
    from train.export import onnx_actions, sample_observations
    from train.rllib.env import observation_space
    from train.rllib.module import ExportPolicy, MaskedActorCritic, module_actions

    torch.manual_seed(0)
    module = MaskedActorCritic(
        observation_space=observation_space(),
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        model_config={"encoder": "mlp", "hidden": [16], "activation": "relu"},
    )
    assert not module.structured
    obs, masks = sample_observations(2, {}, 300, seed=3)
    acts = module_actions(module, obs, masks.astype(np.float32))
    assert masks[np.arange(len(acts)), acts].all()  # never an illegal action
    with torch.no_grad():
        exported = ExportPolicy(module)(torch.as_tensor(obs), torch.as_tensor(masks.astype(bool)))[
            0
        ]
    np.testing.assert_array_equal(exported.numpy(), acts)
    from train.rllib_ppo import export_bot

    cfg = load_rllib_config(SMOKE, model={"encoder": "mlp", "hidden": [16], "activation": "relu"})
    onnx_path, _ = export_bot(module, tmp_path, cfg)
    np.testing.assert_array_equal(
        onnx_actions(onnx_path.read_bytes(), obs, masks.astype(bool)), acts
    )


def _structured_pair(seed: int = 0):
    """An SB3 ``StructuredPolicy`` (random weights) and the structured RLModule with its weights."""
    import gymnasium as gym
    import torch
    from gymnasium import spaces

    from racko_env.actions import NUM_ACTIONS
    from racko_env.observation import OBS_SIZE
    from train.rllib.env import observation_space
    from train.rllib.module import MaskedActorCritic, load_sb3_state_dict
    from train.sb3.policy import StructuredPolicy

    torch.manual_seed(seed)
    policy = StructuredPolicy(
        spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
        spaces.Discrete(NUM_ACTIONS),
        lambda _: 0.0,
        num_cards=40,
        slot_hidden=[16, 8],
        trunk_hidden=[32, 16],
    ).eval()
    module = MaskedActorCritic(
        observation_space=observation_space(features=True),
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        model_config={
            "encoder": "structured",
            "hidden": [32, 16],
            "slot_hidden": [16, 8],
            "num_cards": 40,
        },
    )
    load_sb3_state_dict(module, policy.state_dict())
    return policy, module


def test_structured_module_equals_the_sb3_structured_policy() -> None:
    """Same weights, same observations: the RLModule (features from the env's kernel, or computed
    by itself) plays the SB3 structured policy's actions and values; its export graph too."""
    import torch
    from ray.rllib.core.columns import Columns

    from agents.features import rack_features
    from train.export import sample_observations
    from train.rllib.module import export_graph, module_actions, sb3_state_dict

    policy, module = _structured_pair()
    obs, masks = sample_observations(2, {}, 400, seed=4)
    with torch.no_grad():
        theirs, _ = policy.predict(obs, deterministic=True, action_masks=masks)
        their_values = policy.predict_values(torch.as_tensor(obs)).squeeze(-1).numpy()
    assert len(set(theirs.tolist())) > 2  # the weights are not degenerate
    # the module's own features (RackFeatures)
    np.testing.assert_array_equal(module_actions(module, obs, masks.astype(np.float32)), theirs)
    # the env's features (the compiled kernel, as RackoMultiAgentEnv hands them out)
    slots, glob = rack_features(obs, 40)
    batch = {
        Columns.OBS: {
            "observation": torch.as_tensor(obs),
            "action_mask": torch.as_tensor(masks.astype(np.float32)),
            "features": torch.as_tensor(np.concatenate([slots.reshape(len(obs), -1), glob], 1)),
        }
    }
    with torch.no_grad():
        ours = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].argmax(1).numpy()
        values = module.compute_values(batch).numpy()
        exported = export_graph(module)(torch.as_tensor(obs), torch.as_tensor(masks))[0].numpy()
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_allclose(values, their_values, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(exported, theirs)
    assert sb3_state_dict(module).keys() == policy.state_dict().keys()


def test_env_hands_out_the_kernel_features() -> None:
    from agents.features import rack_features

    env = RackoMultiAgentEnv({"num_players": 2, "opponents": {"heuristic": 1.0}, "features": True})
    obs, _ = env.reset(seed=3)
    for _ in range(5):
        (aid,) = obs
        o = obs[aid]
        slots, glob = rack_features(o["observation"][None], 40)
        np.testing.assert_array_equal(o["features"], np.concatenate([slots.reshape(-1), glob[0]]))
        assert env.observation_spaces[aid].contains(o)
        obs, *_ = env.step({aid: int(np.flatnonzero(o["action_mask"])[0])})
        if not obs:
            break


def test_structured_export_plays_with_numpy_and_onnxruntime_only(tmp_path: Path) -> None:
    from train.rllib_ppo import export_bot

    _, module = _structured_pair(seed=1)
    onnx_path, _ = export_bot(module, tmp_path, load_rllib_config(SMOKE))
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["torch"] = None  # importing it fails
        import agents
        from racko_env import racko_v0
        bot = agents.load({str(onnx_path)!r}, num_players=2)
        env = racko_v0.raw_env(num_players=2)
        for seed in range(3):
            env.reset(seed=seed)
            for agent in env.agent_iter():
                obs, r, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                a = bot.act(obs)
                assert obs["action_mask"][a]
                env.step(a)
        banned = [m for m in ("ray", "stable_baselines3", "sb3_contrib") if m in sys.modules]
        assert not banned, banned
        print("ok")
        """
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "ok"


def test_pluggable_encoder_is_used() -> None:
    import gymnasium as gym

    from racko_env.actions import NUM_ACTIONS
    from train.rllib.env import observation_space
    from train.rllib.module import MaskedActorCritic

    module = MaskedActorCritic(
        observation_space=observation_space(),
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        model_config={"encoder": "tests.train.test_rllib_ppo:tiny_encoder", "hidden": [8]},
    )
    assert type(module.pi_encoder).__name__ == "_Tiny"  # (pytest may import this file twice)
    assert module.pi_head.in_features == 5
    with pytest.raises(ValueError, match="model.encoder"):
        MaskedActorCritic(
            observation_space=observation_space(),
            action_space=gym.spaces.Discrete(NUM_ACTIONS),
            model_config={"encoder": "tests.train.test_rllib_ppo:nothing_here"},
        )


def _tiny():
    import torch

    class _Tiny(torch.nn.Module):
        def __init__(self, obs_size: int) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(obs_size, 5)
            self.out_features = 5

        def forward(self, x):
            return torch.relu(self.lin(x))

    return _Tiny


TinyEncoder = _tiny()


def tiny_encoder(obs_size: int, hidden: list[int], activation: str) -> TinyEncoder:
    return TinyEncoder(obs_size)


# --------------------------------------------------------------------------- smoke run


def _bot_plays_legally(bot_path: Path, assert_plays_legally) -> None:
    bot = agents.load(str(bot_path), num_players=2)
    assert_plays_legally(bot, 2, ["heuristic"], 300, seed=1)


def _league_equal_to_main(ckpt: Path) -> list[bool]:
    """Per league slot: does its checkpointed policy equal ``main``'s? (The checkpoint this test's
    own run just wrote; RLlib stores module weights as pickled numpy arrays.)"""
    import pickle

    root = ckpt / "learner_group" / "learner" / "rl_module"

    def weights(module: str) -> dict[str, np.ndarray]:
        with open(root / module / "module_state.pkl", "rb") as f:
            return pickle.load(f)

    main = weights("main")
    assert "heads.other_logits.weight" in main  # the structured network
    return [
        all(np.array_equal(v, weights(f"league_{s}")[k]) for k, v in main.items()) for s in range(2)
    ]


@pytest.mark.slow
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
    assert _league_equal_to_main(out / "checkpoints" / "iter_000001") == [True, False]
    _bot_plays_legally(out / "bot.onnx", assert_plays_legally)

    # resume with a long budget, Ctrl-C after the first new iteration: it checkpoints + exports
    proc = subprocess.Popen(
        TRAIN + ["--resume", "--out", str(out), "--iterations", "1000"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("iteration 2/1000"):
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


def test_resume_without_checkpoint_is_one_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    env = _env(tmp_path / "h")
    _one_line_error(_run(["--resume", "--out", str(run)], env), "--resume", "config.yaml")
    run.mkdir()
    (run / "config.yaml").write_text(SMOKE.read_text())
    _one_line_error(_run(["--resume", "--out", str(run)], env), "--resume: no checkpoint")


def test_unreachable_address_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    result = _run(
        ["--config", str(SMOKE), "--out", str(tmp_path / "r"), "--address", f"127.0.0.1:{port}"],
        _env(tmp_path / "h"),
    )
    _one_line_error(result, f"cannot reach a Ray cluster at 127.0.0.1:{port}")
    assert time.monotonic() - start < 120
