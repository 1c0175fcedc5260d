"""What a submission is: the files of a bot that the sandbox shows it (and nothing else of its
folder), within a size cap.

A submission is one of (docs/coursework/submissions.md):

* a module ``NAME.py`` (spec ``NAME:Bot`` or ``NAME:act``);
* a package ``NAME/`` with ``NAME/__init__.py`` (spec ``NAME:Bot``), holding its own modules and
  data files (weights as ``.npz``, ``.npy``, ``.onnx``, ``.json``), read relative to
  ``__file__``;
* an exported bot file ``NAME.onnx`` with its manifest ``NAME.json``.

Inside the sandbox the submission is read-only. Its files together may hold at most
``MAX_SUBMISSION_MB`` megabytes (links are not followed, and not counted). A submission is
never itself a link, and a link inside a submitted folder must point inside that folder
(``outside_link``): a link to the grades, the teacher's secret or another student's folder is
refused in one line naming it, wherever a submission is read (the league's and Gradescope's
scan, and every sandbox, which shows or copies the files).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

MAX_SUBMISSION_MB = 50
SAFE = re.compile(r"[A-Za-z0-9_.-]+")  # the alphabet of a label (racko_apps.league.submissions)
DATA_SUFFIXES = (".npz", ".npy", ".onnx", ".json")  # the weights a package may carry


def submission_paths(spec: str, folder: Path) -> list[Path]:
    """A ``module:Class`` bot's own files: ``folder/module.py`` or the package ``folder/module/``."""
    top = spec.partition(":")[0].partition(".")[0]
    return [p for p in (folder / f"{top}.py", folder / top) if p.exists()]


def shown(name: str) -> str:
    """``name`` with every character outside the safe alphabet written as an escape (``\\x0a``,
    ``\\x7c``...): one line that adds no cell, row, tag or heading wherever it is printed."""
    out = []
    for char in name[:200]:
        if SAFE.fullmatch(char):
            out.append(char)
        else:
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(out) + ("..." if len(name) > 200 else "")


def _path_shown(path: str) -> str:
    """A path as ``shown`` writes each of its parts, the slashes kept."""
    return "/".join(shown(part) for part in path.split("/"))


def _link_line(link: Path, shown_as: str, why: str) -> str:
    target = _path_shown(os.readlink(link))
    return f"{_path_shown(shown_as)} is a link to {target}, {why}; submit the files themselves"


def outside_link(paths: list[Path]) -> str | None:
    """Why a submission of ``paths`` is refused for a link (one line naming it), or None.

    Each path must not be a link itself (a submission ``bot.py`` linked to another student's
    file, or to the grades, would be read, hashed and shown as the student's own). Inside a
    submitted folder a link may point only inside that folder, its target resolved as the
    system would (links to links, to folders, ``..`` and absolute targets all followed), and
    the folder is walked without following links, so nested ones are checked too.
    """
    for path in paths:
        if path.is_symlink():
            return _link_line(path, path.name, "not a file of the submission")
        if not path.is_dir():
            continue
        root = os.path.realpath(path)
        for here, dirs, files in os.walk(path):  # links to folders are listed, not entered
            for name in sorted(dirs + files):
                entry = Path(here, name)
                if not entry.is_symlink():
                    continue
                target = os.path.realpath(entry)
                if os.path.commonpath([root, target]) != root:
                    where = f"{path.name}/{entry.relative_to(path).as_posix()}"
                    return _link_line(entry, where, "outside the submitted folder")
    return None


def refused(paths: list[Path], cap_mb: float = MAX_SUBMISSION_MB) -> str | None:
    """Why a submission of ``paths`` is refused (a link out of it, ``outside_link``; its size,
    ``oversize``), one line; None when it may be played."""
    return outside_link(paths) or oversize(paths, cap_mb)


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
