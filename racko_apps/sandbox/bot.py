"""Play an untrusted bot from its own process: ``SandboxedBot`` (used by grade and league).

A student's ``module:Class`` bot or exported bot file runs in a child Python process
(``racko_apps.sandbox.child``), so nothing it does (an exception, an endless loop, a flood of
``print``, a memory leak, ``sys.exit``) can stop or corrupt the caller. The two speak JSON lines
over pipes (``racko_apps.sandbox.wire``). The child sees only its seat's observation and mask,
runs under a memory limit, and must answer each request within the move limit and a round's
requests within its clock (``Limits``); its output is counted, not passed on. Any failure raises
``BotFailureError`` with a one-line reason, and the next request starts a fresh child.

The child runs under one of ``ISOLATIONS`` (``choose_isolation`` picks the strongest that works
here): ``bwrap`` (``racko_apps.sandbox.bwrap``), ``user`` (``racko_apps.sandbox.user``) or
``none``. An isolated bot's processes are stopped between its requests and what it started is
killed between games (``racko_apps.sandbox.proc``). It imports only the toolkit modules
``allow`` names (``racko_apps.sandbox.toolkit``). docs/coursework/isolation.md and
docs/coursework/submissions.md say what is and is not isolated.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.base import Bot
from racko_apps.sandbox.bwrap import check_isolation, isolation_argv
from racko_apps.sandbox.isolation import ISOLATIONS
from racko_apps.sandbox.jit import jit_cache
from racko_apps.sandbox.proc import (
    below,
    children,
    exit_with_parent,
    kill_sandbox,
    kill_started,
    signal_each,
)
from racko_apps.sandbox.seeds import told
from racko_apps.sandbox.submission import refused, submission_paths
from racko_apps.sandbox.toolkit import (
    DEFAULT_ALLOW,
    allows_all,
    check_allow,
    stage,
    toolkit_root,
    visible_modules,
)
from racko_apps.sandbox.user import UserSandbox, check_user
from racko_apps.sandbox.wire import (
    MAX_LINE,
    BotFailureError,
    Limits,
    act_request,
    reply_action,
    shorten,
)

CHILD_COMMAND = "from racko_apps.sandbox.child import main; main()"


@dataclass
class _Launch:
    """How a bot's child is started: its command line, environment, working folder, the spec
    and folder it loads from, what runs before exec, and the modules its guard lets through."""

    command: list[str]
    env: dict[str, str]
    cwd: Path
    spec: str
    preexec: Callable[[], None] | None
    visible: list[str] | None


class SandboxedBot(Bot):
    """A ``module:Class`` bot or a bot file played from a child process (module docstring).

    ``folder``: where the bot lives (appended to the child's ``sys.path``: its helper modules
    import but never shadow the toolkit); ``label`` names it in failures; ``exposed``: what of
    ``folder`` an isolated child sees (default ``submission_paths``); ``isolation``: one of
    ``ISOLATIONS`` (``isolate=True``: ``bwrap``); ``allow``: the toolkit modules it may import
    (``ALLOW_ALL``: all); ``tables``: bot objects in the child (``racko_apps.referee.lockstep``).
    ``last_seconds``: the bot's own time in its last ``act``, measured in the child.
    """

    # explaining a move in a game record would run the student's code again, off the clock
    explain_in_records = False
    # load the compiled planner at the start, not on the first move (False: a load check)
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
        allow: Sequence[str] = DEFAULT_ALLOW,
        isolation: str | None = None,
        **rules_options: Any,
    ) -> None:
        if not isinstance(tables, int) or isinstance(tables, bool) or tables < 1:
            raise ValueError(f"tables must be a positive integer, got {tables!r}")
        isolation = isolation or ("bwrap" if isolate else "none")
        if isolation not in ISOLATIONS:
            raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, got {isolation!r}")
        self.isolation = isolation
        self.isolate = isolation != "none"  # the child runs isolated (bwrap or user)
        self._user: UserSandbox | None = None
        self.allow = check_allow(allow)
        self.spec = spec
        self.tables = tables
        self.folder = Path(folder).resolve()
        self.exposed = exposed
        self.num_players = num_players
        self.rules = dict(rules_options)
        self.limits = limits or Limits()
        self.name = label or spec
        self.last_seconds = 0.0
        self._seed = seed
        self._proc: subprocess.Popen[bytes] | None = None

    # ------------------------------------------------------------------ the Bot interface

    def start(self) -> None:
        """Start the child and construct the bot there; raise BotFailureError if it cannot
        (IsolationUnavailableError where its isolation cannot run here)."""
        if self._proc is not None:
            return
        # a fresh process: a failure ended the round; the clock is wound up again
        self.clock_left = self.limits.round_seconds  # seconds left of this round's clock
        self.table_clocks = [self.limits.round_seconds] * self.tables  # the same, per table
        launch = self._launch()
        self._errors = tempfile.TemporaryFile()
        self._buf = b""
        self._stopped: list[int] = []  # the sandbox's processes stopped after the last request
        self._inits: list[int] = []  # bwrap's init (the outer bwrap's one child), once known
        # its own session: close() ends the child's whole process group
        try:
            self._proc = subprocess.Popen(
                launch.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
                cwd=launch.cwd,
                env=launch.env,
                start_new_session=True,
                preexec_fn=launch.preexec,
            )
        except BaseException:
            self._close_user()
            raise
        request = {
            "cmd": "init",
            "spec": launch.spec,
            "folder": str(launch.cwd),
            "num_players": self.num_players,
            "rules": self.rules,
            "seed": self._seed,
            "memory_mb": self.limits.memory_mb,
            "output_chars": self.limits.output_chars,
            "processes": self.limits.processes if self.isolate else None,
            "cpu_seconds": self.limits.cpu_seconds if self.isolate else None,
            "tables": self.tables,
            "warm": self.warm,
            "allow": list(self.allow),
            "visible": launch.visible,
        }
        reply = self._request(request, self.limits.start_seconds, starting=True)
        built = reply.get("tables", 1)
        if isinstance(built, int) and not isinstance(built, bool) and 1 <= built < self.tables:
            self.tables = built  # the bot objects it could build under its memory limit
            del self.table_clocks[built:]

    def _launch(self) -> _Launch:
        """How to start the child under this bot's isolation (checked here: it raises
        IsolationUnavailableError where it cannot run)."""
        # -P: a student's agents.py or numpy.py in its folder cannot replace the toolkit
        command = [sys.executable, "-P", "-c", CHILD_COMMAND]
        exposed = self.exposed
        if exposed is None:
            exposed = submission_paths(self.spec, self.folder)
        why = refused(exposed)  # a link out of the submission, or too many megabytes
        if why is not None:
            raise BotFailureError(self.name, "start", why)
        if self.isolation == "user":
            check_user()
            toolkit = stage(self.allow, whole=True)  # world-readable, wherever racko lives
            assert toolkit is not None
            jit = jit_cache(create=False)
            user = self._user = UserSandbox.open(exposed)
            return _Launch(
                command,
                user.env(toolkit, jit),
                user.submission,
                user.path(self.spec, self.folder),
                user.preexec(self.limits, os.getpid()),
                self._visible(),
            )
        toolkit = stage(self.allow)  # None: the whole toolkit, as it is
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(toolkit or toolkit_root()), env.get("PYTHONPATH", "")) if p
        )
        env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        preexec = None
        if self.isolation == "bwrap":
            check_isolation()
            jit = jit_cache(create=False)  # a league's (racko_apps.league.pool)
            command = isolation_argv(command, self.folder, exposed, self.limits, jit, toolkit)
            preexec = exit_with_parent(os.getpid())
        return _Launch(command, env, self.folder, self.spec, preexec, self._visible())

    def _visible(self) -> list[str] | None:
        """The toolkit modules the child's import guard lets the bot import (None: all)."""
        return None if allows_all(self.allow) else sorted(visible_modules(self.allow))

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
        action, why = reply_action(reply)
        if action is None:
            self._fail("illegal", why)
        return int(action)

    def explain(self, observation: Mapping[str, Any]) -> str:
        return f"{self.name} (sandboxed) would play action {self.act(observation)}"

    def play_tables(self, items: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
        """Requests to several tables' bots (``TableBot.request``) sent in one line; per table,
        its last reply: ``{"action": a}``, or ``{"kind": k, "reason": r}`` where its bot failed
        (that table's round is lost and the child builds it a fresh bot).

        Each answer is timed as one request at a time would be, from the answer before: within
        the move limit and its table's clock. A child that overruns is killed and
        BotFailureError raised: every table loses its round."""
        self.start()
        move, clocks = self.limits.move_seconds, self.table_clocks
        self._send({"cmd": "tables", "items": items}, False)
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
                action, why = reply_action(reply)
                ok = action is not None
                out[table] = {"action": action} if ok else {"kind": "illegal", "reason": why}
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
            exposed=self.exposed,
            tables=self.tables,
            allow=self.allow,
            isolation=self.isolation,
            **self.rules,
        )

    def _signal_all(self, sig: int) -> None:
        """SIGSTOP every process in an isolated bot's sandbox (not bwrap's own two), or SIGCONT
        those stopped last time."""
        proc = self._proc
        if not self.isolate or proc is None or proc.returncode is not None:
            return
        if sig == signal.SIGSTOP and self._user is not None:
            self._stopped = self._user.processes()
        elif sig == signal.SIGSTOP:
            if not self._inits:
                self._inits = children(proc.pid) or []
            self._stopped = below(proc.pid, self._inits or None)
        if sig in (signal.SIGSTOP, signal.SIGCONT):
            signal_each(self._stopped, sig)

    def end_game(self) -> None:
        """Kill every process the bot started, not the bot: nothing it spawned outlives its game."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        if self._user is not None:
            self._user.kill_others(keep=proc.pid)
        else:
            kill_started(proc.pid, self.isolation == "bwrap")

    def close(self) -> None:
        """Stop the child and everything it started (the next request starts a fresh one)."""
        proc, self._proc = self._proc, None
        if proc is None:
            self._close_user()
            return
        kill_sandbox(proc)
        self._close_user()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
        self._errors.close()

    def _close_user(self) -> None:
        user, self._user = self._user, None
        if user is not None:
            user.close()

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

    def _send(self, request: dict[str, Any], starting: bool) -> None:
        """Let the sandbox run (its turn) and write it a request line."""
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        self._signal_all(signal.SIGCONT)
        try:
            proc.stdin.write(json.dumps(told(request)).encode() + b"\n")  # no deal's seed
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._fail(*self._exit_reason(starting))

    def _request(
        self,
        request: dict[str, Any],
        seconds: float,
        starting: bool = False,
    ) -> dict[str, Any]:
        self._send(request, starting)
        began = time.monotonic()
        if starting:
            line = self._read_line(seconds, starting)
        else:  # the move limit, or what is left of the round's clock if that is less
            line = self._read_line(min(seconds, self.clock_left), starting, seconds)
            self.clock_left -= time.monotonic() - began
        self._signal_all(signal.SIGSTOP)  # its turn is over: nothing of it runs until the next
        reply = self._parse(line)
        if not reply["ok"]:
            kind = str(reply.get("kind", "crash"))
            self._fail("start" if starting and kind == "crash" else kind, str(reply.get("error")))
        return reply

    def _parse(self, line: bytes) -> dict[str, Any]:
        """A reply line as a dict with a boolean ``ok``; anything else is garbage."""
        try:
            reply = json.loads(line.decode())  # decoded here: json would guess the encoding
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._fail("garbage", f"wrote {shorten(line)} where a reply was expected")
        if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
            self._fail("garbage", f"wrote {shorten(line)} where a reply was expected")
        return reply

    def _read_line(
        self,
        seconds: float,
        starting: bool,
        move_seconds: float | None = None,
    ) -> bytes:
        """One reply line within ``seconds`` (less than ``move_seconds``: the round's clock)."""
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
            size = self._errors.seek(0, os.SEEK_END)
            self._errors.seek(max(0, size - 400))
            tail = self._errors.read().decode(errors="replace").strip().splitlines()
            detail = f": {tail[-1]}" if tail else ""
        kind = "start" if starting else "exited"
        return kind, f"its process ended (exit code {code}){detail}"
