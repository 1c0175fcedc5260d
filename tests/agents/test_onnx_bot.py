"""Bot files are checked completely at load, and every action a graph chooses is checked at act().

The graphs here are built with ``onnx.helper``: tiny, and each wrong in exactly one way.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import agents
from agents.onnx_bot import INPUTS, OUTPUTS, BotFileError, load_onnx_bot
from racko_env import racko_v1
from racko_env.actions import DRAW_PILE, NUM_ACTIONS
from racko_env.observation import OBS_SIZE, OBS_SIZES, OBS_VERSION, view

ROOT = Path(__file__).resolve().parents[2]
_TYPES = {"float": TensorProto.FLOAT, "bool": TensorProto.BOOL, "int64": TensorProto.INT64}


def _graph(
    obs_size: int = OBS_SIZE,
    mask_type: str = "bool",
    obs_name: str = "observation",
    action_name: str = "action",
    action_type: str = "int64",
    batch: str | int = "batch",
    masked: bool = True,
    shift: int = 0,
    favourite: int = DRAW_PILE,
) -> bytes:
    """An ONNX policy whose logits prefer ``favourite`` (then lower ids); ``masked`` applies the
    mask, ``shift`` is added to the chosen action (to make it out of range)."""
    weights = np.zeros((obs_size, NUM_ACTIONS), dtype=np.float32)
    bias = -np.arange(NUM_ACTIONS, dtype=np.float32)
    bias[favourite] = 100.0
    nodes = [
        helper.make_node("MatMul", [obs_name, "W"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["logits"]),
    ]
    if mask_type == "bool":
        nodes.append(helper.make_node("Identity", ["action_mask"], ["m"]))
    else:
        nodes.append(helper.make_node("Cast", ["action_mask"], ["m"], to=TensorProto.BOOL))
    src = "logits"
    if masked:
        nodes.append(helper.make_node("Where", ["m", "logits", "neg"], ["masked_logits"]))
        src = "masked_logits"
    else:
        nodes.append(helper.make_node("Identity", ["logits"], ["masked_logits"]))
    nodes.append(helper.make_node("ArgMax", [src], ["am"], axis=1, keepdims=0))
    nodes.append(helper.make_node("Add", ["am", "shift"], ["a64"]))
    if action_type == "int64":
        nodes.append(helper.make_node("Identity", ["a64"], [action_name]))
    else:
        nodes.append(helper.make_node("Cast", ["a64"], [action_name], to=TensorProto.INT32))
    inits = [
        numpy_helper.from_array(weights, "W"),
        numpy_helper.from_array(bias, "b"),
        numpy_helper.from_array(np.array(-1e8, dtype=np.float32), "neg"),
        numpy_helper.from_array(np.array(shift, dtype=np.int64), "shift"),
    ]
    out_type = TensorProto.INT64 if action_type == "int64" else TensorProto.INT32
    graph = helper.make_graph(
        nodes,
        "policy",
        [
            helper.make_tensor_value_info(obs_name, TensorProto.FLOAT, [batch, obs_size]),
            helper.make_tensor_value_info("action_mask", _TYPES[mask_type], [batch, NUM_ACTIONS]),
        ],
        [
            helper.make_tensor_value_info(action_name, out_type, [batch]),
            helper.make_tensor_value_info("masked_logits", TensorProto.FLOAT, [batch, NUM_ACTIONS]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _manifest(data: bytes, **changes) -> dict:
    manifest = {
        "format": "racko-bot",
        "format_version": 1,
        "observation_version": OBS_VERSION,
        "observation_size": OBS_SIZE,
        "num_players": 2,
        "rules": {},
        "inputs": json.loads(json.dumps(INPUTS)),
        "outputs": json.loads(json.dumps(OUTPUTS)),
        "onnx_sha256": hashlib.sha256(data).hexdigest(),
    }
    manifest.update(changes)
    return {k: v for k, v in manifest.items() if v is not None}


def _write(tmp_path: Path, data: bytes, manifest: dict | None = None, name: str = "bot") -> Path:
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(data)
    path.with_suffix(".json").write_text(json.dumps(manifest or _manifest(data)))
    return path


def _draw_phase_observation() -> dict:
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    mask[[10, 11]] = 1
    return {"observation": np.zeros(OBS_SIZE, dtype=np.float32), "action_mask": mask}


def test_a_well_formed_tiny_graph_loads_and_plays(tmp_path: Path) -> None:
    bot = agents.load(_write(tmp_path, _graph()), num_players=2)
    assert bot.act(_draw_phase_observation()) == DRAW_PILE


@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_shipped_bots_pass_every_check(n: int) -> None:
    bot = load_onnx_bot(ROOT / "agents" / "pretrained" / f"racko_{n}p.onnx", num_players=n)
    assert bot.act(_draw_phase_observation()) in (10, 11)


@pytest.mark.parametrize(
    ("graph", "match"),
    [
        (
            dict(obs_size=OBS_SIZE - 1),
            rf"graph input 'observation' is tensor\(float\) \['batch', {OBS_SIZE - 1}\]",
        ),
        (dict(mask_type="float"), r"graph input 'action_mask' is tensor\(float\)"),
        (dict(obs_name="obs"), r"graph inputs are \['action_mask', 'obs'\]"),
        (dict(action_name="act"), r"the graph has no output 'action'"),
        (dict(action_type="int32"), r"graph output 'action' is tensor\(int32\)"),
        (dict(batch=1), rf"graph input 'observation' is tensor\(float\) \[1, {OBS_SIZE}\]"),
    ],
    ids=["obs size", "mask dtype", "input name", "output name", "action dtype", "fixed batch"],
)
def test_a_graph_that_does_not_match_its_manifest_is_refused_at_load(tmp_path, graph, match):
    with pytest.raises(BotFileError, match=match):
        load_onnx_bot(_write(tmp_path, _graph(**graph)), num_players=2)


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        (dict(onnx_sha256=None), "needs onnx_sha256"),
        (dict(onnx_sha256="abc"), "needs onnx_sha256"),
        (
            dict(observation_size=176),
            f"observation_size is 176, layout version {OBS_VERSION} has {OBS_SIZE}",
        ),
        (
            dict(observation_version=3),
            "trained on observation layout version 3, which this env does not know",
        ),
        (
            dict(inputs={**INPUTS, "observation": {"dtype": "float32", "shape": ["batch", 176]}}),
            "manifest's inputs",
        ),
        (dict(outputs={"masked_logits": OUTPUTS["masked_logits"]}), "manifest's outputs"),
        (
            dict(outputs={**OUTPUTS, "action": {"dtype": "int32", "shape": ["batch"]}}),
            "manifest's outputs",
        ),
    ],
    ids=[
        "no sha",
        "short sha",
        "obs size",
        "version",
        "inputs",
        "no action output",
        "action dtype",
    ],
)
def test_a_manifest_that_does_not_fit_is_refused_at_load(tmp_path, changes, match):
    data = _graph()
    with pytest.raises(BotFileError, match=match):
        load_onnx_bot(_write(tmp_path, data, _manifest(data, **changes)), num_players=2)


def _v1_bot_file(tmp_path: Path, **graph) -> Path:
    """A bot file of layout version 1 (177 inputs), as the bots shipped before version 2 were."""
    data = _graph(obs_size=OBS_SIZES[1], **graph)
    inputs = {**INPUTS, "observation": {"dtype": "float32", "shape": ["batch", OBS_SIZES[1]]}}
    manifest = _manifest(data, observation_version=1, observation_size=OBS_SIZES[1], inputs=inputs)
    return _write(tmp_path, data, manifest, name="v1bot")


def test_a_version_1_bot_plays_on_both_layouts_through_the_version_1_view(tmp_path) -> None:
    bot = load_onnx_bot(_v1_bot_file(tmp_path), num_players=2)
    assert bot.observation_version == 1
    obs = _draw_phase_observation()
    assert bot.act(obs) == DRAW_PILE
    assert bot.act({**obs, "observation": view(obs["observation"], 1)}) == DRAW_PILE


def test_a_version_2_bot_refuses_a_version_1_observation(tmp_path) -> None:
    bot = load_onnx_bot(_write(tmp_path, _graph()), num_players=2)
    obs = _draw_phase_observation()
    with pytest.raises(ValueError, match=rf"reads observation layout version 2 \({OBS_SIZE} "):
        bot.act({**obs, "observation": view(obs["observation"], 1)})


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_shipped_bots_read_every_public_fact_and_refuse_version_1_in_one_line(n: int) -> None:
    """The shipped bots read layout version 2 (racko_v1); the version-1 vector lacks the
    slot histories they read, so it is refused naming both layouts, never played on."""
    bot = load_onnx_bot(ROOT / "agents" / "pretrained" / f"racko_{n}p.onnx", num_players=n)
    assert bot.observation_version == OBS_VERSION == 2
    env = racko_v1.raw_env(num_players=n)
    decisions = 0
    for seed in range(2):
        env.reset(seed=seed)
        for _agent in env.agent_iter(max_iter=400):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = bot.act(obs)
            assert obs["action_mask"][action]
            env.step(action)
            decisions += 1
    assert decisions > 40
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    with pytest.raises(
        ValueError,
        match=r"reads observation layout version 2 \(270 entries\), got observations of 177",
    ):
        bot.act({**obs, "observation": view(obs["observation"], 1)})


def test_an_illegal_choice_is_an_error_at_act(tmp_path: Path) -> None:
    bot = load_onnx_bot(_write(tmp_path, _graph(masked=False, favourite=13)), num_players=2)
    with pytest.raises(
        BotFileError, match=r"bot: the graph chose action 13, not legal .*\[10, 11\]"
    ):
        bot.act(_draw_phase_observation())


def test_an_action_out_of_range_is_an_error_at_act(tmp_path: Path) -> None:
    bot = load_onnx_bot(_write(tmp_path, _graph(shift=20)), num_players=2)
    with pytest.raises(BotFileError, match=r"chose action 30, outside the action ids 0\.\.13"):
        bot.act(_draw_phase_observation())
    with pytest.raises(BotFileError, match="chose action 30"):
        obs = _draw_phase_observation()
        bot.act_batch(obs["observation"][None], obs["action_mask"][None].astype(bool))


@pytest.mark.slow
def test_without_onnxruntime_loading_a_bot_file_is_one_line_naming_the_extra() -> None:
    code = f"""
import sys
sys.modules["onnxruntime"] = None  # as if not installed
import agents
try:
    agents.load({str(ROOT / "agents/pretrained/racko_2p.onnx")!r}, num_players=2)
except ImportError as err:
    print(type(err).__name__, "|", err)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert "\n" not in line
    assert line.startswith("MissingExtraError | playing an exported .onnx bot needs onnxruntime")
    assert "pip install 'racko[bots]'" in line and 'pip install -e ".[bots]"' in line


# ----------------------------------------------------------------------------- external data


def _external(data: bytes, location: str, tensor: str = "b") -> bytes:
    """The graph with tensor ``tensor``'s bytes moved to external data at ``location``."""
    model = onnx.load_from_string(data)
    (init,) = [t for t in model.graph.initializer if t.name == tensor]
    size = len(init.raw_data)
    init.ClearField("raw_data")
    init.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", str(size))):
        entry = init.external_data.add()
        entry.key, entry.value = key, value
    return model.SerializeToString()


@pytest.fixture
def no_onnxruntime_load(monkeypatch):
    """onnxruntime must not be asked to load: a refusal comes first."""
    import onnxruntime

    def refuse(*args, **kwargs):
        raise AssertionError("onnxruntime was asked to load the file")

    monkeypatch.setattr(onnxruntime, "InferenceSession", refuse)


@pytest.mark.parametrize(
    "location, where",
    [
        ("../grades.bin", "in '../grades.bin', outside the bot file's folder"),
        ("ABSOLUTE", "an absolute path outside the bot file's folder"),
        ("link.bin", "in 'link.bin', outside the bot file's folder"),
        ("sub/../../grades.bin", "outside the bot file's folder"),
        ("bias.bin", "in 'bias.bin' beside it"),
    ],
)
def test_a_bot_file_with_external_data_is_refused_before_onnxruntime_reads_it(
    tmp_path, no_onnxruntime_load, location, where
):
    grades = tmp_path / "grades.bin"
    grades.write_bytes(np.arange(NUM_ACTIONS, dtype=np.float32).tobytes())
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "link.bin").symlink_to(grades)
    (folder / "bias.bin").write_bytes(grades.read_bytes())
    location = str(grades) if location == "ABSOLUTE" else location
    data = _external(_graph(), location)
    path = _write(folder, data)
    with pytest.raises(BotFileError) as refused:
        load_onnx_bot(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: tensor 'b' keeps its data ") and where in message
    assert message.endswith("a bot file holds its weights itself (save it without external data)")
    assert "\n" not in message


def test_a_bot_file_over_the_cap_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from agents.onnx_checks import MAX_BOT_FILE_MB

    path = _write(tmp_path, _graph())
    with open(path, "r+b") as f:
        f.truncate(MAX_BOT_FILE_MB * 1024 * 1024 + 1)  # sparse: no disk used
    real = Path.read_bytes

    def read_bytes(self):
        assert self != path, "the oversized file was read"
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(BotFileError, match=r"holds 256\.0 MB, over the cap of 256 MB \("):
        load_onnx_bot(path)


def test_the_wire_walk_finds_every_external_tensor_onnx_finds(tmp_path):
    """agents.onnx_checks reads the protobuf by hand: against the onnx package's own reading,
    for external data in an initializer, a node's attribute, a subgraph and a sparse tensor."""
    from onnx.external_data_helper import _get_all_tensors, uses_external_data

    from agents.onnx_checks import external_tensors

    def tensor(name: str, external: bool) -> onnx.TensorProto:
        t = numpy_helper.from_array(np.ones(3, dtype=np.float32), name)
        if external:
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            entry = t.external_data.add()
            entry.key, entry.value = "location", f"{name}.bin"
        return t

    const = helper.make_node("Constant", [], ["c"], value=tensor("in_attribute", True))
    branch = helper.make_graph(
        [helper.make_node("Identity", ["in_subgraph"], ["y"])],
        "branch",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
        [tensor("in_subgraph", True), tensor("plain_in_subgraph", False)],
    )
    cond = helper.make_node("If", ["flag"], ["z"], then_branch=branch, else_branch=branch)
    sparse = helper.make_sparse_tensor(
        tensor("in_sparse", True), numpy_helper.from_array(np.array([0, 1, 2]), "idx"), [3]
    )
    graph = helper.make_graph(
        [const, cond],
        "g",
        [helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [3])],
        [tensor("in_initializer", True), tensor("plain", False)],
        sparse_initializer=[sparse],
    )
    model = helper.make_model(graph)
    found = sorted(set(external_tensors(model.SerializeToString())))  # a branch is there twice
    expected = {t.name for t in _get_all_tensors(model) if uses_external_data(t)} | {"in_sparse"}
    assert found == sorted((name, f"{name}.bin") for name in expected)
    assert {name for name, _ in found} == {
        "in_attribute",
        "in_subgraph",
        "in_initializer",
        "in_sparse",
    }
    assert external_tensors(_graph()) == []
