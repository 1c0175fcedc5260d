"""Trained bots from exported files (``bot.onnx`` + ``bot.json``), with numpy and onnxruntime only.

``agents.load("path/bot.onnx", num_players=2)`` lands here. The manifest beside the ONNX file
says which game the bot was trained for; a file for another player count, observation layout or
rules options is refused, since the bot would silently play badly. Format: docs/bot-format.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Bot
from racko_env.actions import NUM_ACTIONS
from racko_env.config import RulesConfig
from racko_env.observation import OBS_SIZE, OBS_VERSION

FORMAT = "racko-bot"
SUPPORTED_FORMAT_VERSIONS = (1,)


class BotFileError(ValueError):
    """A bot file that is corrupt, of an unknown format, or made for another game."""


class OnnxBot(Bot):
    """Plays the masked argmax of an exported policy (deterministic)."""

    def __init__(self, session: Any, manifest: dict[str, Any], name: str) -> None:
        self.session = session
        self.manifest = manifest
        self.name = name

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for a batch (the ``BatchPolicy`` protocol)."""
        out = self.session.run(
            ["action"],
            {
                "observation": np.asarray(obs, dtype=np.float32).reshape(-1, OBS_SIZE),
                "action_mask": np.asarray(masks).astype(bool).reshape(-1, NUM_ACTIONS),
            },
        )
        return out[0].astype(np.int64)

    def act(self, observation: Mapping[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if not mask.any():
            raise ValueError(f"{self.name}: asked to act with no legal action")
        return int(self.act_batch(observation["observation"], mask)[0])


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
    if manifest.get("observation_version") != OBS_VERSION:
        raise BotFileError(
            f"{source}: trained on observation layout version "
            f"{manifest.get('observation_version')!r}, this env uses version {OBS_VERSION}"
        )
    if manifest.get("num_players") != num_players:
        raise BotFileError(
            f"{source}: trained for {manifest.get('num_players')!r} players, "
            f"asked to play with {num_players}"
        )
    wanted = RulesConfig.from_dict({"num_players": num_players, **rules_options}).to_dict()
    try:
        trained = RulesConfig.from_dict(
            {"num_players": num_players, **manifest.get("rules", {})}
        ).to_dict()
    except (TypeError, ValueError) as exc:
        raise BotFileError(f"{source}: the manifest's rules are invalid: {exc}") from None
    diff = {k: (trained[k], wanted[k]) for k in wanted if trained[k] != wanted[k]}
    if diff:
        detail = ", ".join(f"{k}: trained {a!r}, asked {b!r}" for k, (a, b) in diff.items())
        raise BotFileError(f"{source}: trained for other rules options ({detail})")


def load_onnx_bot(path: str | Path, num_players: int = 2, **rules_options: Any) -> OnnxBot:
    """Load ``path`` (.onnx, manifest beside it as .json) for a game with these rules."""
    import onnxruntime as ort

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"bot file not found: {path}")
    manifest = _read_manifest(path.with_suffix(".json"))
    check_manifest(manifest, str(path), num_players, rules_options)
    data = path.read_bytes()
    digest = manifest.get("onnx_sha256")
    if digest is not None and hashlib.sha256(data).hexdigest() != digest:
        raise BotFileError(f"{path}: the file does not match its manifest's onnx_sha256 (corrupt?)")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    try:
        session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        raise BotFileError(f"{path}: onnxruntime cannot load it: {exc}") from None
    names = {i.name for i in session.get_inputs()}
    if names != {"observation", "action_mask"}:
        raise BotFileError(
            f"{path}: graph inputs are {sorted(names)}, expected observation, action_mask"
        )
    return OnnxBot(session, manifest, name=path.stem)
