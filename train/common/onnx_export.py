"""Bot files from policies: ``bot.onnx`` + ``bot.json`` (docs/bot-format.md). An MLP's graph is
written from its weights with ``onnx.helper`` (Gemm, Tanh/Relu, Where, ArgMax; no tracing), any
other torch policy's by torch's exporter. Every graph is checked action for action against its
policy before the files are written, atomically."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from racko_env.actions import ACTION_NAMES, NUM_ACTIONS
from racko_env.config import RulesConfig
from racko_env.files import write_bytes_atomic, write_text_atomic
from racko_env.observation import OBS_SIZE, layout_for, version_of_size
from train.common.snapshot import MASKED_LOGIT, SnapshotPolicy

FORMAT = "racko-bot"
FORMAT_VERSION = 1
OPSET = 17
INPUT_OBS, INPUT_MASK = "observation", "action_mask"
OUTPUT_ACTION, OUTPUT_LOGITS = "action", "masked_logits"


def build_onnx(policy: SnapshotPolicy) -> Any:
    """The ONNX graph of a policy: (observation, action_mask) -> (action, masked_logits)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inits, nodes = [], []
    width = policy.layers[0][0].shape[1]  # the observation it was trained on: any layout version
    h = INPUT_OBS
    for i, (w, b) in enumerate(policy.layers):
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        out = "logits" if i == len(policy.layers) - 1 else f"z{i}"
        nodes.append(helper.make_node("Gemm", [h, f"w{i}", f"b{i}"], [out], transB=1))
        if i < len(policy.layers) - 1:
            act = "Tanh" if policy.activation == "tanh" else "Relu"
            nodes.append(helper.make_node(act, [out], [f"h{i}"]))
            h = f"h{i}"
    inits.append(numpy_helper.from_array(np.array(MASKED_LOGIT, dtype=np.float32), "masked"))
    nodes.append(helper.make_node("Where", [INPUT_MASK, "logits", "masked"], [OUTPUT_LOGITS]))
    nodes.append(helper.make_node("ArgMax", [OUTPUT_LOGITS], [OUTPUT_ACTION], axis=1, keepdims=0))
    graph = helper.make_graph(
        nodes,
        "racko_policy",
        [
            helper.make_tensor_value_info(INPUT_OBS, TensorProto.FLOAT, ["batch", width]),
            helper.make_tensor_value_info(INPUT_MASK, TensorProto.BOOL, ["batch", NUM_ACTIONS]),
        ],
        [
            helper.make_tensor_value_info(OUTPUT_ACTION, TensorProto.INT64, ["batch"]),
            helper.make_tensor_value_info(OUTPUT_LOGITS, TensorProto.FLOAT, ["batch", NUM_ACTIONS]),
        ],
        inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="racko"
    )
    model.ir_version = 8  # readable by onnxruntime releases of the last few years
    onnx.checker.check_model(model)
    return model


def make_manifest(
    num_players: int,
    rules: dict[str, Any],
    onnx_bytes: bytes,
    evaluation: dict[str, Any] | None = None,
    training: dict[str, Any] | None = None,
    width: int = OBS_SIZE,
) -> dict[str, Any]:
    """The ``bot.json`` contents: the rules in full (the sizes only when they are not the rule
    book's), and the observation layout version of the graph's input ``width``."""
    config = RulesConfig.from_dict({**rules, "num_players": num_players})
    # The rule book's sizes are left out, so a default game's bot file is the same as ever.
    sizes = ("rack_size", "deck_size") if config.is_default_size else ()
    full = {k: v for k, v in config.to_dict().items() if k not in sizes}
    run = (training or {}).get("config")
    if isinstance(run, dict) and isinstance(run.get("rules"), dict):
        rules_run = {k: v for k, v in run["rules"].items() if k not in sizes}
        training = {**training, "config": {**run, "rules": rules_run}}
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "observation_version": layout_version(num_players, rules, width),
        "observation_size": width,
        "num_players": num_players,
        "rules": {k: v for k, v in full.items() if k != "num_players"},
        "inputs": {
            INPUT_OBS: {"dtype": "float32", "shape": ["batch", width]},
            INPUT_MASK: {"dtype": "bool", "shape": ["batch", NUM_ACTIONS]},
        },
        "outputs": {
            OUTPUT_ACTION: {"dtype": "int64", "shape": ["batch"]},
            OUTPUT_LOGITS: {"dtype": "float32", "shape": ["batch", NUM_ACTIONS]},
        },
        "actions": {str(i): name for i, name in enumerate(ACTION_NAMES)},
        "onnx_sha256": hashlib.sha256(onnx_bytes).hexdigest(),
        "evaluation": evaluation or {},
        "training": training or {},
    }


def layout_version(num_players: int, rules: dict[str, Any], width: int) -> int:
    """The newest observation layout version of the game that is ``width`` entries wide (a game
    of other sizes has its own layout: solitaire's versions are equally wide); ValueError if
    none is."""
    config = RulesConfig.from_dict({**rules, "num_players": num_players})
    versions = [v for v, size in layout_for(config).sizes.items() if size == width]
    return max(versions) if versions else version_of_size(width)


def graph_obs_width(onnx_bytes: bytes) -> int:
    """The width of a bot graph's observation input (which layout version it reads)."""
    import onnx

    for value in onnx.load_from_string(onnx_bytes).graph.input:
        if value.name == INPUT_OBS:
            return int(value.type.tensor_type.shape.dim[1].dim_value)
    raise ValueError(f"the graph has no input {INPUT_OBS!r}")


def sample_observations(
    num_players: int, rules: dict[str, Any], count: int, seed: int = 0, width: int = OBS_SIZE
) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks met in real play (learner seat, random legal moves vs heuristic),
    of the layout version ``width`` entries wide."""
    from racko_env.gym_env import RackoGymEnv

    env = RackoGymEnv(
        num_players=num_players,
        opponents=["heuristic"],
        observation_version=layout_version(num_players, rules, width),
        **rules,
    )
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    all_obs, all_masks = [], []
    while len(all_obs) < count:
        mask = env.action_masks()
        all_obs.append(obs)
        all_masks.append(mask)
        obs, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if term or trunc:
            obs, _ = env.reset()
    return np.stack(all_obs), np.stack(all_masks)


def onnx_actions(onnx_bytes: bytes, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The actions a bot graph returns for a batch (onnxruntime, CPU)."""
    import onnxruntime as ort

    session = ort.InferenceSession(onnx_bytes, providers=["CPUExecutionProvider"])
    return session.run([OUTPUT_ACTION], {INPUT_OBS: obs, INPUT_MASK: masks})[0]


def verify_export(
    onnx_bytes: bytes,
    reference: Callable[[np.ndarray, np.ndarray], np.ndarray],
    num_players: int,
    rules: dict[str, Any],
    check: int,
    what: str,
) -> None:
    """Raise unless the graph plays ``reference``'s actions on ``check`` observations of play."""
    if not check:
        return
    obs, masks = sample_observations(num_players, rules, check, width=graph_obs_width(onnx_bytes))
    bad = int(np.sum(onnx_actions(onnx_bytes, obs, masks) != reference(obs, masks)))
    if bad:
        raise RuntimeError(f"ONNX export disagrees with the {what} on {bad}/{check} obs")


def write_bot(
    onnx_bytes: bytes,
    out_dir: Path,
    num_players: int,
    rules: dict[str, Any],
    evaluation: dict[str, Any] | None,
    training: dict[str, Any] | None,
    checked: int,
    stem: str = "bot",
) -> tuple[Path, Path]:
    """Write ``stem.onnx`` and its manifest ``stem.json`` (``checked``: observations verified)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    onnx_path, json_path = out_dir / f"{stem}.onnx", out_dir / f"{stem}.json"
    width = graph_obs_width(onnx_bytes)
    manifest = make_manifest(num_players, rules, onnx_bytes, evaluation, training, width)
    if checked:
        manifest["export_check"] = {"observations": checked, "disagreements": 0}
    # the graph first: a manifest never names a graph that is not there (its sha256 checks it)
    write_bytes_atomic(onnx_path, onnx_bytes)
    write_text_atomic(json_path, json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    return onnx_path, json_path


def export_module(
    module: Any,
    out_dir: Path,
    num_players: int,
    rules: dict[str, Any],
    evaluation: dict[str, Any] | None = None,
    training: dict[str, Any] | None = None,
    check: int = 300,
    stem: str = "bot",
    reference: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    what: str = "policy",
) -> tuple[Path, Path]:
    """Write ``stem.onnx`` + ``stem.json`` for a torch module ``(obs, mask) -> (action, logits)``,
    traced by torch's TorchScript exporter and checked against the module itself and, when the
    policy plays through another path (an RLlib module's ``forward_inference``), against
    ``reference``. The graph reads the game's own observation layout (``layout_for``: the rule
    book's ``OBS_SIZE`` entries, or a smaller game's)."""
    import io
    import warnings

    import torch

    module = module.eval()
    buf = io.BytesIO()
    width = layout_for(RulesConfig.from_dict({**rules, "num_players": num_players})).size
    example = (torch.zeros(2, width), torch.ones(2, NUM_ACTIONS, dtype=torch.bool))
    batch = {0: "batch"}
    with warnings.catch_warnings():  # the TorchScript exporter warns that it is the older one
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            example,
            buf,
            dynamo=False,
            input_names=[INPUT_OBS, INPUT_MASK],
            output_names=[OUTPUT_ACTION, OUTPUT_LOGITS],
            dynamic_axes=dict.fromkeys(
                [INPUT_OBS, INPUT_MASK, OUTPUT_ACTION, OUTPUT_LOGITS], batch
            ),
            opset_version=OPSET,
        )
    import onnx

    proto = onnx.load_from_string(buf.getvalue())
    proto.producer_name = "racko"
    onnx.checker.check_model(proto)
    onnx_bytes = proto.SerializeToString()

    def module_actions(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return module(torch.as_tensor(obs), torch.as_tensor(masks))[0].numpy()

    verify_export(onnx_bytes, module_actions, num_players, rules, check, "torch policy")
    if reference is not None:
        verify_export(onnx_bytes, reference, num_players, rules, check, what)
    return write_bot(onnx_bytes, out_dir, num_players, rules, evaluation, training, check, stem)


def export_torch_bot(
    module: Any,
    path: str | Path,
    num_players: int = 2,
    rules: dict[str, Any] | None = None,
    *,
    check: int = 300,
    training: dict[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Write a torch policy as a racko bot file, ``path`` (``NAME.onnx``) and ``NAME.json``
    (docs/bot-format.md). ``module`` maps observations (float32 ``[batch, OBS_SIZE]``) to one logit
    per action, whatever its layers, as long as torch's exporter can trace it; the bot plays the
    legal action with the highest logit. The graph is checked against the module on ``check``
    observations of real play of the game ``num_players`` and ``rules`` name before anything is
    written."""
    import torch

    path = Path(path)
    if path.suffix != ".onnx":
        raise ValueError(f"a bot file's name ends in .onnx, got {str(path)!r}")

    class MaskedArgmax(torch.nn.Module):
        """``(observation, mask) -> (action, masked logits)``: the bot file's interface."""

        def __init__(self, policy: Any) -> None:
            super().__init__()
            self.policy = policy

        def forward(self, obs: Any, mask: Any) -> tuple[Any, Any]:
            logits = self.policy(obs)
            masked = torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))
            return torch.argmax(masked, dim=1), masked

    return export_module(
        MaskedArgmax(module),
        path.parent,
        num_players,
        dict(rules or {}),
        training=training,
        check=check,
        stem=path.stem,
        what="torch module",
    )
