"""Subprocess tests wait for events, with timeouts that only catch a hang.

A test that gives a child process 30 s fails on a machine at load 6 while the code is fine. This
checks the subprocess tests of the env, bots and terminal game: every ``timeout=`` is at least
``MIN_TIMEOUT`` seconds, and none polls the wall clock against a deadline.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MIN_TIMEOUT = 300
CHECKED = [
    "tests/apps/test_play.py",
    "tests/env/test_package.py",
    "tests/test_layers.py",
    "tests/agents/test_onnx_bot.py",
    "tests/test_patience.py",
    "tests/agents/test_extras.py",
]
CLOCKS = {"time", "monotonic", "perf_counter"}


def short_timeouts(source: str) -> list[str]:
    """``timeout=`` values under ``MIN_TIMEOUT`` (literals, or names bound to literals at module
    level) and wall-clock reads, as ``line: text``."""
    tree = ast.parse(source)
    constants = {
        t.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "timeout":
            value = node.value
            seconds = (
                value.value
                if isinstance(value, ast.Constant)
                else constants.get(value.id)
                if isinstance(value, ast.Name)
                else None
            )
            if not isinstance(seconds, int | float) or seconds < MIN_TIMEOUT:
                found.append(f"{node.value.lineno}: timeout={ast.unparse(value)}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in CLOCKS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "time"
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", CHECKED)
def test_subprocess_tests_wait_for_events_not_the_clock(path: str) -> None:
    assert short_timeouts((ROOT / path).read_text()) == []


def test_the_check_sees_short_timeouts_and_deadlines() -> None:
    source = (
        "import time\nLIMIT = 30\n"
        "child = spawn('x', timeout=LIMIT)\nrun('x', timeout=120)\nrun('y', timeout=600)\n"
        "deadline = time.time() + 5\n"
    )
    assert short_timeouts(source) == [
        "3: timeout=LIMIT",
        "4: timeout=120",
        "6: time.time()",
    ]
