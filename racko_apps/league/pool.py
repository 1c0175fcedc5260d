"""Where a league's pairings are played: worker processes on every core, or a Ray cluster.

``play_pairing`` plays one ``PairingJob`` wherever it runs: it starts the bots' sandboxes there,
plays the duplicate match (racko_apps.referee) and ends the sandboxes with it. Workers only play;
the league's process alone writes the record, so a league killed with ``kill -9`` loses only the
pairings in flight.

* ``LocalPool``: ``workers`` processes, started with ``spawn`` (nothing of the league's process
  is inherited), that die with the league.
* ``RayPool``: one Ray task per pairing on the cluster at ``address``; the bots' files travel
  through Ray's object store, so a node needs racko and bubblewrap, not the league's folder.

Both take one job at a time (``submit``, then ``next`` for the next result to finish): the
league's work queue (racko_apps.league.rounds) keeps at most ``capacity`` pairings submitted, so
that it chooses each next pairing when a worker frees up, from the results so far.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import queue
import signal
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from racko_apps.league.clock import ClockedStrikes, clocks_for, on_clock, one_line_per_clock
from racko_apps.referee.book import MatchResult
from racko_apps.referee.match import play_match, sandbox_for
from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.jit import jit_cache
from racko_apps.sandbox.proc import set_death_signal
from racko_apps.sandbox.toolkit import DEFAULT_ALLOW
from racko_apps.sandbox.wire import BotFailureError, Limits

T = TypeVar("T")


@dataclass(frozen=True)
class Contestant:
    """What a worker needs to seat one bot: a built-in's name, or a submission's ``files`` in
    ``folder`` (or as Ray object refs, ``blobs``, where the worker does not see the folder)."""

    label: str
    spec: str
    kind: str  # python, onnx, builtin
    folder: str = ""
    files: tuple[str, ...] = ()
    blobs: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Play:
    """How each pairing is played (``run_league``'s keywords of the same names)."""

    limits: Limits
    rules: dict[str, Any]
    pairing_seconds: float | None
    max_forfeits: int
    isolation: str
    tables: int
    record_dir: Path | None
    allow: tuple[str, ...] = DEFAULT_ALLOW


@dataclass(frozen=True)
class PairingJob:
    """One pairing to play: ``deals`` duplicate deals (each in every seating) of seed ``seed``,
    between two bots or a table of one bot per seat; its game records go to ``record_dir``."""

    index: int
    bots: tuple[Contestant, ...]
    deals: int
    seed: int
    play: Play
    record_dir: Path | None = None


@dataclass(frozen=True)
class LoadJob:
    """Does this bot load (start in its sandbox and construct)?"""

    index: int
    bot: Contestant
    play: Play
    players: int


def _seat(c: Contestant, scratch: Path, play: Play, players: int) -> str | SandboxedBot:
    """What plays ``c`` here: a built-in's name, or its sandbox (not started yet)."""
    if c.kind == "builtin":
        return c.spec
    folder = Path(c.folder)
    if c.blobs:  # another machine: the files come with the job, into a folder of their own
        import ray

        folder = scratch / c.label
        folder.mkdir()
        for name, blob in zip(c.files, c.blobs, strict=True):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)  # a package's files
            (folder / name).write_bytes(ray.get(blob))
    spec = c.files[0] if c.kind == "onnx" else c.spec
    return sandbox_for(
        spec,
        players,
        dict(play.rules),
        folder=folder,
        label=c.label,
        limits=play.limits,
        isolation=play.isolation,
        allow=play.allow,
    )


def play_pairing(job: PairingJob) -> tuple[int, MatchResult, float]:
    """Play one pairing here: ``(job.index, result, wall seconds)``. Never raises for a bot's
    misbehaviour (one that does not even start forfeits its rounds)."""
    began, play = time.monotonic(), job.play
    if play.isolation != "none" and any(c.kind == "python" for c in job.bots):
        jit_cache()  # the compiled planner, once per process (a Ray worker's; a local one inherits)
    with tempfile.TemporaryDirectory(prefix="racko-pairing-") as scratch:
        players = len(job.bots)
        seated = [_seat(c, Path(scratch), play, players) for c in job.bots]
        clocks = clocks_for(seated, play.pairing_seconds)
        for bot, clock in zip(seated, clocks, strict=True):
            if clock is not None and isinstance(bot, SandboxedBot):
                on_clock(bot, clock)
        try:
            result = play_match(
                seated,
                [c.label for c in job.bots],
                num_players=players,
                rules=play.rules,
                deals=job.deals,
                seed=job.seed,
                strikes=[ClockedStrikes(play.max_forfeits, clock=c) for c in clocks],
                record_dir=job.record_dir,
                tables=play.tables,
            )
            result = one_line_per_clock(result, clocks)
        finally:
            for bot in seated:
                if isinstance(bot, SandboxedBot):
                    bot.close()
    return job.index, result, round(time.monotonic() - began, 3)


def try_load(job: LoadJob) -> tuple[int, str | None]:
    """``(job.index, None)`` when the bot starts and is constructed here, else the one-line
    reason it does not."""
    with tempfile.TemporaryDirectory(prefix="racko-load-") as scratch:
        try:
            bot = _seat(job.bot, Path(scratch), job.play, job.players)
            if isinstance(bot, SandboxedBot):
                bot.warm = False  # no move is played: the planner is not needed
                try:
                    bot.start()
                finally:
                    bot.close()
            else:
                import agents

                agents.load(bot, job.players, **job.play.rules)
        except BotFailureError as err:
            return job.index, err.reason
        except (ValueError, TypeError, FileNotFoundError, ImportError) as err:
            return job.index, " ".join(str(err).split())
    return job.index, None


def _worker_init() -> None:
    """A worker dies with the league, and leaves Ctrl-C to it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    set_death_signal()
    os.environ.setdefault("OMP_NUM_THREADS", "1")


@dataclass(frozen=True)
class _Failed:
    """A submitted job that raised in its worker (re-raised by ``next``)."""

    error: BaseException


class LocalPool:
    """``workers`` processes of this machine playing pairings (module docstring)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: Any = None
        self._here: deque[tuple[Callable[[Any], Any], Any]] = deque()  # one worker: played here
        self._done: queue.SimpleQueue[Any] = queue.SimpleQueue()  # finished, not yet taken
        self._pending = 0  # submitted, not yet taken

    @property
    def capacity(self) -> int:
        """Jobs played at once."""
        return self.workers

    def _processes(self) -> Any:
        if self._pool is None:
            ctx = multiprocessing.get_context("spawn")
            self._pool = ctx.Pool(self.workers, initializer=_worker_init)
        return self._pool

    def contestant(
        self, label: str, spec: str, kind: str, folder: Path, files: list[str]
    ) -> Contestant:
        return Contestant(label, spec, kind, str(folder), tuple(files))

    def submit(self, fn: Callable[[Any], T], job: Any) -> None:
        """Play ``fn(job)`` on the next free worker (one worker: here, when ``next`` asks)."""
        self._pending += 1
        if self.workers == 1:
            self._here.append((fn, job))
            return
        self._processes().apply_async(
            fn, (job,), callback=self._done.put, error_callback=lambda e: self._done.put(_Failed(e))
        )

    def next(self, deadline: float = math.inf, clock: Callable[[], float] = time.monotonic) -> Any:
        """The result of a submitted job, the first to finish; None when none is pending, or
        past ``deadline`` (the jobs in flight play on until ``close``)."""
        left = deadline - clock()
        if not self._pending or left <= 0:
            return None
        if self.workers == 1:
            fn, job = self._here.popleft()
            self._pending -= 1
            return fn(job)
        try:
            got = self._done.get(timeout=None if left == math.inf else left)
        except queue.Empty:
            return None
        self._pending -= 1
        if isinstance(got, _Failed):
            raise got.error
        return got

    def close(self) -> None:
        """End the workers now (a pairing in flight is lost, as with a kill)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
        self._here.clear()
        self._done = queue.SimpleQueue()
        self._pending = 0


class RayPool:
    """Pairings as Ray tasks on the cluster at ``address`` (module docstring)."""

    def __init__(self, address: str) -> None:
        from agents.extras import require

        ray = require("ray", "cluster", "racko league --address")
        self._owned = not ray.is_initialized()  # joined here: left again by close()
        if self._owned:
            try:
                ray.init(address=address, logging_level="ERROR", log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as err:
                raise ValueError(f"cannot join the Ray cluster at {address}: {err}") from None
        self._ray = ray
        self._tasks: dict[Callable[[Any], Any], Any] = {}
        self._pending: list[Any] = []  # submitted, not yet taken

    @property
    def capacity(self) -> int:
        """Jobs played at once: the cluster's CPUs (a pairing is a task of one)."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def _task(self, fn: Callable[[Any], Any]) -> Any:
        if fn not in self._tasks:
            self._tasks[fn] = self._ray.remote(num_cpus=1)(fn)
        return self._tasks[fn]

    def contestant(
        self, label: str, spec: str, kind: str, folder: Path, files: list[str]
    ) -> Contestant:
        blobs = tuple(self._ray.put((folder / name).read_bytes()) for name in files)
        return Contestant(label, spec, kind, "", tuple(files), blobs)

    def submit(self, fn: Callable[[Any], T], job: Any) -> None:
        """``fn(job)`` as a Ray task."""
        self._pending.append(self._task(fn).remote(job))

    def next(self, deadline: float = math.inf, clock: Callable[[], float] = time.monotonic) -> Any:
        """The result of a submitted task, the first to finish; None when none is pending, or
        past ``deadline``."""
        left = deadline - clock()
        if not self._pending or left <= 0:
            return None
        timeout = None if left == math.inf else left
        done, self._pending = self._ray.wait(self._pending, num_returns=1, timeout=timeout)
        return self._ray.get(done[0]) if done else None

    def close(self) -> None:
        """Leave the cluster (it runs on; only this league's tasks end with it)."""
        for ref in self._pending:
            self._ray.cancel(ref, force=True)
        self._pending = []
        if self._owned:
            self._ray.shutdown()
