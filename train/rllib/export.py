"""The RLlib trainer's bot files (``train/rllib_ppo.py``): ``bot.onnx`` + ``bot.json`` from the
``main`` RLModule, checked against the module before they go into place (docs/bot-format.md)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from train.rllib.config import RLlibConfig


def export_bot(
    module: Any,
    out_dir: Path,
    cfg: RLlibConfig,
    evaluation: dict[str, Any] | None = None,
    training: dict[str, Any] | None = None,
) -> tuple[Path, Path]:
    """``bot.onnx`` + ``bot.json`` from the ``main`` RLModule, checked on ``export_check``
    observations against the graph's torch module and the module's own inference path (masked
    argmax) before anything is written (``train.common.onnx_export.export_module``). The
    structured network goes out through ``train.network``'s ``PolicyGraph``, as ``train/ppo.py``
    exports it."""
    from train.common.onnx_export import export_module
    from train.rllib.module import export_graph, module_actions

    return export_module(
        export_graph(module),
        out_dir,
        cfg.num_players,
        cfg.rules_options(),
        evaluation,
        training,
        check=cfg.export_check,
        reference=functools.partial(module_actions, module),
        what="RLlib module",
    )
