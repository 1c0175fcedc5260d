"""What a submission is: the files of a bot that the sandbox shows it (and nothing else of its
folder)."""

from __future__ import annotations

from pathlib import Path


def submission_paths(spec: str, folder: Path) -> list[Path]:
    """A ``module:Class`` bot's own files: ``folder/module.py`` or the package ``folder/module/``."""
    top = spec.partition(":")[0].partition(".")[0]
    return [p for p in (folder / f"{top}.py", folder / top) if p.exists()]
