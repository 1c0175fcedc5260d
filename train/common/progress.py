"""Progress a person can see from a run's first second, in a terminal and in its log file alike:
``RunLog`` writes timestamped lines to stdout and ``train.log``; ``RunLog.phase`` follows one
stage with a tqdm bar in a terminal and, in any case, a line when it starts, every ``every_s``
seconds (done/total, rate, ETA) and when it ends."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO


class RunLog:
    """Timestamped lines to a stream and to a log file (appended: resumed runs keep the history)."""

    def __init__(
        self, path: str | Path | None, stream: TextIO | None = None, bars: bool = True
    ) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.bars = bars  # a live bar in a terminal (the lines are written either way)
        self.file = None
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.file = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 (closed in close())

    def info(self, message: str) -> None:
        line = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}"
        print(line, file=self.stream, flush=True)
        if self.file is not None:
            self.file.write(line + "\n")

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    @contextmanager
    def phase(
        self, name: str, total: int, unit: str, every_s: float = 10.0, start: int = 0
    ) -> Iterator[Phase]:
        """One stage of ``total`` units, ``start`` of them done already (a resumed run: the bar
        shows the whole run, the rate counts this session's work)."""
        p = Phase(self, name, total, unit, every_s, start)
        self.info(f"{name}: started ({total:,} {unit}" + (f", {start:,} done)" if start else ")"))
        try:
            yield p
        finally:
            p.finish()


class Phase:
    """One stage of a run: call ``advance(n)`` as work gets done."""

    def __init__(
        self, log: RunLog, name: str, total: int, unit: str, every_s: float, start: int = 0
    ) -> None:
        self.log, self.name, self.total, self.unit, self.every_s = log, name, total, unit, every_s
        self.done = self.start = start
        self.t0 = self.last = time.monotonic()
        self.bar: Any = None
        if log.bars and getattr(log.stream, "isatty", lambda: False)():
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                initial=start,
                desc=name,
                unit=f" {unit}",
                leave=False,
                file=sys.stderr,
                dynamic_ncols=True,
            )

    def update(self, done: int, note: str = "") -> None:
        """Set the units done so far (``advance`` by the difference)."""
        if done > self.done:
            self.advance(done - self.done, note)

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        now = time.monotonic()
        if now - self.last >= self.every_s and self.done < self.total:
            self.last = now
            self.log.info(f"{self.name}: {self._status(now)}{'; ' + note if note else ''}")

    def _status(self, now: float) -> str:
        elapsed = max(now - self.t0, 1e-9)
        rate = (self.done - self.start) / elapsed
        left = (self.total - self.done) / rate if rate > 0 else float("inf")
        pct = 100 * self.done / max(self.total, 1)
        eta = f"ETA {left:.0f} s" if left != float("inf") else "ETA ?"
        shown = f"{rate:,.0f}" if rate >= 10 else f"{rate:.2f}"
        return f"{self.done:,}/{self.total:,} {self.unit} ({pct:.0f}%), {shown}/s, {eta}"

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elapsed = time.monotonic() - self.t0
        rate = (self.done - self.start) / max(elapsed, 1e-9)
        self.log.info(
            f"{self.name}: done, {self.done:,} {self.unit} in {elapsed:.1f} s ({rate:,.1f}/s)"
        )
