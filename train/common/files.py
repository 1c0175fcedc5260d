"""Run files written atomically (through ``racko_env.files``), so that a kill at any moment leaves
the old file or the new one: the JSON and YAML of run folders, and the clean-up of ``.tmp_*``
leftovers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from racko_env.files import TMP_PREFIX, write_text_atomic


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
