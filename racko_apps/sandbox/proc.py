"""A sandbox's process tree, read from /proc: what a bot started, stopped and killed.

Between its requests an isolated sandbox's processes are stopped, so nothing a bot leaves running
takes CPU from the other bot's turn. Linux only (elsewhere the tree is empty and only the child's
process group is killed).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass
class Tree:
    """Every live process's children and start time (clock ticks since boot)."""

    children: dict[int, list[int]]
    started: dict[int, int]

    def descendants(self, pid: int) -> list[int]:
        """``pid`` and every process below it, parents first."""
        out, todo = [], [pid]
        while todo:
            p = todo.pop()
            out.append(p)
            todo += self.children.get(p, [])
        return out


def read_proc(path: str) -> bytes:
    """A small /proc file's bytes, in one system call (the move loop reads a few per request)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def children(pid: int) -> list[int] | None:
    """``pid``'s children from /proc/PID/task/*/children (None where the kernel has no such file)."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            out += [int(x) for x in read_proc(f"/proc/{pid}/task/{tid}/children").split()]
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue  # the thread ended meanwhile
            return None
        except OSError:
            continue
    return out


def below(pid: int, inits: list[int] | None = None) -> list[int]:
    """Every process below ``pid``'s children (for bwrap: all in the sandbox but its init);
    ``inits``: those children, where the caller knows them already."""
    level: list[int] | None = [pid] if inits is None else inits
    found: list[int] = []
    for depth in range(0 if inits is None else 1, 1 << 16):
        nxt: list[int] = []
        for p in level or []:
            kids = children(p)
            if kids is None:  # no children files here: the whole process table, once
                tree = process_tree()
                return [d for c in tree.children.get(pid, []) for d in tree.descendants(c)[1:]]
            nxt += kids
        if not nxt:
            break
        if depth:
            found += nxt
        level = nxt
    return found


def wait_gone(pids: Iterable[int], timeout: float = 2.0) -> None:
    """Wait (at most ``timeout`` s) until none of ``pids`` is alive (gone, or a zombie)."""
    deadline = time.monotonic() + timeout
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                        break
            except OSError:
                break
            time.sleep(0.005)


def _runs_as(pid: str, uid: int) -> bool:
    """Whether process ``pid`` runs as ``uid`` in any of its user ids (/proc/PID/status, which a
    process cannot hide as it can the owner of /proc/PID)."""
    try:
        for line in read_proc(f"/proc/{pid}/status").splitlines():
            if line.startswith(b"Uid:"):
                return str(uid).encode() in line.split()[1:]
    except OSError:
        pass
    return False


def process_tree(uid: int | None = None) -> Tree:
    """Every live process's children and start time, from /proc (Linux; empty elsewhere);
    with ``uid``, only the processes that run as that user."""
    kids: dict[int, list[int]] = {}
    started: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return Tree(kids, started)
    for name in entries:
        if not name.isdigit() or (uid is not None and not _runs_as(name, uid)):
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == b"Z":
            continue
        kids.setdefault(int(fields[1]), []).append(int(name))
        started[int(name)] = int(fields[19])
    return Tree(kids, started)


def signal_each(pids: Iterable[int], sig: int) -> None:
    """Send ``sig`` to each of ``pids`` that still exists (and may be signalled)."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def kill_started(pid: int, isolated: bool) -> None:
    """Kill every process the bot in sandbox ``pid`` started, not the bot itself: under bwrap
    all in its PID namespace but init and the bot (the earliest); else its descendants."""
    for _ in range(5):  # a process forking while it is killed leaves orphans: look again
        tree = process_tree()
        if isolated:
            init = tree.children.get(pid, [])
            inside = [c for p in init for c in tree.children.get(p, [])]
            keep = set(init) | ({min(inside, key=tree.started.__getitem__)} if inside else set())
            roots = [p for p in inside if p not in keep]
            roots += [c for p in keep - set(init) for c in tree.children.get(p, [])]
        else:
            roots = tree.children.get(pid, [])
        doomed = [d for p in roots for d in tree.descendants(p)]
        if not doomed:
            return
        signal_each(doomed, signal.SIGKILL)
        time.sleep(0.05)


def _kill_all_as(uid: int) -> None:
    """``kill(-1, SIGKILL)`` as ``uid`` from a forked helper: one system call that a fork bomb
    cannot outrun."""
    pid = os.fork()
    if pid == 0:  # the helper: only async-signal-safe calls until it exits
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def kill_uid(uid: int, rounds: int = 20) -> bool:
    """Kill every process that runs as ``uid`` (a bot's own user, which runs nothing else; as
    root); True once none is left."""
    for _ in range(rounds):
        pids = list(process_tree(uid).started)
        if not pids:
            return True
        if os.geteuid() == 0:
            _kill_all_as(uid)
        signal_each(pids, signal.SIGKILL)
        wait_gone(pids, 0.5)
    return not process_tree(uid).started


def kill_sandbox(proc: subprocess.Popen[bytes]) -> None:
    """Kill the sandbox's outer process, its group and all below it; wait until none is alive."""
    inside = process_tree().descendants(proc.pid)[1:] if proc.poll() is None else []
    if proc.returncode is None:  # not reaped yet, so its group id is still its own
        try:  # the whole group: grandchildren the bot started go too (killing bwrap ends
            os.killpg(proc.pid, signal.SIGKILL)  # its PID namespace and all it holds)
        except (ProcessLookupError, PermissionError):
            pass
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    signal_each(inside, signal.SIGKILL)  # those that left the group (setsid) go too
    wait_gone(inside)


def exit_with_parent(parent: int) -> Callable[[], None]:
    """Before exec: die with ``parent`` (the grader or the league), or at once if it died."""

    def arm() -> None:
        set_death_signal()
        if os.getppid() != parent:
            os._exit(1)

    return arm


def set_death_signal() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (PR_SET_PDEATHSIG; no-op elsewhere)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))
    except (OSError, AttributeError):
        pass
