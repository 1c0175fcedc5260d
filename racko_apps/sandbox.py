"""Play an untrusted bot from its own process: ``SandboxedBot`` (used by grade and league).

A student's ``module:Class`` bot, or their exported bot file (``NAME.onnx``: a graph can loop
for ever or ask for 64 GiB as surely as code can), is loaded and run in a child Python process,
never in the grader's or the league's, so that nothing it does (an exception, an endless loop, a
gigabyte of ``print``, a memory leak, ``sys.exit``) can stop or corrupt the caller. The parent and the child
speak a JSON-lines protocol over pipes, one request and one reply per line; nothing is ever
unpickled from the child, since the child runs code the parent must not trust. The child:

* sees only what its seat may see: each ``act`` request carries the observation vector and the
  action mask, nothing else (no engine, no other seat, no seed of the deal);
* runs under ``resource.setrlimit(RLIMIT_AS)`` (the memory limit, where the system supports it:
  Linux does) and answers each request within a time limit, and all the requests of one round
  within its clock (``Limits.round_seconds``), both measured by the parent as the wall time the
  bot is given: a child that does not answer in time is killed;
* has its ``print`` output counted, not passed on: more than ``Limits.output_chars`` characters in
  one call is a failure (so a bot cannot flood the report), and the protocol channel is a private
  copy of the child's stdout, so what the bot writes to file descriptor 1 cannot pose as a reply.

Any way the bot breaks raises ``BotFailureError`` with a one-line reason; the child is then killed and
a fresh one is started on the next request, so one bad round does not spoil the next.

With ``isolate=True`` (what ``racko grade`` and ``racko league`` use unless told
``--no-isolation``) the child runs under bubblewrap (``bwrap``, Debian package ``bubblewrap``), an
existing, well-kept sandbox (see ``isolation_argv``): its own PID, network, IPC and UTS namespaces
(no network at all), a read-only view of the Python environment, of the toolkit's packages and of
its own submission only (its module file or package: not its siblings, not the league's database
or reports, not the user's home), a private size-limited ``/tmp``, no environment variables of the
caller and no capabilities (started by root, the child becomes ``nobody`` before it loads the bot,
so that ``Limits.processes`` holds a fork bomb). Between its requests every process in its sandbox
is stopped (SIGSTOP), so nothing it leaves running takes CPU from the other bot's turn. Killing the
sandbox's outer process kills the namespace's init and so every process the bot started
(``end_game`` kills them between games while the bot plays on). Without ``isolate`` the child runs
with the user's own file and network permissions: a guard against mistakes, not against malice.
docs/coursework.md says what is and is not isolated.
"""

from __future__ import annotations

import binascii
import contextlib
import json
import operator
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Bot

MAX_LINE = 1 << 16  # bytes in one reply line; a longer line is garbage, not a reply
# A bot's clock per round, by default: the slowest shipped bot (``search``) uses about 1-3 s of a
# 2-player round and about 6 s of a 4-player one on a busy 2-core machine (docs/coursework.md).
DEFAULT_ROUND_SECONDS = 30.0


OBS_DTYPE, MASK_DTYPE = np.dtype("<f4"), np.dtype("i1")  # an act request's arrays, as bytes


def _pack(values: Any, dtype: np.dtype) -> str:
    """An array as the base64 of its bytes in ``dtype`` (one JSON string)."""
    data = np.ascontiguousarray(values, dtype=dtype).tobytes()
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def act_request(observation: Mapping[str, Any], **fields: Any) -> dict[str, Any]:
    """An ``act`` request for ``observation``: its arrays' bytes, base64 in the JSON line (exact,
    and a tenth of the cost of a list of floats to write and to read back; the protocol's cost
    is per move). ``fields``: more of the request (a table's number)."""
    return {
        **fields,
        "cmd": "act",
        "observation": _pack(observation["observation"], OBS_DTYPE),
        "action_mask": _pack(observation["action_mask"], MASK_DTYPE),
    }


def _reply_action(reply: Mapping[str, Any]) -> tuple[int | None, str]:
    """An act reply's action, or None and why it is not one."""
    action = reply.get("action")
    if isinstance(action, bool) or not isinstance(action, int):
        return None, f"returned {reply.get('shown') or repr(action)}, not an action id"
    return action, ""


def _unpack(text: str, dtype: np.dtype) -> np.ndarray:
    """``_pack``'s array back (a writable copy: a bot may change what it is given)."""
    data = binascii.a2b_base64(text, strict_mode=True)  # base64's alphabet only, or an error
    return np.frombuffer(bytearray(data), dtype=dtype)


class BotFailureError(RuntimeError):
    """A sandboxed bot broke. ``kind`` is one of: start, crash, timeout, illegal, garbage,
    output, memory, exited, clock; ``str()`` is a one-line reason naming the bot."""

    def __init__(self, bot: str, kind: str, reason: str) -> None:
        super().__init__(f"{bot}: {reason}")
        self.bot = bot
        self.kind = kind
        self.reason = reason


@dataclass(frozen=True)
class Limits:
    """What a sandboxed bot may use.

    move_seconds: wall-clock seconds to answer one request (act, reset, seed), IPC included.
    round_seconds: the bot's clock: wall-clock seconds it may use over one round, all its
      requests together (IPC included), from the ``reset`` (or ``seed``) that starts the round.
      The move limit alone lets a bot that is slow on purpose (just under it on every move)
      stretch one round to minutes; the clock bounds what a round of it costs everyone.
    memory_mb: the child's address-space limit (RLIMIT_AS), toolkit imports included.
    output_chars: characters the bot may print during one request.
    processes: processes the bot may run at once (RLIMIT_NPROC; counted per sandbox where
      bubblewrap makes a user namespace, per user otherwise; root is exempt, and there the
      time limit and the PID namespace end a fork bomb).
    start_seconds: to start Python, import the toolkit and construct the bot (generous: a loaded
      machine starts Python slowly, and that is not the bot's fault).
    """

    move_seconds: float = 1.0
    round_seconds: float = DEFAULT_ROUND_SECONDS
    memory_mb: int = 1024
    output_chars: int = 100_000
    start_seconds: float = 60.0
    processes: int = 256

    def __post_init__(self) -> None:
        for name in ("move_seconds", "round_seconds", "start_seconds"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        for name in ("memory_mb", "output_chars", "processes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _toolkit_root() -> str:
    """The folder the toolkit's packages are imported from, for the child's PYTHONPATH."""
    return str(Path(__file__).resolve().parents[1])


# ---------------------------------------------------------------------- isolation (bubblewrap)

INSTALL_BWRAP = "apt-get install bubblewrap"
# What every report of a grade or league run with --no-isolation says at its top.
NOT_ISOLATED = (
    "WARNING: the bots were not isolated (--no-isolation): a submission could read or change "
    "anything the user can, other submissions and the results included; install bubblewrap "
    f"({INSTALL_BWRAP}) and run again"
)
# The toolkit's own packages, shown to the bot (each read-only); the rest of a checkout is not.
TOOLKIT_PACKAGES = ("agents", "racko_env", "racko_apps", "racko_eval", "train")
# System folders a dynamically linked Python needs (read-only); /etc only for the loader's cache.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")


class IsolationUnavailableError(RuntimeError):
    """bubblewrap is missing or cannot create namespaces here; ``str()`` is one line saying how to
    install it and that ``--no-isolation`` is the (explicit) alternative."""


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
    probe = [bwrap, *_namespace_flags(), *_system_binds(), "--", "/bin/true"]
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


def _namespace_flags() -> list[str]:
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
        # two the child needs to become ``nobody`` (_become_nobody) before it loads the bot
        flags += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return flags


NOBODY = 65534  # the uid and gid an isolated bot of a root grader runs as


def _become_nobody() -> None:
    """In an isolated child started by root: give up root (and with it the last capabilities),
    so that RLIMIT_NPROC holds (root is exempt from it) and nothing is owned by the bot."""
    if os.getuid() != 0:
        return
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _system_binds() -> list[str]:
    args: list[str] = []
    for path in SYSTEM_PATHS + SYSTEM_FILES:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args


def _exit_with_parent(parent: int) -> Callable[[], None]:
    """For the forked child before exec (bwrap): be killed when the grader or league (``parent``)
    dies, so that a league killed with kill -9 takes every sandbox (and every process in it)
    along. A parent that died between the fork and the request has no death left to signal:
    the child then exits at once."""

    def arm() -> None:
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:
            os._exit(1)

    return arm


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def submission_paths(spec: str, folder: Path) -> list[Path]:
    """A ``module:Class`` bot's own files: ``folder/module.py`` or the package ``folder/module/``."""
    top = spec.partition(":")[0].partition(".")[0]
    return [p for p in (folder / f"{top}.py", folder / top) if p.exists()]


def isolation_argv(
    command: list[str], folder: Path, exposed: list[Path], limits: Limits, jit: Path | None = None
) -> list[str]:
    """The ``bwrap`` command line that runs ``command`` isolated (see the module docstring).

    ``folder`` is the bot's working folder; only ``exposed`` (its submission) is visible there.
    The Python environment is every folder on the caller's ``sys.path`` and the interpreter's
    prefixes, except those that hold the bot's folder (a checkout or a folder of submissions is
    never shown whole; the toolkit's own packages are bound one by one instead). ``jit``, the
    compiled planner's folder (``jit_cache``), is shown read-only, for the child to copy.
    """
    bwrap = shutil.which("bwrap") or "bwrap"
    args = [bwrap, *_namespace_flags(), *_system_binds()]
    # a private /tmp first, so that binds below it (a venv in /tmp, the bot's folder) stay visible
    args += ["--perms", "1777", "--size", str(limits.memory_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    # /dev is bwrap's own memory-backed tmpfs: read-only, with a small /dev/shm, so a bot cannot
    # fill the machine's memory there either
    shm = str(min(limits.memory_mb, 64) * 1024 * 1024)
    args += ["--perms", "1777", "--size", shm, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    root = Path(_toolkit_root())
    shown: list[Path] = []
    made: set[Path] = {Path("/"), Path("/tmp")}

    def parents(path: Path) -> None:
        """Create the folders above ``path`` readable by all (bwrap makes them 0700, and the bot
        of a root grader runs as nobody), unless a bind above already shows them."""
        nonlocal args
        for above in reversed(path.parents):
            if above in made or any(_inside(above, s) for s in shown):
                continue
            made.add(above)
            args += ["--perms", "0755", "--dir", str(above)]

    def bind(path: Path) -> None:
        nonlocal args
        if not path.exists() or any(_inside(path, s) for s in shown):
            return
        parents(path)
        shown.append(path)
        args += ["--ro-bind", str(path), str(path)]

    python_dirs = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    python_dirs.add(Path(sys.executable).resolve().parent.parent)
    for entry in sys.path:
        if entry and os.path.isabs(entry):
            python_dirs.add(Path(entry))
    for path in sorted(python_dirs):
        resolved = path.resolve() if path.exists() else path
        if _inside(folder, resolved) or _inside(folder, path):
            continue
        if resolved == root and root.name not in ("site-packages", "dist-packages"):
            continue  # a checkout: only its packages are shown (below)
        if any(str(path).startswith(s) for s in SYSTEM_PATHS):
            continue
        bind(path)
    for name in TOOLKIT_PACKAGES:
        bind(root / name)
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
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(root),
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLCONFIGDIR": "/tmp",
        "NUMBA_CACHE_DIR": "/tmp",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    if jit is not None:
        env[JIT_SEED_ENV] = str(jit)
    for key, value in env.items():
        args += ["--setenv", key, value]
    return [*args, "--", *command]


# ---------------------------------------------------------------------- the compiled planner

# The planner of ``expert`` and ``search`` (agents.features) is compiled by numba at its first
# call (seconds of CPU: docs/coursework.md), and an isolated sandbox's private /tmp starts empty:
# without a cache every sandbox compiled it again, inside the bot's first move (past the move
# limit on a busy machine, so a student's bot built on ``expert`` forfeited rounds), and a league
# paid it twice per pairing. So a league (each of its processes) has a process of the toolkit
# (trusted: it runs none of the bots' code) compile it once into a private folder (``jit_cache``),
# each isolated sandbox is shown that folder read-only and copies it into its own /tmp before it
# loads the bot (a bot can change only its own copy); and a bot that uses the planner has it
# loaded (or, without that folder, as in a grade's one sandbox, compiled) while it starts, under
# the start limit, not on its first move's clock.
JIT_ENV = "RACKO_JIT_CACHE"  # the warmed folder, inherited by a league's worker processes
JIT_SEED_ENV = "RACKO_JIT_SEED"  # inside a sandbox: where its read-only copy is shown
PLANNER_MODULES = ("agents.expert", "agents.search", "agents.batched", "agents.features")
_jit: dict[str, Path | None] = {}


def _own_private_dir(path: str) -> bool:
    """A folder of this user that nobody else may write (one inherited through the environment
    is trusted only then: numba's cache holds code)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    import stat

    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def jit_cache(create: bool = True) -> Path | None:
    """The folder of the compiled planner (numba's cache), compiled once per process tree by a
    child of the toolkit's own (unless ``create`` is false: then only one made before, here or by
    the process that started this one); None where there is none (each sandbox then compiles)."""
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
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_toolkit_root(), env.get("PYTHONPATH")) if p)
    command = [sys.executable, "-P", "-c", "from racko_apps.sandbox import warm_planner as w; w()"]
    try:
        done = subprocess.run(command, env=env, capture_output=True, timeout=300)
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
def _no_scipy_for_numba() -> Iterator[None]:
    """While the planner warms up, ``import scipy`` fails (unless the bot imported it already).

    numba's first compile or cache load imports all its typing registries, and one of them
    imports ``scipy.linalg`` only to see whether ``np.correlate`` may call BLAS: about a quarter
    of a sandbox's start, paid twice per league pairing, for a planner that uses no linear
    algebra. Afterwards scipy imports as usual, and numba's ``np.dot`` and ``np.linalg`` find it
    (they look when they are first compiled); only ``np.correlate`` and ``np.convolve`` in a
    bot's own numba code keep numba's loop without BLAS (docs/coursework.md)."""
    if "scipy" in sys.modules:
        yield
        return
    sys.modules["scipy"] = None  # type: ignore[assignment] # import raises ImportError
    try:
        yield
    finally:
        if "scipy" in sys.modules and sys.modules["scipy"] is None:
            del sys.modules["scipy"]


def _seed_jit_cache() -> None:
    """In an isolated child, as the user the bot runs as, before it loads the bot: copy the
    read-only compiled planner into its own numba cache folder (numba loads only from a folder
    it may write)."""
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


class SandboxedBot(Bot):
    """A ``module:Class`` bot played from a child process (see the module docstring).

    ``folder`` is where the bot's module lives (the child starts there and appends it to the end
    of its ``sys.path``, so the bot's own helper modules import but never shadow the toolkit).
    ``label`` names the bot in every failure message. ``last_seconds`` is the time the bot itself
    spent in its last ``act`` (measured in the child, without the pipe's round trip).
    ``isolate`` runs the child under bubblewrap (module docstring), showing it only ``exposed``
    of ``folder`` (default: its module file or package, ``submission_paths``).
    """

    # A game record (racko_eval.records) asks no explain() of it: explaining would mean another
    # sandbox and another run of the student's code outside the move's clock.
    explain_in_records = False
    # Load the compiled planner when the bot uses it, at the start, not on its first move (False:
    # a league's load check, which asks only whether the bot constructs, and plays no move)
    warm = True

    def __init__(
        self,
        spec: str,
        folder: str | Path,
        num_players: int = 2,
        *,
        label: str | None = None,
        limits: Limits | None = None,
        seed: int | None = None,
        isolate: bool = False,
        exposed: list[Path] | None = None,
        tables: int = 1,
        **rules_options: Any,
    ) -> None:
        if not isinstance(tables, int) or isinstance(tables, bool) or tables < 1:
            raise ValueError(f"tables must be a positive integer, got {tables!r}")
        self.spec = spec
        self.tables = tables
        self.folder = Path(folder).resolve()
        self.isolate = isolate
        self.exposed = exposed
        self._stopped: list[int] = []  # the sandbox's processes stopped after the last request
        self._inits: list[int] = []  # bwrap's init (the outer bwrap's one child), once known
        self.num_players = num_players
        self.rules = dict(rules_options)
        self.limits = limits or Limits()
        self.name = label or spec
        self.last_seconds = 0.0
        self._seed = seed
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = b""
        self.clock_left = self.limits.round_seconds  # seconds left of this round's clock
        self.table_clocks = [self.limits.round_seconds] * tables  # the same, table by table

    # ------------------------------------------------------------------ the Bot interface

    def start(self) -> None:
        """Start the child and construct the bot there; raise BotFailureError if it cannot."""
        if self._proc is not None:
            return
        self.clock_left = self.limits.round_seconds  # a fresh process: a failure ended the round
        self.table_clocks = [self.limits.round_seconds] * self.tables
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (_toolkit_root(), env.get("PYTHONPATH", "")) if p
        )
        env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        # -P: the child's cwd (the bot's folder) is not put first on sys.path, so a student's
        # agents.py or numpy.py there cannot replace the toolkit.
        command = [sys.executable, "-P", "-c", "from racko_apps.sandbox import _child; _child()"]
        if self.isolate:
            check_isolation()
            exposed = self.exposed
            if exposed is None:
                exposed = submission_paths(self.spec, self.folder)
            jit = jit_cache(create=False)  # a league's (racko_apps.league_pool)
            command = isolation_argv(command, self.folder, exposed, self.limits, jit)
        self._errors = tempfile.TemporaryFile()
        self._buf = b""
        self._stopped = []
        self._inits = []
        # its own session: close() ends the child's whole process group (unisolated bots; an
        # isolated one's processes all end with its PID namespace)
        self._proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            cwd=self.folder,
            env=env,
            start_new_session=True,
            preexec_fn=_exit_with_parent(os.getpid()) if self.isolate else None,
        )
        request = {
            "cmd": "init",
            "spec": self.spec,
            "folder": str(self.folder),
            "num_players": self.num_players,
            "rules": self.rules,
            "seed": self._seed,
            "memory_mb": self.limits.memory_mb,
            "output_chars": self.limits.output_chars,
            "processes": self.limits.processes if self.isolate else None,
            "tables": self.tables,
            "warm": self.warm,
        }
        reply = self._request(request, self.limits.start_seconds, starting=True)
        built = reply.get("tables", 1)
        if isinstance(built, int) and not isinstance(built, bool) and 1 <= built < self.tables:
            self.tables = built  # the bot objects it could build under its memory limit
            del self.table_clocks[built:]

    def reset(self) -> None:
        """A new round: the clock is wound up again (the reset itself is on it)."""
        self.start()
        self.clock_left = self.limits.round_seconds
        self._request({"cmd": "reset"}, self.limits.move_seconds)

    def seed(self, seed: int | None) -> None:
        """A new deal (the harness seeds before each): the clock is wound up again."""
        self._seed = seed
        self.start()
        self.clock_left = self.limits.round_seconds
        self._request({"cmd": "seed", "seed": seed}, self.limits.move_seconds)

    def act(self, observation: Mapping[str, Any]) -> int:
        self.start()
        reply = self._request(act_request(observation), self.limits.move_seconds)
        self.last_seconds = float(reply.get("seconds", 0.0))
        action, why = _reply_action(reply)
        if action is None:
            self._fail("illegal", why)
        return int(action)

    def explain(self, observation: Mapping[str, Any]) -> str:
        return f"{self.name} (sandboxed) would play action {self.act(observation)}"

    def play_tables(self, items: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
        """Requests to several tables' bots (``TableBot.request``: seeds and resets, then at most
        one move per table) sent in one line; per table, its last reply: ``{"action": a}`` or,
        where its bot failed, ``{"kind": k, "reason": r}`` (that table's round is lost; the child
        replaces its bot with a fresh one, as a failed process is replaced by a fresh process).

        The child answers each request on a line of its own as soon as it has it, and each
        answer is timed here as one request at a time would be: within the move limit and
        within what is left of its table's clock, measured from the answer before (the first
        from the request). A child that overruns either is killed and BotFailureError raised,
        with the same reason as one request at a time: every table loses its round then."""
        self.start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        move, clocks = self.limits.move_seconds, self.table_clocks
        self._signal_all(signal.SIGCONT)  # its turn: everything it runs may run
        try:
            proc.stdin.write(json.dumps({"cmd": "tables", "items": items}).encode() + b"\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._fail(*self._exit_reason(False))
        out: dict[int, dict[str, Any]] = {}
        began = time.monotonic()
        for item in items:
            table = item["table"]
            if item["cmd"] in ("seed", "reset"):  # a new round: its clock is wound up again
                clocks[table] = self.limits.round_seconds
            line = self._read_line(min(move, clocks[table]), False, move)
            now = time.monotonic()
            clocks[table] -= now - began
            began = now
            reply = self._parse(line)
            if reply.get("table") != table:  # the child itself failed (memory, an exit)
                kind = str(reply.get("kind", "crash")) if not reply["ok"] else "garbage"
                self._fail(kind, str(reply.get("error", "answered another table's request")))
            if "kind" in out.get(table, {}):
                continue  # its round is lost already
            if not reply["ok"]:
                out[table] = {"kind": str(reply.get("kind")), "reason": str(reply.get("error"))}
            elif item["cmd"] == "act":
                action, why = _reply_action(reply)
                out[table] = (
                    {"action": action}
                    if action is not None
                    else {
                        "kind": "illegal",
                        "reason": why,
                    }
                )
        # its turn is over: what it left running is stopped until its next request
        self._signal_all(signal.SIGSTOP)
        return out

    def __deepcopy__(self, memo: dict[int, Any]) -> SandboxedBot:
        """A fresh sandbox for the same bot (a table seating it twice needs two processes)."""
        return SandboxedBot(
            self.spec,
            self.folder,
            self.num_players,
            label=self.name,
            limits=self.limits,
            seed=self._seed,
            isolate=self.isolate,
            exposed=self.exposed,
            tables=self.tables,
            **self.rules,
        )

    def _signal_all(self, sig: int) -> None:
        """SIGSTOP every process in an isolated bot's sandbox (the bot and all it started, not
        bwrap's own two), or SIGCONT those stopped last time. A process forked while the others
        are being stopped runs on until the next stop (the bot is stopped first, in tree order)."""
        proc = self._proc
        if not self.isolate or proc is None or proc.returncode is not None:
            return
        if sig == signal.SIGSTOP:
            if not self._inits:
                self._inits = _children(proc.pid) or []
            self._stopped = _below(proc.pid, self._inits or None)
        for pid in self._stopped if sig in (signal.SIGSTOP, signal.SIGCONT) else []:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def end_game(self) -> None:
        """Kill every process the bot started (not the bot's own Python, which plays on): called
        when a pairing ends, so nothing it spawned outlives its game. Isolated, those are all the
        processes of its PID namespace but its init and the bot (whose start is the earliest);
        unisolated, the descendants of the bot's process that have not left it (best effort)."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        for _ in range(5):  # a process forking while it is killed leaves orphans: look again
            tree = _process_tree()
            if self.isolate:
                init = tree.children.get(proc.pid, [])
                inside = [c for pid in init for c in tree.children.get(pid, [])]
                keep = set(init) | (
                    {min(inside, key=tree.started.__getitem__)} if inside else set()
                )
                roots = [pid for pid in inside if pid not in keep]
                roots += [c for pid in keep - set(init) for c in tree.children.get(pid, [])]
            else:
                roots = tree.children.get(proc.pid, [])
            doomed = [d for pid in roots for d in tree.descendants(pid)]
            if not doomed:
                return
            for pid in doomed:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.05)

    def close(self) -> None:
        """Stop the child (the next request starts a fresh one)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        # What runs inside (bwrap's init, the bot, all it started) dies with the sandbox, but
        # asynchronously: it is waited for below, so that nothing of the bot outlives close().
        inside = _process_tree().descendants(proc.pid)[1:] if proc.poll() is None else []
        if proc.returncode is None:  # not reaped yet, so its group id is still its own
            try:  # the whole group: grandchildren the bot started go too (killing bwrap ends
                os.killpg(proc.pid, signal.SIGKILL)  # its PID namespace and all it holds)
            except (ProcessLookupError, PermissionError):
                pass
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        _wait_gone(inside)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
        self._errors.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> SandboxedBot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the protocol

    def _fail(self, kind: str, reason: str) -> None:
        self.close()
        raise BotFailureError(self.name, kind, reason)

    def _request(
        self,
        request: dict[str, Any],
        seconds: float,
        starting: bool = False,
    ) -> dict[str, Any]:
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        self._signal_all(signal.SIGCONT)  # its turn: everything it runs may run
        try:
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._fail(*self._exit_reason(starting))
        began = time.monotonic()
        if starting:
            line = self._read_line(seconds, starting)
        else:  # the move limit, or what is left of the round's clock if that is less
            line = self._read_line(min(seconds, self.clock_left), starting, seconds)
            self.clock_left -= time.monotonic() - began
        # its turn is over: an isolated bot's processes (and threads) are stopped until its next
        # request, so nothing it left running competes for the CPU with the bot whose turn it is
        self._signal_all(signal.SIGSTOP)
        reply = self._parse(line)
        if not reply["ok"]:
            kind = str(reply.get("kind", "crash"))
            self._fail("start" if starting and kind == "crash" else kind, str(reply.get("error")))
        return reply

    def _parse(self, line: bytes) -> dict[str, Any]:
        """A reply line as a dict with a boolean ``ok``; anything else is garbage (the child is
        killed)."""
        try:
            reply = json.loads(line.decode())  # decoded here: json would guess the encoding
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._fail("garbage", f"wrote {_shorten(line)} where a reply was expected")
        if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
            self._fail("garbage", f"wrote {_shorten(line)} where a reply was expected")
        return reply

    def _read_line(
        self,
        seconds: float,
        starting: bool,
        move_seconds: float | None = None,
    ) -> bytes:
        """One reply line within ``seconds``; when that is less than ``move_seconds``, the
        round's clock is what runs out, and the failure says so."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + seconds
        while b"\n" not in self._buf:
            if len(self._buf) > MAX_LINE:
                self._fail("garbage", f"wrote a line of more than {MAX_LINE} bytes to its reply")
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                if move_seconds is not None and seconds < move_seconds:
                    self._fail(
                        "clock",
                        f"ran out of its clock of {self.limits.round_seconds:g} s for the round "
                        "(killed)",
                    )
                what = "start" if starting else "answer"
                self._fail(
                    "start" if starting else "timeout",
                    f"did not {what} within {seconds:g} s (killed)",
                )
            data = os.read(fd, MAX_LINE)
            if not data:
                self._fail(*self._exit_reason(starting))
            self._buf += data
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def _exit_reason(self, starting: bool) -> tuple[str, str]:
        proc = self._proc
        assert proc is not None
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        detail = ""
        if starting:
            self._errors.seek(0, os.SEEK_END)
            size = self._errors.tell()
            self._errors.seek(max(0, size - 400))
            tail = self._errors.read().decode(errors="replace").strip().splitlines()
            detail = f": {tail[-1]}" if tail else ""
        kind = "start" if starting else "exited"
        return kind, f"its process ended (exit code {code}){detail}"


@dataclass
class _Tree:
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


def _read_proc(path: str) -> bytes:
    """A small /proc file's bytes, read with one system call (the move loop reads a few of these
    per request: ``open()``'s text layer cost more than the read)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def _children(pid: int) -> list[int] | None:
    """``pid``'s children from /proc/PID/task/*/children (None where the kernel has no such file)."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            out += [int(x) for x in _read_proc(f"/proc/{pid}/task/{tid}/children").split()]
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue  # the thread ended meanwhile
            return None
        except OSError:
            continue
    return out


def _below(pid: int, inits: list[int] | None = None) -> list[int]:
    """Every process below ``pid``'s children (for bwrap: all in the sandbox but its init).
    ``inits``: ``pid``'s children where the caller knows them (bwrap's outer process starts its
    init once and nothing else, so a sandbox reads them once, not at every request)."""
    level: list[int] | None = [pid] if inits is None else inits
    found: list[int] = []
    for depth in range(0 if inits is None else 1, 1 << 16):
        nxt: list[int] = []
        for p in level or []:
            kids = _children(p)
            if kids is None:  # no children files here: the whole process table, once
                tree = _process_tree()
                return [d for c in tree.children.get(pid, []) for d in tree.descendants(c)[1:]]
            nxt += kids
        if not nxt:
            break
        if depth:
            found += nxt
        level = nxt
    return found


def _wait_gone(pids: list[int], timeout: float = 2.0) -> None:
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


def _process_tree() -> _Tree:
    """Every live process's children and start time, from /proc (Linux; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    started: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return _Tree(children, started)
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == b"Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
        started[int(name)] = int(fields[19])
    return _Tree(children, started)


def _shorten(data: bytes, limit: int = 60) -> str:
    text = data.decode(errors="replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


# ---------------------------------------------------------------------- the child's side


class _CountingSink:
    """Stands in for sys.stdout/sys.stderr in the child: counts characters, keeps none."""

    def __init__(self) -> None:
        self.count = 0

    def write(self, text: str) -> int:
        self.count += len(text)
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False


def _die_with_parent() -> None:
    """Exit if the parent dies (a league killed with kill -9 must not leave looping children)."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    import threading

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _child() -> None:
    """The child's main loop: read a JSON request per line, answer a JSON reply per line."""
    _die_with_parent()
    proto = os.dup(1)  # the protocol's channel: one write per reply line, unbuffered
    requests = sys.stdin.buffer
    devnull = os.open(os.devnull, os.O_WRONLY)
    sink = _CountingSink()

    def reply(**fields: Any) -> None:
        data = (json.dumps(fields) + "\n").encode()
        while data:
            data = data[os.write(proto, data) :]

    first = json.loads(requests.readline().decode() or "{}")
    limit = int(first.get("memory_mb", 1024)) * 1024 * 1024
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass  # no RLIMIT_AS here (macOS refuses some values, Windows has no resource module)
    if first.get("processes"):  # isolated only: unisolated, the count is the user's, not ours
        try:
            import resource

            nproc = int(first["processes"])
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        except (ImportError, ValueError, OSError, AttributeError):
            pass
        try:
            _become_nobody()
        except OSError as err:
            reply(ok=False, kind="start", error=f"cannot drop root in the sandbox: {err}")
            return
    if first.get("processes"):  # isolated: the compiled planner, copied before the bot loads
        _seed_jit_cache()
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = sys.stderr = sink  # type: ignore[assignment]
    output_cap = int(first.get("output_chars", 100_000))
    memory_mb = int(first.get("memory_mb", 1024))
    sys.path.append(str(first["folder"]))
    tables = max(1, int(first.get("tables") or 1))

    def load() -> Any:
        import agents

        return agents.load(
            first["spec"], int(first["num_players"]), seed=first.get("seed"), **first["rules"]
        )

    try:
        bots: list[Any] = [load()]  # one per table: games do not mix
    except BaseException as err:  # noqa: BLE001 - a student's import can raise anything
        reply(ok=False, kind="start", error=f"cannot load bot: {_one_line(err)}")
        return
    while len(bots) < tables:
        try:
            bots.append(load())
        except BaseException:  # noqa: BLE001 - memory, most likely: fewer tables, with room left
            del bots[max(1, len(bots) // 2) :]
            break
    tables = len(bots)
    warm = first.get("warm", True) and any(m in sys.modules for m in PLANNER_MODULES)
    if warm:  # loaded now, not on its first move
        try:
            with _no_scipy_for_numba():
                warm_planner(int(first["num_players"]))
        except Exception:  # noqa: BLE001, S110 - a bot may have changed the toolkit's modules
            pass
    reply(ok=True, tables=tables)

    def run(item: Mapping[str, Any]) -> dict[str, Any]:
        """One request to one table's bot; its reply (``ok`` False with a kind and an error for
        what the bot did wrong). MemoryError and what is not an Exception propagate."""
        table = item.get("table", 0)
        if not isinstance(table, int) or not 0 <= table < tables:
            return {"ok": False, "kind": "garbage", "error": f"no table {table!r}"}
        sink.count = 0
        cmd = item.get("cmd")
        start = time.perf_counter()
        out: dict[str, Any] = {"ok": True}
        try:
            if bots[table] is None:  # its last request failed: a fresh bot, as a fresh process
                bots[table] = load()
            bot = bots[table]
            if cmd == "act":
                observation = {
                    "observation": _unpack(item["observation"], OBS_DTYPE),
                    "action_mask": _unpack(item["action_mask"], MASK_DTYPE),
                }
                action = bot.act(observation)
                try:
                    if isinstance(action, bool | np.bool_):
                        raise TypeError
                    out["action"] = operator.index(action)
                except TypeError:
                    out["shown"] = repr(action)[:60]
            elif cmd == "reset":
                bot.reset()
            elif cmd == "seed":
                fn = getattr(bot, "seed", None)
                if callable(fn):
                    fn(item.get("seed"))
            else:
                return {"ok": False, "kind": "garbage", "error": f"unknown request {cmd!r}"}
        except MemoryError:
            raise
        except Exception as err:  # noqa: BLE001 - onnxruntime's own exception types
            size = _failed_allocation(err)
            if size is not None:
                raise _GraphAllocationError(size) from err
            bots[table] = None
            return {"ok": False, "kind": "crash", "error": f"raised {_one_line(err)}"}
        out["seconds"] = round(time.perf_counter() - start, 6)
        if sink.count > output_cap:
            bots[table] = None
            return {
                "ok": False,
                "kind": "output",
                "error": f"printed {sink.count} characters in one move (limit {output_cap})",
            }
        return out

    for line in requests:
        try:
            request = json.loads(line.decode())
            if request.get("cmd") == "tables":  # requests to tables, each answered at once
                for item in request["items"]:
                    reply(**run(item), table=item.get("table"))
                continue
            out = run(request)
        except MemoryError as err:
            size = f": asked for {err.size}" if isinstance(err, _GraphAllocationError) else ""
            reply(ok=False, kind="memory", error=f"ran out of memory (limit {memory_mb} MB){size}")
            return
        except BaseException as err:  # noqa: BLE001 - report everything, even SystemExit
            reply(ok=False, kind="crash", error=f"raised {_one_line(err)}")
            return
        reply(**out)
        if not out["ok"]:  # one table only: the process that failed ends, as it always did
            return


class _GraphAllocationError(MemoryError):
    """An exported bot's graph failed to allocate ``size`` (onnxruntime's own error, as memory)."""

    def __init__(self, size: str) -> None:
        super().__init__(size)
        self.size = size


_ALLOCATION = re.compile(r"Failed to allocate memory for requested buffer of size (\d+)")


def _failed_allocation(err: BaseException) -> str | None:
    """The size an exported bot's graph failed to allocate (onnxruntime raises its own ``Fail``
    with the arena's message, not MemoryError), as ``"64 GiB"``; None for any other error."""
    found = _ALLOCATION.search(str(err))
    if found is None:
        return None
    size = float(found.group(1))
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.3g} {unit}"
        size /= 1024
    return None


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    if len(text) > 200:
        text = text[:200] + "..."
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
