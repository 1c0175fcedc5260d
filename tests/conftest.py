"""Shared test setup: one torch thread (2-core machines collapse under load otherwise), and every
test folder on ``sys.path``, so a test may import a helper from a test file of another folder
(``from test_vector_engine import RecordingChance``) however it is run. Test file names are
therefore unique across folders (``tests/test_layers.py`` checks it).
"""

import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path[1:1] = [str(d) for d in sorted(TESTS.iterdir()) if d.is_dir() and any(d.glob("test_*.py"))]

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the environment tests need no torch
    pass


import pytest  # noqa: E402


@pytest.fixture
def assert_plays_legally():
    """Check that a bot, in the learner's seat of ``racko/Racko-v1``, only plays legal actions."""

    def check(bot, num_players: int, opponents: list, steps: int, seed: int) -> None:
        from racko_env.gym_env import RackoGymEnv

        env = RackoGymEnv(num_players=num_players, opponents=opponents)
        obs, _ = env.reset(seed=seed)
        for _ in range(steps):
            mask = env.action_masks()
            action = bot.act({"observation": obs, "action_mask": mask})
            assert mask[action], (action, mask)
            obs, _, term, trunc, _ = env.step(action)
            if term or trunc:
                obs, _ = env.reset()

    return check


WALL_CLOCK = ("minutes", "eval_minutes")  # eval_history.json's keys that differ between runs


@pytest.fixture
def eval_rows():
    """A run's eval_history.json without its wall-clock minutes (which differ between runs)."""
    import json

    def rows(run_dir) -> list[dict]:
        data = json.loads((run_dir / "eval_history.json").read_text())
        return [{k: v for k, v in row.items() if k not in WALL_CLOCK} for row in data]

    return rows


def require_or_skip(available: bool, what: str, command: str) -> None:
    """Skip a test that needs ``what`` (naming the ``command`` that provides it), or fail it where
    ``RACKO_REQUIRE_ALL=1`` (CI, ``.ci/run``): there nothing may be skipped silently."""
    if available:
        return
    message = f"needs {what}: {command}"
    if os.environ.get("RACKO_REQUIRE_ALL") == "1":
        pytest.fail(f"{message} (RACKO_REQUIRE_ALL=1: nothing is skipped in CI)")
    pytest.skip(message)


def tool_hidden(name: str) -> bool:
    """Whether ``RACKO_HIDE_TOOLS`` (comma-separated names) hides the tool ``name``. CI reruns the
    tests of the tools pip cannot install with them hidden, to keep their skips honest (``.ci/run``):
    a tool found on PATH is hidden there by PATH itself, one found at a fixed path
    (``/usr/bin/chromium``) by this setting."""
    return name in os.environ.get("RACKO_HIDE_TOOLS", "").split(",")


@pytest.fixture(scope="session")
def hidden():
    """``tool_hidden`` for test modules."""
    return tool_hidden


@pytest.fixture(scope="session")
def require():
    """``require_or_skip`` for test modules (conftest is not importable as a module)."""
    return require_or_skip


@pytest.fixture
def isolation():
    """bubblewrap can isolate bots here (else skip naming its install, or fail in CI)."""
    from racko_apps.sandbox.bwrap import INSTALL_BWRAP, isolation_available

    require_or_skip(
        isolation_available(), "bubblewrap (bwrap) able to create namespaces", INSTALL_BWRAP
    )
    return True


def venv_with_our_packages(target: Path) -> Path:
    """A fresh venv at ``target`` that sees the packages this interpreter sees, as its python.

    ``--system-site-packages`` would show the base interpreter's packages, which inside a venv
    are not ours (the third-party dependencies live in the venv), so a ``pip install
    --no-index`` there finds nothing. A ``.pth`` of plain paths instead names this
    interpreter's site folders. Plain paths, because ``.pth`` files inside those folders are
    then not run: an editable install of this checkout stays out, and only what the child
    installs itself provides racko."""
    import site
    import subprocess
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True, timeout=300)
    python = target / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    paths = sysconfig.get_paths()
    folders = [*site.getsitepackages(), paths["purelib"], paths["platlib"]]
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    query = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    own = subprocess.run([python, "-c", query], capture_output=True, text=True, check=True)
    lines = "".join(f"{f}\n" for f in dict.fromkeys(folders) if os.path.isdir(f))
    (Path(own.stdout.strip()) / "_racko_test_parent.pth").write_text(lines)
    return python


@pytest.fixture(scope="session")
def fresh_venv():
    """``venv_with_our_packages`` for test modules."""
    return venv_with_our_packages


@pytest.fixture(scope="session")
def can_isolate() -> bool:
    """Whether bots can run isolated here: tests of the grader's and the league's logic run
    isolated where bubblewrap works and unisolated elsewhere (isolation itself has its own tests)."""
    from racko_apps.sandbox.bwrap import isolation_available

    return isolation_available() or os.environ.get("RACKO_REQUIRE_ALL") == "1"


def pytest_collection_modifyitems(config, items):
    """The slow tests first (in their order), then the others: pytest-xdist hands tests out in
    this order, so the full suite does not end with one core on a long test and the other idle.
    The quick subset (``-m "not slow"``) is unchanged."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
