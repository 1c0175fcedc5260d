"""Writing files atomically, the one writer of the project: a reader never sees a half-written file.

The bytes go to a hidden temporary file in the same folder, are flushed to disk and replace the
target in one ``os.replace``, so a kill at any moment leaves the old file or the new one. The new
file gets ``mode`` (0600 for a secret: never readable by others, not for a moment), else keeps
the mode of the file it replaces, else 0644. In the lowest layer: everything writes through it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

TMP_PREFIX = ".tmp_"  # readers skip these; trainers remove leftovers of a killed writer


def write_bytes_atomic(path: str | Path, data: bytes, mode: int | None = None) -> Path:
    """Write ``data`` to ``path`` so that ``path`` is either absent/old or complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = mode or (path.stat().st_mode & 0o7777 if path.is_file() else 0o644)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX + path.name + ".", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | Path, text: str, mode: int | None = None) -> Path:
    """``write_bytes_atomic`` of ``text`` in UTF-8."""
    return write_bytes_atomic(path, text.encode("utf-8"), mode)
