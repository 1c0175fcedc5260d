"""The ``user`` isolation: each bot runs as an unprivileged user of its own (where bubblewrap
cannot make namespaces, as in many Docker containers, and the grader runs as root).

Weaker than bubblewrap, and every report says so (``USER_WARNING``): the bot shares the machine's
file system and network, and is kept out only by file permissions. What it gets:

* a user id of its own from ``USER_UIDS`` (claimed with a lock file, so that two graders on one
  machine never share one), with no groups and no entry in ``/etc/passwd``;
* resource limits (``setrlimit``): processes, CPU time, file size, open files, no core files
  (address space: the child sets it, as in every backend);
* a private folder, readable by that user only (``0710``, owned by root, of the bot's group):
  its temporary folder (``tmp/``, ``0700``, its own, also its HOME) and a read-only copy of its
  submission (``submission/``, owned by root), so it never needs to read the grader's folders;
* the toolkit's allowed modules from a world-readable staged copy (``toolkit.stage``);
* no environment of the grader's (a fixed, minimal one).

At the end every process of that user is killed (the bot and all it started, even those that left
its process group), its folder removed and the user id released.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import random
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path

from racko_apps.sandbox.bwrap import child_env
from racko_apps.sandbox.proc import kill_uid, process_tree, set_death_signal, signal_each
from racko_apps.sandbox.wire import IsolationUnavailableError, Limits

USER_UIDS = range(60000, 65000)  # the user ids bots run as (skipping any /etc/passwd names)
OPEN_FILES = 256  # RLIMIT_NOFILE of a bot run this way
_LOCKS = Path(tempfile.gettempdir()) / "racko-sandbox-users"


def _closed_folders(path: Path) -> list[Path]:
    """The folders above ``path`` that other users cannot pass through (no ``o+x``)."""
    return [d for d in reversed(path.resolve().parents) if not os.stat(d).st_mode & stat.S_IXOTH]


def _unreadable(path: Path) -> Path | None:
    """The first of ``path`` and the folders above it that other users cannot pass through or
    read (None when they can)."""
    closed = _closed_folders(path)
    if closed:
        return closed[0]
    return None if os.stat(path.resolve()).st_mode & stat.S_IROTH else path


_checked: list[str] = []  # "ok" once the probe passed in this process
GRANTED: list[Path] = []  # folders this process let other users pass through (o+x, not read)


def granted_note() -> str | None:
    """The line a report adds where ``check_user`` opened folders for passage (None if none)."""
    if not GRANTED:
        return None
    names = ", ".join(str(d) for d in GRANTED)
    return (
        f"user isolation: granted other users traversal (x, not read) on {names} to run this Python"
    )


def _grant_traversal(paths: list[str]) -> None:
    """Let other users pass through (``o+x``, never read) exactly the folders above ``paths``
    that lack it, e.g. a root-only ``/root`` holding pyenv's Python: a bot's user must run that
    Python, and passage alone lists nothing in those folders, so files there that are not
    world-readable (the grader's ``0600`` ones) stay closed."""
    for path in paths:
        for folder in _closed_folders(Path(path)):
            mode = os.stat(folder).st_mode
            os.chmod(folder, stat.S_IMODE(mode) | stat.S_IXOTH)
            GRANTED.append(folder)


def check_user() -> None:
    """Raise IsolationUnavailableError unless bots can run as users of their own here: this
    process is root, and its Python (with numpy) runs as another user (probed once per process:
    a Python whose folders others cannot pass through gets ``o+x`` on just those folders, see
    ``_grant_traversal``; one whose files others cannot read, or whose library is found only in
    a private home, is refused)."""
    if not hasattr(os, "setuid") or os.geteuid() != 0:
        raise IsolationUnavailableError(
            "the 'user' isolation runs each bot as a user of its own and needs root; run the "
            "grader as root, or install bubblewrap (apt-get install bubblewrap)"
        )
    if _checked:
        return
    import numpy

    needed = [sys.executable, sysconfig.get_paths()["stdlib"], os.path.dirname(numpy.__file__)]
    _grant_traversal(needed)
    closed = next(filter(None, (_unreadable(Path(p)) for p in needed)), None)
    why = f"{closed} is closed to them" if closed is not None else _probe()
    if why:
        raise IsolationUnavailableError(
            f"the 'user' isolation needs a Python other users can run, and {why}; install "
            "racko in an environment outside a private home (e.g. a venv in /opt)"
        )
    _checked.append("ok")


def _probe() -> str:
    """Why this Python cannot import numpy as a bot's user ("" when it can)."""
    uid, lock = _claim_uid()
    code = "import sys, numpy; print(sys.prefix)"
    try:
        done = subprocess.run(
            [sys.executable, "-P", "-c", code],
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            user=uid,
            group=uid,
            extra_groups=[],
        )
    except (OSError, subprocess.SubprocessError) as err:
        return f"{sys.executable} does not start as user {uid} ({err})"
    finally:
        kill_uid(uid)
        os.close(lock)
    if done.returncode or done.stdout.strip() != sys.prefix:
        tail = (done.stderr.strip().splitlines() or [f"its prefix is {done.stdout.strip()}"])[-1]
        return f"{sys.executable} does not run as user {uid} ({tail})"
    return ""


def user_available() -> bool:
    """Whether ``check_user`` passes."""
    try:
        check_user()
    except IsolationUnavailableError:
        return False
    return True


def _claim_uid() -> tuple[int, int]:
    """A free bot user id and the locked file that holds it (released when closed, or when this
    process dies). Processes an earlier, killed grader left under that id are killed first."""
    _LOCKS.mkdir(mode=0o700, exist_ok=True)
    st = os.lstat(_LOCKS)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o077:
        raise IsolationUnavailableError(f"{_LOCKS} must be a folder of root's, closed to others")
    start = random.randrange(len(USER_UIDS))
    for i in range(len(USER_UIDS)):
        uid = USER_UIDS[(start + i) % len(USER_UIDS)]
        with contextlib.suppress(KeyError):
            pwd.getpwuid(uid)
            continue  # a real user's
        fd = os.open(_LOCKS / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        if kill_uid(uid):
            return uid, fd
        os.close(fd)
    raise IsolationUnavailableError(f"no free user id for a bot in {USER_UIDS}")


def _copy_read_only(source: Path, target: Path) -> None:
    """Copy a submission's file or folder, owned by root and readable by all. A link (one
    inside the submitted folder: the sandbox refuses others, ``submission.outside_link``) is
    copied as a relative link to the copy of its target, never to the original."""
    if source.is_symlink():
        real = os.path.realpath(source)
        os.symlink(os.path.relpath(real, os.path.realpath(source.parent)), target)
        return
    if source.is_dir():
        target.mkdir(mode=0o755)
        for entry in sorted(source.iterdir()):
            _copy_read_only(entry, target / entry.name)
    elif source.is_file():
        shutil.copyfile(source, target)
        os.chmod(target, 0o644)


class UserSandbox:
    """One bot's user, private folder and limits (``open``), until ``close``."""

    def __init__(self, uid: int, lock: int, home: Path) -> None:
        self.uid, self.lock, self.home = uid, lock, home
        self.submission = home / "submission"
        self.tmp = home / "tmp"

    @classmethod
    def open(cls, exposed: list[Path]) -> UserSandbox:
        """Claim a user and make its private folder, with a copy of ``exposed`` (the bot's
        files) in ``submission/``."""
        uid, lock = _claim_uid()
        home = Path(tempfile.mkdtemp(prefix="racko-bot-"))
        try:
            sandbox = cls(uid, lock, home)
            sandbox.submission.mkdir(mode=0o755)
            for path in exposed:
                _copy_read_only(path, sandbox.submission / path.name)
            sandbox.tmp.mkdir(mode=0o700)
            os.chown(sandbox.tmp, uid, uid)
            os.chown(home, 0, uid)
            os.chmod(home, 0o710)  # its group (the bot's alone) may pass, nobody else
        except BaseException:
            shutil.rmtree(home, ignore_errors=True)
            os.close(lock)
            raise
        return sandbox

    def path(self, spec: str, folder: Path) -> str:
        """A bot file's spec (a path in ``folder``) as the path of its copy; others as given."""
        path = Path(spec)
        if path.is_absolute() and folder in path.parents:
            return str(self.submission / path.relative_to(folder))
        return spec

    def env(self, toolkit: Path, jit: Path | None) -> dict[str, str]:
        """The child's whole environment (none of the grader's), its scratch in its own tmp."""
        return child_env(toolkit, jit, tmp=str(self.tmp))

    def preexec(self, limits: Limits, parent: int) -> Callable[[], None]:
        """For the forked child before exec: die with the grader, take the limits, and become
        the bot's user (no groups, no way back to root)."""
        uid = self.uid

        def become() -> None:
            import resource

            set_death_signal()
            if os.getppid() != parent:
                os._exit(1)
            size = limits.memory_mb * 1024 * 1024
            for name, value in (
                ("RLIMIT_NPROC", limits.processes),
                ("RLIMIT_CPU", limits.cpu_seconds),
                ("RLIMIT_FSIZE", size),
                ("RLIMIT_NOFILE", OPEN_FILES),
                ("RLIMIT_CORE", 0),
            ):
                resource.setrlimit(getattr(resource, name), (value, value))
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.umask(0o077)

        return become

    def processes(self) -> list[int]:
        """Every process the bot's user runs."""
        return list(process_tree(self.uid).started)

    def kill_others(self, keep: int) -> None:
        """Kill every process of the bot's user but ``keep`` (the bot's own Python)."""
        for _ in range(5):
            doomed = [p for p in self.processes() if p != keep]
            if not doomed:
                return
            signal_each(doomed, signal.SIGKILL)

    def close(self) -> None:
        """Kill all the user's processes, remove its folder, release its id."""
        if self.lock < 0:
            return
        kill_uid(self.uid)
        shutil.rmtree(self.home, ignore_errors=True)
        os.close(self.lock)
        self.lock = -1
