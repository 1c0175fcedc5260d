"""``racko_env.files``: the project's one atomic writer (every trainer, report and generated file)."""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

from racko_env.files import TMP_PREFIX, write_bytes_atomic, write_text_atomic

ROOT = Path(__file__).resolve().parents[2]


def test_write_atomic_keeps_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    path = tmp_path / "config.yaml"
    path.write_text("old")

    def broken(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(OSError, match="disk full"):
        write_bytes_atomic(path, b"new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]


def test_a_new_file_is_an_ordinary_file_and_a_replaced_one_keeps_its_mode(tmp_path):
    new = write_text_atomic(tmp_path / "sub" / "new.txt", "é\n")
    assert new.read_bytes() == "é\n".encode()
    assert stat.S_IMODE(new.stat().st_mode) == 0o644  # not mkstemp's private 0600
    script = tmp_path / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    write_text_atomic(script, "new")
    assert script.read_text() == "new" and stat.S_IMODE(script.stat().st_mode) == 0o755
    assert not list(tmp_path.rglob(TMP_PREFIX + "*"))


def test_no_other_module_writes_files_by_rename() -> None:
    """One writer: no module of the packages calls ``os.replace`` / ``os.rename`` but this one,
    except to move a whole staged folder into place (checkpoint folders: the run-folder contract,
    ``train/common/runs.py``; the web game's onnxruntime-web cache, ``racko_apps/play/web.py``)."""
    allowed = {"racko_env/files.py", "train/common/runs.py", "racko_apps/play/web.py"}
    hits = []
    for package in ("racko_env", "agents", "racko_eval", "train", "racko_apps"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("replace", "rename")
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "os"
                    and rel not in allowed
                ):
                    hits.append(f"{rel}:{node.lineno}")
    assert hits == []
