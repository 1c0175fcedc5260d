"""Weights as data: tensors written with ``torch.save`` and read back with ``weights_only=True``,
so loading a file never runs code from it. The trainers' checkpoints and final models all go
through here."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import torch

from train.common.files import RunFolderError


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
