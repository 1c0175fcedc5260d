"""The RLlib trainer's bot files (``train/rllib_ppo.py``): ``bot.onnx`` + ``bot.json`` from the
``main`` RLModule, checked against the module before they go into place (docs/bot-format.md)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from train.common.files import write_bytes_atomic
from train.rllib.config import RLlibConfig


def export_bot(
    module: Any,
    out_dir: Path,
    cfg: RLlibConfig,
    evaluation: dict[str, Any] | None = None,
    training: dict[str, Any] | None = None,
) -> tuple[Path, Path]:
    """``bot.onnx`` + ``bot.json`` from the ``main`` RLModule, checked on ``export_check``
    observations against the module's own inference path (masked argmax), written atomically.
    The structured network goes out through ``train.network``'s ``PolicyGraph``, as ``train/ppo.py``
    exports it."""
    import functools

    from train.common.onnx_export import export_module, verify_export
    from train.rllib.module import export_graph, module_actions

    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir, prefix=".export_"))
    try:
        onnx_path, json_path = export_module(
            export_graph(module),
            tmp,
            cfg.num_players,
            cfg.rules_options(),
            evaluation,
            training,
            check=cfg.export_check,
        )
        verify_export(
            onnx_path.read_bytes(),
            functools.partial(module_actions, module),
            cfg.num_players,
            cfg.rules_options(),
            cfg.export_check,
            "RLlib module",
        )
        # checked: now into place, the graph first (a manifest never names a missing graph)
        final_onnx, final_json = out_dir / onnx_path.name, out_dir / json_path.name
        write_bytes_atomic(final_onnx, onnx_path.read_bytes())
        write_bytes_atomic(final_json, json_path.read_bytes())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final_onnx, final_json
