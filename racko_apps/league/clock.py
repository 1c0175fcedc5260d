"""A bot's clock per pairing: what one sandboxed bot may cost the league in one pairing.

The move limit and the clock per round (racko_apps.sandbox) bound one move and one round. A bot
that is slow on purpose, legally, within both (a process that leaves threads burning, so that
each of its moves takes most of its round's clock) still costs a pairing of 100 rounds up to 100
round clocks: most of an hour. So each sandboxed bot also has a budget per pairing: the wall time
of all its requests together (the time it is stopped, while the other bot plays, is not on it).
A bot that exhausts it forfeits the pairing's remaining rounds, with one line, and the request in
flight ends when the budget does, so its pairing ends within the budget.

The default is ``DEFAULT_SECONDS_PER_ROUND`` for each round the bot plays in the pairing: several
times what ``expert`` (the slowest bot a submission is likely to wrap) needs, so every shipped bot
stays well inside (docs/coursework/league.md). Built-in bots play in the league's own process,
are the toolkit's code, and have no pairing clock.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from racko_apps.referee.book import MatchResult, Strikes
from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.wire import BotFailureError

# A sandboxed bot's pairing budget per round it plays, by default: the expert bot in a sandbox
# needs well under a tenth of this per 2-player round on a busy 2-core machine
# (docs/results/league_pairing_budget.json measures a league with and without a slow bot).
DEFAULT_SECONDS_PER_ROUND = 2.0
KIND = "pairing"  # BotFailureError.kind of a bot out of its pairing clock


class PairingClock:
    """What is left of one bot's budget for one pairing, in seconds of wall time."""

    def __init__(self, seconds: float) -> None:
        if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not seconds > 0:
            raise ValueError(f"pairing_seconds must be a positive number, got {seconds!r}")
        self.seconds = float(seconds)
        self.left = float(seconds)

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def reason(self) -> str:
        return f"used up its clock of {self.seconds:g} s for the pairing"


class ClockedSandbox(SandboxedBot):
    """A sandboxed bot whose every request is also on its pairing clock (``on_clock``)."""

    pairing_clock: PairingClock

    def start(self) -> None:
        """Start as a SandboxedBot does; a bot whose pairing clock is spent is not started
        again (its rounds are forfeited without a new process)."""
        if self._proc is None and self.pairing_clock.spent:
            raise BotFailureError(self.name, KIND, self.pairing_clock.reason())
        super().start()

    def _read_line(
        self, seconds: float, starting: bool, move_seconds: float | None = None
    ) -> bytes:
        """One reply line within ``seconds`` and within what is left of the pairing's clock
        (the start, under its own generous limit, is not on it)."""
        clock = self.pairing_clock
        if starting:
            return super()._read_line(seconds, starting, move_seconds)
        if clock.spent:
            self._fail(KIND, clock.reason())
        began = time.monotonic()
        try:
            if clock.left >= seconds:
                return super()._read_line(seconds, starting, move_seconds)
            try:  # the pairing's clock ends first: a wait past it is the budget's
                return super()._read_line(clock.left, starting, None)
            except BotFailureError as err:
                if err.kind != "timeout":
                    raise
                raise BotFailureError(self.name, KIND, clock.reason() + " (killed)") from None
        finally:
            clock.left -= time.monotonic() - began


def on_clock(bot: SandboxedBot, clock: PairingClock) -> ClockedSandbox:
    """``bot`` (not started yet) with every request on ``clock`` as well."""
    bot.__class__ = ClockedSandbox
    assert isinstance(bot, ClockedSandbox)
    bot.pairing_clock = clock
    return bot


@dataclass
class ClockedStrikes(Strikes):
    """A bot's forfeits in a pairing; it is out when they reach the limit or its clock is spent."""

    clock: PairingClock | None = None

    @property
    def out(self) -> bool:
        return self.count >= self.limit or (self.clock is not None and self.clock.spent)


def one_line_per_clock(result: MatchResult, clocks: list[PairingClock | None]) -> MatchResult:
    """``result`` with the forfeit lines of a bot whose clock ran out (a line per round in
    flight, then the unplayed rounds') folded into one line saying how many rounds it forfeited
    on its clock."""
    for bot, clock in enumerate(clocks):
        if clock is None or not clock.spent:
            continue
        label = result.labels[bot]
        rounds = [r for r in result.rounds if r.get("forfeit", {}).get("bot") == label]
        lost = [r for r in rounds if _on_clock(r["forfeit"]["reason"])]
        if not lost:
            continue
        first = min(r["deal"] for r in lost)
        lines = [x for x in result.forfeit_lines if not _folded(x, label)]
        lines.append(
            f"{label} forfeits the pairing's remaining {len(lost)} round(s) from deal {first}: "
            f"it {clock.reason()}"
        )
        result.forfeit_lines = lines
    return result


def _on_clock(reason: str) -> bool:
    return "for the pairing" in reason or reason.startswith("not played")


def _folded(line: str, label: str) -> bool:
    """A line of ``label`` that the clock's one line replaces."""
    if not line.startswith(f"{label} forfeits "):
        return False
    return "for the pairing" in line or "more round(s) unplayed" in line


def clocks_for(seated: list[Any], seconds: float | None) -> list[PairingClock | None]:
    """A fresh pairing clock for each sandboxed bot of ``seated`` (None: none for any)."""
    return [
        PairingClock(seconds) if seconds is not None and isinstance(b, SandboxedBot) else None
        for b in seated
    ]
