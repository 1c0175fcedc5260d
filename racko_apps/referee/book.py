"""A match's book: its rounds' results as they end (in any order), with forfeits and records.

Shared by the referee (one round at a time) and ``lockstep`` (rounds side by side).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racko_apps.sandbox.wire import BotFailureError
from racko_eval import WIN_POINTS, GameRecorder, TableSetup, seat_labels, write_record


@dataclass
class Strikes:
    """Forfeits counted across one grading or one pairing; past ``limit`` nothing more is played."""

    limit: int
    count: int = 0

    @property
    def out(self) -> bool:
        return self.count >= self.limit


@dataclass
class MatchResult:
    """Per bot: rounds played, wins (shares), round points, forfeits; one row per round."""

    labels: list[str]
    played: list[int]
    wins: list[float]
    points: list[list[int]]
    forfeit_lines: list[str] = field(default_factory=list)
    forfeits: list[int] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)

    def win_rate(self, bot: int) -> float:
        return self.wins[bot] / self.played[bot] if self.played[bot] else 0.0

    def record_links(self, bot: int) -> dict[str, list[str]]:
        """The records of the rounds bot ``bot`` forfeited and of those it lost otherwise."""
        label = self.labels[bot]
        links: dict[str, list[str]] = {"forfeits": [], "lost": []}
        for row in self.rounds:
            if "record" not in row or bot not in row["seating"]:
                continue
            if row.get("forfeit", {}).get("bot") == label:
                links["forfeits"].append(row["record"])
            elif row["win"][row["seating"].index(bot)] == 0:
                links["lost"].append(row["record"])
        return links


def reason(err: BaseException) -> str:
    cause = err.__cause__
    if isinstance(cause, BotFailureError):
        return cause.reason
    if isinstance(err, BotFailureError):
        return err.reason
    return str(err)


Job = tuple[int, int, int, tuple[int, ...]]  # deal number, deal seed, seating number, seating


class Book:
    """A match's result as its rounds end (in any order): rows, forfeits, strikes, records."""

    def __init__(
        self,
        setup: TableSetup,
        strikes: list[Strikes],
        record_dir: str | Path | None,
    ) -> None:
        self.setup, self.strikes, self.record_dir = setup, strikes, record_dir
        labels = setup.labels
        self.index = {label: i for i, label in enumerate(labels)}
        n_bots = len(labels)
        self.result = MatchResult(
            labels=list(labels),
            played=[0] * n_bots,
            wins=[0.0] * n_bots,
            points=[[] for _ in labels],
            forfeits=[0] * n_bots,
        )
        self.unplayed = [0] * n_bots
        self._rows: list[tuple[int, dict[str, Any], str | None]] = []

    def begin(self, job: Job) -> tuple[bool, GameRecorder | None]:
        """Whether the round is to be played (no bot of it is out), and its recorder."""
        d, _, salt, seating = job
        if any(self.strikes[b].out for b in seating):
            return False, None
        if self.record_dir is None:
            return True, None
        context = {"source": "referee", "deal": d, "seating": salt}
        return True, GameRecorder("round", seat_labels(self.setup, seating), context)

    def culprit(self, err: BaseException, seating: Sequence[int]) -> int:
        return self.index.get(getattr(err, "bot", ""), seating[0])

    def finish(
        self,
        order: int,
        job: Job,
        seat_results: Any = None,
        culprit: int | None = None,
        reason: str = "",
        recorder: GameRecorder | None = None,
    ) -> None:
        """Book a round: played (``seat_results``), forfeited by ``culprit`` (who gets a strike),
        or not played because a bot of it was out already (neither given)."""
        d, _, _, seating = job
        labels, result = self.setup.labels, self.result
        unplayed = seat_results is None and culprit is None
        if unplayed:
            culprit = min(b for b in seating if self.strikes[b].out)
            reason = "not played: it had already forfeited too many rounds"
            self.unplayed[culprit] += 1
        elif seat_results is None:
            assert culprit is not None
            self.strikes[culprit].count += 1
        row: dict[str, Any] = {"deal": d, "seating": list(seating)}
        if seat_results is not None:
            row["win"] = [r.win for r in seat_results]
            row["points"] = [r.points[0] if r.points else 0 for r in seat_results]
            row["rank"] = [r.rank_score for r in seat_results]
        else:
            others = [s for s, b in enumerate(seating) if b != culprit]
            share = 1.0 / len(others) if others else 0.0
            row["win"] = [share if s in others else 0.0 for s in range(len(seating))]
            row["points"] = [0] * len(seating)
            row["rank"] = [WIN_POINTS if s in others else -1.0 for s in range(len(seating))]
            row["forfeit"] = {"bot": labels[culprit], "reason": reason}
            result.forfeits[culprit] += 1
        if recorder is not None and self.record_dir is not None and recorder.game is not None:
            forfeit = row.get("forfeit")
            if forfeit is not None:
                forfeit = {"seat": list(seating).index(culprit), **forfeit}
            record = recorder.finish(win=row["win"], forfeit=forfeit)
            path = write_record(self.record_dir, f"deal{d:04d}-seating{job[2]}", record)
            row["record"] = str(path)
        line = None
        if seat_results is None and not unplayed:
            line = (
                f"{labels[culprit]} forfeits deal {d} (seating "
                f"{'-'.join(labels[b] for b in seating)}): {reason}"
                + (f" (record: {row['record']})" if "record" in row else "")
            )
        self._rows.append((order, row, line))

    def close(self) -> MatchResult:
        """The result, its rows and forfeit lines in the order of the rounds."""
        result = self.result
        for _, row, line in sorted(self._rows, key=lambda r: r[0]):
            for s, b in enumerate(row["seating"]):
                result.played[b] += 1
                result.wins[b] += row["win"][s]
                result.points[b].append(row["points"][s])
            result.rounds.append(row)
            if line is not None:
                result.forfeit_lines.append(line)
        for b, count in enumerate(self.unplayed):
            if count:
                result.forfeit_lines.append(
                    f"{result.labels[b]} forfeits {count} more round(s) unplayed: it reached "
                    f"{self.strikes[b].limit} forfeit(s)"
                )
        return result
