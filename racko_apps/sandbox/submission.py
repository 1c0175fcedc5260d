"""What a submission is: the files of a bot that the sandbox shows it (and nothing else of its
folder), within a size cap.

A submission is one of (docs/coursework/submissions.md):

* a module ``NAME.py`` (spec ``NAME:Bot`` or ``NAME:act``);
* a package ``NAME/`` with ``NAME/__init__.py`` (spec ``NAME:Bot``), holding its own modules and
  data files (weights as ``.npz``, ``.npy``, ``.onnx``, ``.json``), read relative to
  ``__file__``;
* an exported bot file ``NAME.onnx`` with its manifest ``NAME.json``.

Inside the sandbox the submission is read-only. Its files together may hold at most
``MAX_SUBMISSION_MB`` megabytes (links are not followed, and not counted).
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_SUBMISSION_MB = 50
DATA_SUFFIXES = (".npz", ".npy", ".onnx", ".json")  # the weights a package may carry


def submission_paths(spec: str, folder: Path) -> list[Path]:
    """A ``module:Class`` bot's own files: ``folder/module.py`` or the package ``folder/module/``."""
    top = spec.partition(":")[0].partition(".")[0]
    return [p for p in (folder / f"{top}.py", folder / top) if p.exists()]


def submission_bytes(paths: list[Path]) -> int:
    """The bytes of the regular files in ``paths`` (folders walked, links neither followed nor
    counted)."""
    total = 0
    for path in paths:
        if path.is_symlink():
            continue
        if path.is_file():
            total += path.stat().st_size
            continue
        for here, _, files in os.walk(path):
            for name in files:
                entry = Path(here, name)
                if not entry.is_symlink():
                    total += entry.stat().st_size
    return total


def oversize(paths: list[Path], cap_mb: float = MAX_SUBMISSION_MB) -> str | None:
    """Why a submission of ``paths`` is refused for its size (one line), or None."""
    size = submission_bytes(paths)
    if size <= cap_mb * 1024 * 1024:
        return None
    return f"the submission holds {size / 1024 / 1024:.1f} MB, over the cap of {cap_mb:g} MB"
