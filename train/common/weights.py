"""Weights as data: state dicts written with ``torch.save`` (atomically) and read back with
``weights_only=True``, so loading a file never runs code from it. The trainers' checkpoints,
final models and iteration files all go through here."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import torch
from torch import nn

from train.common.files import RunFolderError, write_bytes_atomic


def torch_bytes(obj: Any) -> bytes:
    """``torch.save`` into bytes (tensors and plain containers: what ``load_torch_data`` reads)."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def load_torch_data(path: str | Path, what: str) -> Any:
    """``torch.load(weights_only=True)``: tensors and plain containers only, never code.

    A file that holds anything else (a pickled object, an SB3 ``.zip``) is refused with a
    ``RunFolderError`` naming the file; nothing in it is executed.
    """
    path = Path(path)
    if not path.is_file():
        raise RunFolderError(f"{what}: no file at {path}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # UnpicklingError, RuntimeError (not a torch file), EOFError, ...
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RunFolderError(
            f"{what}: {path} is not a data-only weights file written by this project "
            f"(refused without running it: {first[:200]})"
        ) from None


def save_state_dict(module: nn.Module, path: Path) -> Path:
    """Write ``module.state_dict()`` to ``path`` as a data-only file (atomically)."""
    return write_bytes_atomic(path, torch_bytes(module.state_dict()))


def load_state_dict(module: nn.Module, path: Path, what: str) -> Any:
    """Fill ``module`` (built from the config) with the weights at ``path``; one line naming the
    file when they are not data or do not fit the config's network. Returns it in eval mode."""
    try:
        module.load_state_dict(load_torch_data(path, what))
    except (RuntimeError, TypeError, AttributeError) as exc:
        first = str(exc).splitlines()[0][:200]
        raise RunFolderError(f"{what} {path} does not fit the config's net: {first}") from None
    return module.eval()
