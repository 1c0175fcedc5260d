"""Writing run files atomically: a reader (or a resumed run) never sees a half-written file.

Every file a trainer writes into its run folder goes through here: the bytes go to a hidden
temporary file in the same folder, are flushed to disk, and then replace the target in one
``os.replace`` (atomic on POSIX and Windows), so a kill at any moment leaves either the old file or
the new one. Temporary names start with ``.tmp_``; readers skip them and trainers remove leftovers.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

TMP_PREFIX = ".tmp_"


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` so that ``path`` is either absent/old or complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX + path.name + ".", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | Path, data: Any, indent: int | None = 1) -> Path:
    """JSON run logs (``eval_history.json``, ``history.json``, ...); NaN/inf are refused."""
    return write_text_atomic(path, json.dumps(data, indent=indent, allow_nan=False) + "\n")


def write_yaml_atomic(path: str | Path, data: dict[str, Any]) -> Path:
    """A run's ``config.yaml`` (plain YAML, key order kept)."""
    return write_text_atomic(path, yaml.safe_dump(data, sort_keys=False))


def remove_temp_files(folder: str | Path) -> list[Path]:
    """Delete ``.tmp_*`` files and folders left in ``folder`` by a killed writer; return them."""
    import shutil

    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    for p in folder.glob(TMP_PREFIX + "*"):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        removed.append(p)
    return removed


class RunFolderError(Exception):
    """A run folder or model file that cannot be used as asked; the message says what to do."""
