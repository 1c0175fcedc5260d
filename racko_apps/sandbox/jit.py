"""The compiled planner (numba's cache) for sandboxes: compiled once, copied into each sandbox.

numba compiles the planner of ``expert`` and ``search`` at its first call (seconds of CPU), and
an isolated sandbox starts with an empty /tmp, so each would compile it inside the bot's first
move. Instead a trusted process of the toolkit compiles it once into a private folder
(``jit_cache``); each isolated sandbox is shown that folder read-only and copies it into its own
/tmp before it loads the bot, and a bot that uses the planner loads it while it starts, under
the start limit.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from racko_apps.sandbox.toolkit import toolkit_root

JIT_ENV = "RACKO_JIT_CACHE"  # the warmed folder, inherited by a league's worker processes
JIT_SEED_ENV = "RACKO_JIT_SEED"  # inside a sandbox: where its read-only copy is shown
_jit: dict[str, Path | None] = {}


def _own_private_dir(path: str) -> bool:
    """A folder of this user that nobody else may write (numba's cache holds code)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def jit_cache(create: bool = True) -> Path | None:
    """The folder of the compiled planner, compiled once per process tree by a child of the
    toolkit's own (``create`` false: only one made before); None where there is none."""
    if "dir" in _jit:
        return _jit["dir"]
    inherited = os.environ.get(JIT_ENV, "")
    if inherited and _own_private_dir(inherited):
        _jit["dir"] = Path(inherited)
        return _jit["dir"]
    if not create:
        return None
    folder = tempfile.mkdtemp(prefix="racko-jit-")
    env = dict(os.environ, NUMBA_CACHE_DIR=folder)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (toolkit_root(), env.get("PYTHONPATH")) if p)
    code = "from racko_apps.sandbox.jit import warm_planner as w; w()"
    try:
        done = subprocess.run(
            [sys.executable, "-P", "-c", code], env=env, capture_output=True, timeout=300
        )
        ok = done.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        shutil.rmtree(folder, ignore_errors=True)
        _jit["dir"] = None
        return None
    import atexit

    os.chmod(folder, 0o755)  # readable by the sandboxes of a root grader (they run as nobody)
    atexit.register(shutil.rmtree, folder, True)
    os.environ[JIT_ENV] = folder  # a league's worker processes (spawned) use this one too
    _jit["dir"] = Path(folder)
    return _jit["dir"]


def warm_planner(num_players: int = 2) -> None:
    """Call the compiled planner as ``expert`` and the features do (both phases of a few turns),
    so that numba compiles it into, or loads it from, its cache now."""
    import agents
    from agents.features import rack_features
    from agents.obs import cards
    from racko_env import racko_v1

    env = racko_v1.raw_env(num_players=num_players)
    env.reset(seed=0)
    bot = agents.load("expert", num_players)
    for _ in range(4 * num_players):
        obs = env.observe(env.agent_selection)
        num_cards = int(cards(obs["observation"][None]).num_cards[0])
        rack_features(np.asarray(obs["observation"], dtype=np.float32)[None], num_cards)
        env.step(bot.act(obs))


@contextlib.contextmanager
def no_scipy_for_numba() -> Iterator[None]:
    """While the planner warms up, ``import scipy`` fails (unless the bot imported it already).

    numba's first load imports ``scipy.linalg`` only to see whether ``np.correlate`` may call
    BLAS: about a quarter of a sandbox's start, for a planner without linear algebra. Afterwards
    scipy imports as usual."""
    if "scipy" in sys.modules:
        yield
        return
    sys.modules["scipy"] = None  # type: ignore[assignment] # import raises ImportError
    try:
        yield
    finally:
        if "scipy" in sys.modules and sys.modules["scipy"] is None:
            del sys.modules["scipy"]


def seed_jit_cache() -> None:
    """In an isolated child, before it loads the bot: copy the read-only compiled planner into
    its own numba cache (numba loads only from a folder it may write)."""
    seed, target = os.environ.get(JIT_SEED_ENV), os.environ.get("NUMBA_CACHE_DIR")
    if not seed or not target or not os.path.isdir(seed):
        return
    try:
        for entry in os.scandir(seed):
            if not entry.is_dir(follow_symlinks=False):
                continue
            shutil.copytree(entry.path, os.path.join(target, entry.name), dirs_exist_ok=True)
    except OSError:
        pass  # no cache: the planner compiles in the sandbox, as it would without one
