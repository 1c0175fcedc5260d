"""A missing optional dependency is one line naming the extra and the install command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.extras import MissingExtraError, needs_extra, require

ROOT = Path(__file__).resolve().parents[2]


def test_require_returns_an_installed_module() -> None:
    assert require("json", "bots", "reading") is json


def test_a_missing_module_names_the_extra_and_both_install_commands() -> None:
    with pytest.raises(MissingExtraError) as err:
        require("no_such_module_racko.sub", "eval", "ranking bots")
    message = str(err.value)
    assert message == (
        "ranking bots needs no_such_module_racko, which is not installed (the 'eval' extra): "
        "pip install 'racko[eval]' (in a checkout: pip install -e \".[eval]\")"
    )
    assert isinstance(err.value, ImportError)  # callers catching ImportError still do


def test_an_installed_module_with_a_broken_dependency_keeps_its_own_error(tmp_path, monkeypatch):
    (tmp_path / "half_installed_racko.py").write_text("import missing_dependency_racko\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="missing_dependency_racko") as err:
        require("half_installed_racko", "bots", "x")
    assert not isinstance(err.value, MissingExtraError)


def test_needs_extra_wraps_a_block_of_imports() -> None:
    with pytest.raises(MissingExtraError, match=r"the table needs no_such_module_racko, .*'play'"):
        with needs_extra("no_such_module_racko", "play", "the table"):
            import no_such_module_racko  # noqa: F401


def test_importing_the_terminal_table_without_rich_is_one_line() -> None:
    code = "import sys; sys.modules['rich'] = None\nimport racko_apps.play.table\n"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("agents.extras.MissingExtraError: the terminal game needs rich")
    assert "pip install 'racko[play]'" in last
