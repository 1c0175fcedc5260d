"""A grade's report: the failures as they happen, the JSON-ready dict, its text, and what of it
a student may see.

The teacher's view keeps everything: the seed, each failure's full line, the records and the
agreement with the shipped bots. The student's (``student_view``, which Gradescope's results.json
is built from) holds nothing derived from the deals: a failure on a graded position or deal is
only counted per criterion and kind, because a bot's own crash text can carry what it saw of a
secret deal back to its author.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

SCHEMA = "racko-grade/1"
RECORDS_SHOWN = 5  # lost rounds' records named per criterion in the text report (--json: all)
PRACTICE_LINE = (
    "practice: seed {seed} is the rubric's public seed; the graded run deals from a secret one"
)
SECRET_RECORDS = (
    "(they hold the secret deals: keep them from students until a regrade's new secret)"
)
# A failure's kind as a student sees it, by how its reason starts (the sandbox's and the
# grader's own fixed wording; the bot-written rest of a reason is never shown).
KINDS = (
    ("raised", "crashed"),
    ("did not answer", "did not answer in time"),
    ("did not start", "did not start in time"),
    ("ran out of its clock", "ran out of its clock for the round"),
    ("illegal action", "played an illegal action"),
    ("printed", "printed too much"),
    ("wrote", "wrote something other than a reply"),
    ("its process ended", "its process ended"),
    ("not played", "not played after too many forfeits"),
)


def failure_kind(reason: str) -> str:
    """The fixed words for a failure's ``reason`` (what a student is shown of it)."""
    for start, words in KINDS:
        if reason.startswith(start):
            return words
    return "failed" if "memory" not in reason.lower() else "ran out of memory"


@dataclass
class Failures:
    """The failures of one grading: full lines for the teacher; for a student, the lines that
    hold nothing of a deal and counts per criterion and kind."""

    lines: list[str] = field(default_factory=list)
    public: list[str] = field(default_factory=list)
    counts: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, line: str, where: str | None = None, reason: str = "") -> None:
        """One failure. ``where`` (a criterion): it happened on a graded position or deal, and a
        student sees it only counted, by the kind its ``reason`` names."""
        self.lines.append(line)
        if where is None:
            self.public.append(line)
        else:
            self.count(where, reason)

    def count(self, where: str, reason: str) -> None:
        """Count a failure on a graded position or deal for the student's view only."""
        self.counts.setdefault(where, Counter())[failure_kind(reason)] += 1

    def student_lines(self) -> list[str]:
        """What a student is shown: the public lines, then one line of counts per criterion."""
        lines = list(self.public)
        for where, kinds in self.counts.items():
            total = sum(kinds.values())
            detail = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
            lines.append(f"{where}: {total} failure(s): {detail}")
        return lines


def build_report(
    spec: str,
    rubric: Any,
    seed: int,
    seed_source: str,
    rows: list[dict[str, Any]],
    failures: Failures,
    forfeits: int,
    isolation: str = "bwrap",
    warning: str | None = None,
) -> dict[str, Any]:
    """The teacher's report (a JSON-ready dict); ``report["total"]`` is the points earned. A
    weaker isolation than bubblewrap heads it (``isolated`` False and its ``warning``)."""
    total = sum(r["points"] for r in rows)
    return {
        **({} if warning is None else {"isolated": False, "warning": warning}),
        "schema": SCHEMA,
        "isolation": isolation,
        "bot": spec,
        "rubric": rubric.source,
        "seed": seed,
        "seed_source": seed_source,
        "players": rubric.players,
        "rules": rubric.rules,
        "allow": list(rubric.allow),
        "criteria": rows,
        "total": round(total, 6),
        "max_total": round(rubric.max_points, 6),
        "forfeits": forfeits,
        "failures": failures.lines,
        "student_failures": failures.student_lines(),
    }


TEACHER_ONLY = ("seed", "seed_source", "failures", "student_failures", "agreement")


def student_view(report: dict[str, Any]) -> dict[str, Any]:
    """The report without anything derived from the deals (see the module's docstring)."""
    view = {k: v for k, v in report.items() if k not in TEACHER_ONLY}
    view["criteria"] = [
        {k: v for k, v in row.items() if k != "records"} for row in report["criteria"]
    ]
    view["failures"] = list(report.get("student_failures", report["failures"]))
    return view


def format_report(report: dict[str, Any]) -> str:
    """The report as a Markdown table, then the failures (one line each). A student's view (no
    seed in it) is headed without one."""
    lines = [f"**{report['warning']}**", ""] if "warning" in report else []
    if report.get("seed_source") == "rubric":
        lines += [PRACTICE_LINE.format(seed=report["seed"]), ""]
    seed = f"seed {report['seed']}, " if "seed" in report else ""
    lines += [
        f"grade of {report['bot']} (rubric {report['rubric']}, {seed}{report['players']} players)",
        "",
        "| criterion | result | points |",
        "|---|---|---:|",
    ]
    for row in report["criteria"]:
        lines.append(
            f"| {row['name']} | {row['result']} | {row['points']:g} / {row['max_points']:g} |"
        )
    lines.append(f"| **total** | | **{report['total']:g} / {report['max_total']:g}** |")
    if report["failures"]:
        lines += ["", "failures:"] + [f"- {line}" for line in report["failures"]]
    lines += _agreement_lines(report.get("agreement"))
    lost = [(row["name"], row["records"]["lost"]) for row in report["criteria"] if "records" in row]
    if lost:
        lines += ["", "records of lost rounds (racko replay FILE):"]
        if report.get("seed_source") in ("secret", "entropy"):
            lines.append(SECRET_RECORDS)
        for name, paths in lost:
            shown = ", ".join(paths[:RECORDS_SHOWN]) or "none"
            more = len(paths) - RECORDS_SHOWN
            lines.append(
                f"- {name}: {shown}" + (f" and {more} more (in --json)" if more > 0 else "")
            )
    return "\n".join(lines)


def _agreement_lines(agreement: dict[str, Any] | None) -> list[str]:
    """The teacher's table of agreement with the shipped bots (``racko_apps.grade.agreement``)."""
    if not agreement or not agreement.get("bots"):
        return []
    lines = [
        "",
        f"agreement with the shipped bots on {agreement['positions']} sampled positions "
        f"(flagged at {agreement['flag_at']:.0%} or more):",
        "",
        "| shipped bot | agreement | sha256 | flag |",
        "|---|---:|---|---|",
    ]
    for row in agreement["bots"]:
        flag = "**FLAGGED**" if row["flagged"] else ""
        lines.append(f"| {row['bot']} | {row['agreement']:.1%} | {row['sha256'][:16]} | {flag} |")
    return lines
