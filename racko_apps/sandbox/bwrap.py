"""bubblewrap's command line for an isolated bot (``isolation="bwrap"``, the strongest backend).

The child gets its own PID, network, IPC and UTS namespaces (no network), a read-only view of the
Python environment, of the toolkit's allowed modules and of its own submission only, a private
size-limited ``/tmp``, none of the caller's environment and no capabilities. Killing the
sandbox's outer process kills every process the bot started.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from racko_apps.sandbox.jit import JIT_SEED_ENV
from racko_apps.sandbox.toolkit import TOOLKIT_PACKAGES, toolkit_root
from racko_apps.sandbox.wire import IsolationUnavailableError, Limits

INSTALL_BWRAP = "apt-get install bubblewrap"
# System folders a dynamically linked Python needs (read-only); /etc only for the loader's cache.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")


_isolation_checked: str | None = None


def check_isolation() -> None:
    """Raise IsolationUnavailableError unless ``bwrap`` runs a process in fresh namespaces here
    (probed once per process: a container may forbid namespaces even where bwrap is installed)."""
    global _isolation_checked
    if _isolation_checked == "ok":
        return
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise IsolationUnavailableError(
            "bots run isolated under bubblewrap, which is not installed: "
            f"{INSTALL_BWRAP} (or pass --no-isolation to run them unisolated)"
        )
    probe = [bwrap, *namespace_flags(), *system_binds(), "--", "/bin/true"]
    try:
        out = subprocess.run(probe, capture_output=True, text=True, timeout=60)
        error = out.stderr.strip().splitlines()[-1] if out.returncode else ""
        if out.returncode and not error:
            error = f"exit code {out.returncode}"
    except (OSError, subprocess.TimeoutExpired) as err:
        error = str(err)
    if error:
        raise IsolationUnavailableError(
            f"bots run isolated under bubblewrap, which cannot create namespaces here ({error}); "
            f"{INSTALL_BWRAP} on a system that allows them (or pass --no-isolation)"
        )
    _isolation_checked = "ok"


def isolation_available() -> bool:
    """Whether ``check_isolation`` passes (for tests and docs that need bubblewrap)."""
    try:
        check_isolation()
    except IsolationUnavailableError:
        return False
    return True


def namespace_flags() -> list[str]:
    """The namespaces, /proc, /dev and capabilities of the sandbox."""
    if os.geteuid() == 0:  # no user namespace: it would map root alone, and the bot gives root up
        unshare = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        unshare.append("--unshare-cgroup-try")
    else:  # user (where possible), pid, net, ipc, uts, cgroup (where possible)
        unshare = ["--unshare-all"]
    flags = [
        *unshare,
        "--die-with-parent",
        "--new-session",  # no TIOCSTI into the caller's terminal
        "--clearenv",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    if os.geteuid() == 0:
        # real root keeps capabilities in the sandbox unless told otherwise: drop them all but the
        # two the child needs to become ``nobody`` (sandbox.child) before it loads the bot
        flags += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return flags


def system_binds() -> list[str]:
    """The system folders a dynamically linked Python needs, read-only."""
    args: list[str] = []
    for path in SYSTEM_PATHS + SYSTEM_FILES:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or below it."""
    return path == folder or folder in path.parents


def _python_dirs(folder: Path, root: Path) -> list[Path]:
    """The caller's ``sys.path`` folders and the interpreter's prefixes, but none that holds the
    bot's folder and not a checkout's root (its packages are shown one by one)."""
    python_dirs = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    python_dirs.add(Path(sys.executable).resolve().parent.parent)
    for entry in sys.path:
        if entry and os.path.isabs(entry):
            python_dirs.add(Path(entry))
    out: list[Path] = []
    for path in sorted(python_dirs):
        resolved = path.resolve() if path.exists() else path
        if inside(folder, resolved) or inside(folder, path):
            continue
        if resolved == root and root.name not in ("site-packages", "dist-packages"):
            continue  # a checkout: only its packages are shown
        if any(str(path).startswith(s) for s in SYSTEM_PATHS):
            continue
        out.append(path)
    return out


def child_env(root: Path, jit: Path | None, tmp: str = "/tmp") -> dict[str, str]:
    """The whole environment of an isolated child, none of the caller's; ``tmp``: its scratch."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": tmp,
        "TMPDIR": tmp,
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(root),
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLCONFIGDIR": tmp,
        "NUMBA_CACHE_DIR": tmp,
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    if jit is not None:
        env[JIT_SEED_ENV] = str(jit)
    return env


def isolation_argv(
    command: list[str],
    folder: Path,
    exposed: list[Path],
    limits: Limits,
    jit: Path | None = None,
    toolkit: Path | None = None,
) -> list[str]:
    """The ``bwrap`` command line that runs ``command`` isolated (module docstring).

    Only ``exposed`` is visible in the bot's ``folder``. ``toolkit``: a staged copy of the allowed
    modules (``toolkit.stage``) shown where the toolkit's packages are (None: those whole).
    ``jit``: the compiled planner's folder, shown read-only for the child to copy.
    """
    bwrap = shutil.which("bwrap") or "bwrap"
    args = [bwrap, *namespace_flags(), *system_binds()]
    # a private /tmp first, so that binds below it (a venv in /tmp, the bot's folder) stay visible
    args += ["--perms", "1777", "--size", str(limits.memory_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    # /dev is bwrap's own memory-backed tmpfs: read-only, with a small /dev/shm, so a bot cannot
    # fill the machine's memory there either
    shm = str(min(limits.memory_mb, 64) * 1024 * 1024)
    args += ["--perms", "1777", "--size", shm, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    root = Path(toolkit_root())
    shown: list[Path] = []
    made: set[Path] = {Path("/"), Path("/tmp")}

    def parents(path: Path) -> None:
        """Create the folders above ``path`` readable by all (bwrap makes them 0700, and the bot
        of a root grader runs as nobody), unless a bind above already shows them."""
        for above in reversed(path.parents):
            if above in made or any(inside(above, s) for s in shown):
                continue
            made.add(above)
            args.extend(["--perms", "0755", "--dir", str(above)])

    def bind(path: Path, source: Path | None = None) -> None:
        if not (source or path).exists() or any(inside(path, s) for s in shown):
            return
        parents(path)
        shown.append(path)
        args.extend(["--ro-bind", str(source or path), str(path)])

    for path in _python_dirs(folder, root):
        bind(path)
    for name in TOOLKIT_PACKAGES:
        if toolkit is None:
            bind(root / name)
        elif any(inside(root / name, s) for s in shown):  # installed: the staged copy over it
            args += ["--ro-bind", str(toolkit / name), str(root / name)]
        else:
            bind(root / name, toolkit / name)
    if jit is not None:
        bind(jit)
    # the bot's folder: an empty read-only tmpfs holding only its submission (even where the
    # folder lies under /tmp, which the private /tmp above would otherwise make writable)
    parents(folder)
    args += ["--perms", "0755", "--tmpfs", str(folder)]
    shown.append(folder)
    for path in exposed:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--remount-ro", str(folder), "--chdir", str(folder)]
    for key, value in child_env(root, jit).items():
        args += ["--setenv", key, value]
    return [*args, "--", *command]
