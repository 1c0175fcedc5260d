"""ONNX export: agreement with the SB3 policy, the manifest checks, and torch-free loading."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from sb3_contrib import MaskablePPO

import agents
from agents.onnx_bot import BotFileError, load_onnx_bot
from racko_env.gym_env import RackoGymEnv
from racko_env.observation import OBS_VERSION
from train.common.onnx_export import (
    build_onnx,
    make_manifest,
    onnx_actions,
    sample_observations,
    verify_export,
)
from train.sb3.export import export_model, sb3_actions
from train.sb3.model import snapshot_from_model

REPO = Path(__file__).resolve().parents[2]

# One worker builds the module fixtures (--dist loadgroup), not each worker its own copy.
pytestmark = pytest.mark.xdist_group("test_export")


@pytest.fixture(scope="module")
def model() -> MaskablePPO:
    torch.manual_seed(0)
    env = RackoGymEnv(num_players=2, opponents=["random"])
    m = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [32, 32]}, seed=0, device="cpu")
    with torch.no_grad():  # sharpen the random init so argmax ties cannot hide disagreements
        for p in m.policy.parameters():
            p.mul_(3.0)
    return m


@pytest.fixture(scope="module")
def exported(model, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bot")
    onnx_path, _ = export_model(model, out, 2, {}, evaluation={"note": "test"}, check=300)
    return onnx_path


def test_onnx_agrees_with_sb3_policy(model) -> None:
    obs, masks = sample_observations(2, {}, 400, seed=1)
    proto = build_onnx(snapshot_from_model(model))
    onnx_moves = onnx_actions(proto.SerializeToString(), obs, masks)
    assert np.array_equal(onnx_moves, sb3_actions(model, obs, masks))
    snapshot = snapshot_from_model(model)
    sb3, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert np.array_equal(snapshot.act_batch(obs, masks), sb3)


def test_masked_logits_match_the_policy_distribution(model) -> None:
    import onnxruntime as ort

    obs, masks = sample_observations(2, {}, 50, seed=2)
    proto = build_onnx(snapshot_from_model(model))
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    action, logits = sess.run(None, {"observation": obs, "action_mask": masks})
    assert action.dtype == np.int64 and action.shape == (50,)
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs), action_masks=masks)
        ref = dist.distribution.logits.numpy()
    # softmax over the legal actions is what both define
    legal_onnx = np.where(masks, logits - logits.max(1, keepdims=True), -np.inf)
    legal_ref = np.where(masks, ref - ref.max(1, keepdims=True), -np.inf)
    np.testing.assert_allclose(np.exp(legal_onnx), np.exp(legal_ref), atol=1e-5)
    assert np.all(logits[~masks] <= -1e7)


def test_manifest_contents(exported) -> None:
    manifest = json.loads(exported.with_suffix(".json").read_text())
    assert manifest["format"] == "racko-bot" and manifest["format_version"] == 1
    assert manifest["observation_version"] == OBS_VERSION and manifest["num_players"] == 2
    assert manifest["actions"]["10"] == "draw_pile" and len(manifest["actions"]) == 14
    assert manifest["rules"]["turn_limit"] == 400
    assert manifest["evaluation"] == {"note": "test"}
    assert manifest["export_check"] == {"observations": 300, "disagreements": 0}


def test_loaded_bot_plays_legal_actions(exported) -> None:
    bot = agents.load(str(exported), num_players=2)
    env = RackoGymEnv(num_players=2, opponents=[bot])
    obs, _ = env.reset(seed=0)
    for _ in range(500):
        mask = env.action_masks()
        a = bot.act({"observation": obs, "action_mask": mask.astype(np.int8)})
        assert mask[a]
        obs, _, term, trunc, info = env.step(a)
        assert "illegal_action" not in info
        if term or trunc:
            obs, _ = env.reset()


def test_loading_needs_neither_torch_nor_sb3(exported) -> None:
    code = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        import agents
        from racko_env import racko_v1
        bot = agents.load({str(exported)!r}, num_players=2)
        env = racko_v1.raw_env(num_players=2)
        env.reset(seed=1)
        for agent in env.agent_iter():
            obs, r, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            a = bot.act(obs)
            assert obs["action_mask"][a]
            env.step(a)
        banned = [m for m in ("torch", "stable_baselines3", "sb3_contrib") if m in sys.modules]
        assert not banned, banned
        print("ok")
        """
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"


def _copy(exported: Path, tmp_path: Path, edit=None, onnx_bytes: bytes | None = None) -> Path:
    dest = tmp_path / "b.onnx"
    dest.write_bytes(onnx_bytes if onnx_bytes is not None else exported.read_bytes())
    manifest = json.loads(exported.with_suffix(".json").read_text())
    if edit:
        edit(manifest)
    dest.with_suffix(".json").write_text(json.dumps(manifest))
    return dest


def test_refuses_wrong_player_count(exported) -> None:
    with pytest.raises(BotFileError, match="trained for 2 players, asked to play with 3"):
        load_onnx_bot(exported, num_players=3)


def test_refuses_wrong_rules_options(exported) -> None:
    with pytest.raises(BotFileError, match="bonus: trained False, asked True"):
        load_onnx_bot(exported, num_players=2, bonus=True)


def test_refuses_wrong_observation_version(exported, tmp_path) -> None:
    path = _copy(exported, tmp_path, lambda m: m.update(observation_version=99))
    with pytest.raises(BotFileError, match="observation layout version 99"):
        load_onnx_bot(path, num_players=2)


def test_refuses_unknown_format_version(exported, tmp_path) -> None:
    path = _copy(exported, tmp_path, lambda m: m.update(format_version=7))
    with pytest.raises(BotFileError, match="format version 7"):
        load_onnx_bot(path, num_players=2)


def test_refuses_corrupt_files(exported, tmp_path) -> None:
    path = _copy(exported, tmp_path, onnx_bytes=b"not an onnx file")
    with pytest.raises(BotFileError, match="onnx_sha256"):
        load_onnx_bot(path, num_players=2)
    garbage_sha = hashlib.sha256(b"garbage").hexdigest()
    path = _copy(exported, tmp_path, lambda m: m.update(onnx_sha256=garbage_sha), b"garbage")
    with pytest.raises(BotFileError, match="not an ONNX file"):  # refused before onnxruntime
        load_onnx_bot(path, num_players=2)
    path.with_suffix(".json").write_text("{not json")
    with pytest.raises(BotFileError, match="not valid JSON"):
        load_onnx_bot(path, num_players=2)


def test_missing_files(exported, tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.onnx"):
        load_onnx_bot(tmp_path / "nope.onnx")
    lonely = tmp_path / "lonely.onnx"
    lonely.write_bytes(exported.read_bytes())
    with pytest.raises(FileNotFoundError, match="manifest"):
        load_onnx_bot(lonely)


def test_make_manifest_strips_player_count() -> None:
    m = make_manifest(3, {"num_players": 3, "bonus": True}, b"x")
    assert m["num_players"] == 3 and m["rules"]["bonus"] is True
    assert "num_players" not in m["rules"] and m["rules"]["empty_pile"] == "shuffle"


@pytest.mark.parametrize(
    "n", [2, pytest.param(3, marks=pytest.mark.slow), pytest.param(4, marks=pytest.mark.slow)]
)
def test_shipped_pretrained_bots_load_and_play(n: int, assert_plays_legally) -> None:
    path = REPO / "agents" / "pretrained" / f"racko_{n}p.onnx"
    if not path.is_file():
        pytest.skip(f"{path.name} is not shipped")
    manifest = json.loads(path.with_suffix(".json").read_text())
    assert manifest["num_players"] == n

    assert (
        manifest["observation_version"] == OBS_VERSION
    )  # every shipped bot reads every public fact
    assert manifest["training"]["seed"] == manifest["training"]["config"]["seed"]
    evaluation = manifest["evaluation"]
    assert evaluation.get("final_eval")
    config = yaml.safe_load(path.with_suffix(".yaml").read_text())
    assert config["seed"] == manifest["training"]["seed"]
    assert config["num_players"] == n
    bot = agents.load(str(path), num_players=n)
    assert_plays_legally(bot, n, ["heuristic"], steps=200, seed=n)


def test_export_refuses_a_graph_that_disagrees_with_its_policy(model):
    onnx_bytes = build_onnx(snapshot_from_model(model, "t")).SerializeToString()
    rules = {"turn_limit": 400}
    verify_export(onnx_bytes, lambda o, m: onnx_actions(onnx_bytes, o, m), 2, rules, 40, "policy")

    def off_by_one_slot(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return (onnx_actions(onnx_bytes, obs, masks) + 1) % 14

    with pytest.raises(RuntimeError, match=r"disagrees with the SB3 policy on 40/40 obs"):
        verify_export(onnx_bytes, off_by_one_slot, 2, rules, 40, "SB3 policy")


SOLITAIRE_K4 = {"rack_size": 4, "deck_size": 10}


@pytest.fixture(scope="module")
def solitaire_bot(tmp_path_factory) -> Path:
    """A structured policy of solitaire with racks of 4 and the cards 1-10, exported."""
    from train.common.onnx_export import export_module
    from train.network.structured import PolicyGraph, StructuredNetwork

    torch.manual_seed(0)
    network = StructuredNetwork(10, (16,), (16,), num_players=1, rack_size=4).eval()
    out = tmp_path_factory.mktemp("solitaire")
    return export_module(PolicyGraph(network), out, 1, SOLITAIRE_K4, check=100)[0]


def test_a_solitaire_k4_bot_plays_with_numpy_and_onnxruntime_only(solitaire_bot) -> None:
    manifest = json.loads(solitaire_bot.with_suffix(".json").read_text())
    assert manifest["num_players"] == 1 and manifest["observation_size"] == 35
    assert manifest["rules"]["rack_size"] == 4 and manifest["rules"]["deck_size"] == 10
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["torch"] = None  # importing torch would fail
        import agents
        from racko_env import racko_v1
        bot = agents.load({str(solitaire_bot)!r}, 1, rack_size=4, deck_size=10)
        env = racko_v1.raw_env(num_players=1, rack_size=4, deck_size=10)
        moves = 0
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
                moves += 1
        banned = [m for m in ("stable_baselines3", "sb3_contrib", "numba") if m in sys.modules]
        assert not banned, banned
        print("ok", moves > 0)
        """
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok True"


@pytest.mark.parametrize(
    ("players", "options", "match"),
    [
        (1, {"rack_size": 4, "deck_size": 11}, r"deck_size: trained 10, asked 11\)$"),
        (1, {"rack_size": 5, "deck_size": 10}, r"rack_size: trained 4, asked 5\)$"),
        (1, {}, r"rack_size: trained 4, asked 10, deck_size: trained 10, asked 0\)$"),
        (2, SOLITAIRE_K4, r"trained for 1 players, asked to play with 2$"),
    ],
)
def test_a_bot_loaded_for_other_rules_is_one_line(solitaire_bot, players, options, match) -> None:
    with pytest.raises(BotFileError, match=match) as err:
        agents.load(str(solitaire_bot), players, **options)
    assert "\n" not in str(err.value)
