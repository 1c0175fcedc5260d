"""What a training run shows while it works: one progress line per phase, from its first second.

A run is a few phases (collecting the teacher's decisions, cloning, warming the critic, PPO,
evaluating); each has a size and a unit. In a terminal the current phase is a live bar with its
rate and ETA (rich); anywhere else (a log file, CI) the same numbers are printed as a plain line
every ``every_s`` seconds. Every message and the end of every phase also go to ``RUN/train.log``,
so a run started in the background can be followed with ``tail -f``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import IO, Any


def _clock(seconds: float) -> str:
    s = max(0, int(seconds))
    return (
        f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
    )


class RunProgress:
    """Phases with a size; ``update(done)`` moves the current one, ``log(msg)`` prints a line."""

    def __init__(
        self,
        log_path: Path | None = None,
        live: bool | None = None,
        every_s: float = 10.0,
        stream: IO[str] | None = None,
    ) -> None:
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty() if live is None else live
        self.every_s = every_s
        self.log_file = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115
        self._rich: Any = None
        self._task: Any = None
        self.phase = ""
        self.total = 0
        self.done = 0
        self.start_done = 0
        self.unit = ""
        self.t0 = time.monotonic()
        self.t_phase = self.t0
        self.t_line = 0.0

    # ----------------------------------------------------------------- output

    def _file(self, line: str) -> None:
        if self.log_file is not None:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            self.log_file.write(f"{stamp} {line}\n")
            self.log_file.flush()

    def log(self, message: str) -> None:
        """A line for the reader: printed above the live bar (or plainly) and logged."""
        if self._rich is not None:
            self._rich.console.print(message, markup=False, highlight=False)
        else:
            print(message, file=self.stream, flush=True)
        self._file(message)

    def _status(self) -> str:
        elapsed = time.monotonic() - self.t_phase
        rate = (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        eta = _clock(left) if left == left else "?"
        return (
            f"{self.phase}: {self.done:,}/{self.total:,} {self.unit} ({pct:.0f}%), "
            f"{rate:,.0f} {self.unit}/s, {_clock(elapsed)} elapsed, ETA {eta}"
        )

    # ----------------------------------------------------------------- phases

    def start(self, phase: str, total: int, unit: str, done: int = 0) -> None:
        """Begin a phase of ``total`` units, ``done`` of them already done (a resumed run)."""
        self.finish()
        self.phase, self.total, self.unit = phase, int(total), unit
        self.done = self.start_done = int(done)
        self.t_phase = time.monotonic()
        self.t_line = 0.0
        self._file(f"start {phase}: {total:,} {unit}" + (f" ({done:,} done)" if done else ""))
        if self.live:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._rich = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                transient=False,
            )
            self._rich.start()
            self._task = self._rich.add_task(phase, total=self.total, completed=self.done, rate="")
        else:
            self.log(f"{phase}: started ({total:,} {unit})")

    def update(self, done: int) -> None:
        self.done = min(int(done), self.total)
        if self._rich is not None:
            elapsed = time.monotonic() - self.t_phase
            rate = (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0
            self._rich.update(self._task, completed=self.done, rate=f"{rate:,.0f} {self.unit}/s")
            return
        now = time.monotonic()
        if now - self.t_line >= self.every_s:
            self.t_line = now
            line = self._status()
            print(line, file=self.stream, flush=True)
            self._file(line)

    def finish(self) -> None:
        """End the current phase (if any) with a line of its totals."""
        if not self.phase:
            return
        elapsed = time.monotonic() - self.t_phase
        rate = (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0
        line = (
            f"{self.phase}: done, {self.done:,} {self.unit} in {_clock(elapsed)} "
            f"({rate:,.0f} {self.unit}/s)"
        )
        if self._rich is not None:
            self._rich.update(self._task, completed=self.done)
            self._rich.stop()
            self._rich = None
        else:
            print(line, file=self.stream, flush=True)
        self._file(line)
        self.phase = ""

    def close(self) -> None:
        self.finish()
        if self.log_file is not None:
            self.log_file.close()
            self.log_file = None

    def hook(self, done: int, total: int, message: str = "") -> None:
        """``(done, total, message)``: the progress hook the warm-start functions take."""
        self.total = int(total)
        self.update(done)
