"""Trained bots from exported files (``bot.onnx`` + ``bot.json``), with numpy and onnxruntime only.

``agents.load("path/bot.onnx", num_players=2)`` lands here. A file made for another player count,
an unknown observation layout or other rules options is refused (the bot would play badly
without a word). A bot of an older layout version plays on a newer observation through that
version's view; a newer one refuses an older, narrower observation. Format: docs/bot-format.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Bot
from agents.extras import require
from agents.onnx_checks import BotFileError, read_bot_file
from racko_env.actions import NUM_ACTIONS
from racko_env.config import RulesConfig
from racko_env.observation import DEFAULT, OBS_SIZES, OBS_VERSION, Layout, layout_for, obs_size

FORMAT = "racko-bot"
SUPPORTED_FORMAT_VERSIONS = (1,)


class OnnxBot(Bot):
    """Plays the masked argmax of an exported policy (deterministic).

    The graph's answer is checked on every call: an action outside 0..13, or one the mask forbids,
    raises ``BotFileError`` naming the bot and the action, since playing it would hand a broken
    file's bug to the env (or to whoever seats the bot) as an illegal move.
    """

    def __init__(self, session: Any, manifest: dict[str, Any], name: str) -> None:
        self.session = session
        self.manifest = manifest
        self.name = name
        self.observation_version = int(manifest.get("observation_version", OBS_VERSION))
        self.sizes = trained_layout(manifest).sizes
        self.obs_size = self.sizes.get(self.observation_version) or obs_size(
            self.observation_version
        )

    def graph_inputs(self, obs: Any) -> np.ndarray:
        """The graph's observation input: rows of this bot's layout version, cut from rows of
        that version or a newer one (an older, narrower observation lacks what it reads)."""
        rows = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        rows = rows.reshape(-1, rows.shape[-1])
        width = rows.shape[1]
        if width not in self.sizes.values() or width < self.obs_size:
            raise ValueError(
                f"{self.name}: reads observation layout version {self.observation_version} "
                f"({self.obs_size} entries), got observations of {width} entries"
            )
        return np.ascontiguousarray(rows[:, : self.obs_size])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for a batch (the ``BatchPolicy`` protocol)."""
        masks = np.asarray(masks).astype(bool).reshape(-1, NUM_ACTIONS)
        out = self.session.run(
            [OUTPUT_ACTION],
            {INPUT_OBS: self.graph_inputs(obs), INPUT_MASK: masks},
        )
        actions = np.asarray(out[0])
        if actions.shape != (masks.shape[0],) or actions.dtype.kind not in "iu":
            raise BotFileError(
                f"{self.name}: the graph returned {actions.dtype} actions of shape {actions.shape} "
                f"for {masks.shape[0]} observations, expected int64 ({masks.shape[0]},)"
            )
        actions = actions.astype(np.int64, copy=False)
        in_range = (actions >= 0) & (actions < NUM_ACTIONS)
        legal = in_range.copy()
        legal[in_range] = masks[np.flatnonzero(in_range), actions[in_range]]
        if not legal.all():
            row = int(np.flatnonzero(~legal)[0])
            action = int(actions[row])
            if not in_range[row]:
                why = f"outside the action ids 0..{NUM_ACTIONS - 1}"
            else:
                why = f"not legal under the mask (legal: {np.flatnonzero(masks[row]).tolist()})"
            raise BotFileError(f"{self.name}: the graph chose action {action}, {why}")
        return actions

    def act(self, observation: Mapping[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if not mask.any():
            raise ValueError(f"{self.name}: asked to act with no legal action")
        return int(self.act_batch(observation["observation"], mask)[0])


# The graph's interface (docs/bot-format.md), as the manifest writes it: dtype and shape per name.
INPUT_OBS, INPUT_MASK = "observation", "action_mask"
OUTPUT_ACTION, OUTPUT_LOGITS = "action", "masked_logits"


def inputs_for(version: int, sizes: dict[int, int] = OBS_SIZES) -> dict[str, dict[str, Any]]:
    """The graph inputs of a bot that reads observation layout ``version`` (of the layout whose
    widths are ``sizes``: the rule book's by default)."""
    width = sizes[version] if version in sizes else obs_size(version)
    return {
        INPUT_OBS: {"dtype": "float32", "shape": ["batch", width]},
        INPUT_MASK: {"dtype": "bool", "shape": ["batch", NUM_ACTIONS]},
    }


INPUTS: dict[str, dict[str, Any]] = inputs_for(OBS_VERSION)  # what a new export declares
OUTPUTS: dict[str, dict[str, Any]] = {
    OUTPUT_ACTION: {"dtype": "int64", "shape": ["batch"]},
    OUTPUT_LOGITS: {"dtype": "float32", "shape": ["batch", NUM_ACTIONS]},
}
REQUIRED_OUTPUTS = (OUTPUT_ACTION,)
_ORT_TYPES = {"float32": "tensor(float)", "bool": "tensor(bool)", "int64": "tensor(int64)"}


def _read_manifest(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"bot manifest not found: {path} (it must sit beside the .onnx)")
    try:
        manifest = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BotFileError(f"bot manifest {path} is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BotFileError(f"{path} is not a racko bot manifest (format != {FORMAT!r})")
    return manifest


def trained_layout(manifest: dict[str, Any]) -> Layout:
    """The observation layout of the game the manifest's bot was trained for: the rule book's
    (``DEFAULT``) for every 10-slot game of 2-4 players, one sized to the game for solitaire and
    smaller racks (``layout_for``); ``DEFAULT`` when the manifest's game is unreadable (the
    players and rules checks of ``check_manifest`` name that)."""
    try:
        rules = dict(manifest.get("rules") or {})
        config = RulesConfig.from_dict({**rules, "num_players": manifest.get("num_players")})
    except (TypeError, ValueError):
        return DEFAULT
    return layout_for(config)


def check_manifest(
    manifest: dict[str, Any], source: str, num_players: int, rules_options: dict[str, Any]
) -> None:
    """Raise ``BotFileError`` naming the first way the manifest does not fit the requested game."""
    version = manifest.get("format_version")
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise BotFileError(
            f"{source}: bot format version {version!r} is not supported "
            f"(supported: {SUPPORTED_FORMAT_VERSIONS})"
        )
    sizes = trained_layout(manifest).sizes  # the rule book's OBS_SIZES but for other sizes
    layout = manifest.get("observation_version")
    if isinstance(layout, bool) or layout not in sizes:
        raise BotFileError(
            f"{source}: trained on observation layout version {layout!r}, which this env does "
            f"not know (it knows versions {', '.join(map(str, sizes))})"
        )
    if manifest.get("observation_size") != sizes[layout]:
        raise BotFileError(
            f"{source}: the manifest's observation_size is {manifest.get('observation_size')!r}, "
            f"layout version {layout} has {sizes[layout]}"
        )
    wanted_inputs = inputs_for(layout, sizes)
    if manifest.get("inputs") != wanted_inputs:
        raise BotFileError(
            f"{source}: the manifest's inputs are {manifest.get('inputs')!r}, expected "
            f"{wanted_inputs!r}"
        )
    outputs = manifest.get("outputs")
    if (
        not isinstance(outputs, dict)
        or not set(REQUIRED_OUTPUTS) <= set(outputs)
        or any(outputs[name] != OUTPUTS.get(name) for name in outputs)
    ):
        raise BotFileError(
            f"{source}: the manifest's outputs are {outputs!r}; expected {OUTPUT_ACTION!r} "
            f"(and optionally {OUTPUT_LOGITS!r}) as in {OUTPUTS!r}"
        )
    digest = manifest.get("onnx_sha256")
    if not isinstance(digest, str) or len(digest) != 64:
        raise BotFileError(
            f"{source}: the manifest needs onnx_sha256, the SHA-256 of the .onnx file as 64 hex "
            f"digits; got {digest!r}"
        )
    if manifest.get("num_players") != num_players:
        raise BotFileError(
            f"{source}: trained for {manifest.get('num_players')!r} players, "
            f"asked to play with {num_players}"
        )

    def options(config: RulesConfig) -> dict[str, Any]:  # the players' default deck is 0
        default = RulesConfig(num_players=config.num_players).num_cards
        return {**config.to_dict(), **({"deck_size": 0} if config.num_cards == default else {})}

    wanted = options(RulesConfig.from_dict({"num_players": num_players, **rules_options}))
    try:
        trained = options(
            RulesConfig.from_dict({"num_players": num_players, **manifest.get("rules", {})})
        )
    except (TypeError, ValueError) as exc:
        raise BotFileError(f"{source}: the manifest's rules are invalid: {exc}") from None
    diff = {k: (trained[k], wanted[k]) for k in wanted if trained[k] != wanted[k]}
    if diff:
        detail = ", ".join(f"{k}: trained {a!r}, asked {b!r}" for k, (a, b) in diff.items())
        raise BotFileError(f"{source}: trained for other rules options ({detail})")


def _check_graph(session: Any, manifest: dict[str, Any], source: str) -> None:
    """The graph's own inputs and outputs (names, dtypes, shapes) against the manifest."""

    def signature(args: list[Any]) -> dict[str, tuple[str, list[Any]]]:
        return {a.name: (a.type, list(a.shape)) for a in args}

    def check(kind: str, found: dict[str, tuple[str, list[Any]]], wanted: dict[str, Any]) -> None:
        for name, spec in wanted.items():
            if name not in found:
                raise BotFileError(
                    f"{source}: the graph has no {kind} {name!r} (its {kind}s: {sorted(found)})"
                )
            dtype, shape = found[name]
            fixed = spec["shape"][1:]
            # The batch axis must be dynamic (a name or unknown); the others fixed as declared.
            ok_shape = (
                len(shape) == len(spec["shape"])
                and not isinstance(shape[0], int)
                and shape[1:] == fixed
            )
            if dtype != _ORT_TYPES[spec["dtype"]] or not ok_shape:
                raise BotFileError(
                    f"{source}: graph {kind} {name!r} is {dtype} {shape}, the manifest says "
                    f"{spec['dtype']} {spec['shape']}"
                )

    inputs = signature(session.get_inputs())
    if set(inputs) != set(INPUTS):
        raise BotFileError(
            f"{source}: graph inputs are {sorted(inputs)}, expected {sorted(INPUTS)}"
        )
    check("input", inputs, manifest["inputs"])
    check("output", signature(session.get_outputs()), manifest["outputs"])


def load_onnx_bot(path: str | Path, num_players: int = 2, **rules_options: Any) -> OnnxBot:
    """Load ``path`` (.onnx, manifest beside it as .json) for a game with these rules.

    Everything is checked before the bot plays: the manifest (format, layout version and size,
    inputs, outputs, players, rules, ``onnx_sha256``), the file's hash, and the graph's inputs and
    outputs against the manifest. Raises ``BotFileError`` naming the first mismatch, and
    ``MissingExtraError`` (one line: the 'bots' extra) without onnxruntime.
    """
    ort = require("onnxruntime", "bots", "playing an exported .onnx bot")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"bot file not found: {path}")
    manifest = _read_manifest(path.with_suffix(".json"))
    check_manifest(manifest, str(path), num_players, rules_options)
    # its size, its hash and its tensors, checked before onnxruntime reads it
    data = read_bot_file(path, manifest["onnx_sha256"])
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # onnxruntime's own log lines (warnings while it optimises a graph, an error line before it
    # raises on a failed allocation) would land in the user's terminal and a grader's report;
    # every failure reaches the caller as an exception with its message anyway
    options.log_severity_level = 4  # fatal only
    try:
        session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        raise BotFileError(f"{path}: onnxruntime cannot load it: {exc}") from None
    _check_graph(session, manifest, str(path))
    return OnnxBot(session, manifest, name=path.stem)
