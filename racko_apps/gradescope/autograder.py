"""Gradescope: a grade as its ``results.json``, and the autograder that writes it.

    racko grade my_bot:Bot --gradescope results.json      # one grade, in Gradescope's format
    python -m racko_apps.gradescope.autograder --root DIR            # what run_autograder runs

Each criterion of the rubric is a test with its points, its result line and its visibility; the
win rates and the total are leaderboard columns. results.json is built from the report's
student view only: students see it, so it holds no seed and nothing derived from the deals. The
teacher's report goes to stdout, which Gradescope shows to instructors only. Whatever the
submission is or does, and even when the grader itself fails, a valid results.json is written
(score 0 and a one-line reason).
"""

from __future__ import annotations

import ast
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from racko_apps.grade.report import format_report, student_view
from racko_apps.grade.rubric import VISIBILITIES, Rubric, RubricError, load_rubric
from racko_apps.grade.run import grade
from racko_apps.grade.secret import SECRET_FILE, SecretError, graded_seed
from racko_apps.gradescope.schema import Results
from racko_apps.league.submissions import scan
from racko_apps.referee.match import is_python_spec
from racko_apps.sandbox.isolation import ISOLATIONS, add_isolation_arguments, choose_isolation
from racko_apps.sandbox.submission import outside_link
from racko_apps.sandbox.wire import IsolationUnavailableError
from racko_env.cli import OneLineParser
from racko_env.files import write_text_atomic

ROOT = "/autograder"  # Gradescope's folder (source/, submission/, results/)
# stdout visibilities under which only instructors see the autograder's stdout
INSTRUCTORS_ONLY = (None, "hidden")
# how the autograder isolates bots: auto (the strongest that works here, but never none unasked)
ISOLATION_CHOICES = ("auto", *ISOLATIONS)
MAX_FAILURE_LINES = 30  # failures listed in the output students see (the rest are counted)
WHAT_TO_SUBMIT = (
    "submit one NAME.py defining class Bot or a function act(observation), a folder NAME/ "
    "whose __init__.py does (with its data files, e.g. weights as .npz), "
    "or NAME.onnx with its manifest NAME.json"
)


class SubmissionError(ValueError):
    """No bot, or more than one, in a submission; the message says what to submit."""


# ----------------------------------------------------------------------------- results.json


def _validated(**fields: Any) -> dict[str, Any]:
    """``fields`` as a results.json dict, checked against Gradescope's format."""
    return Results.model_validate(fields).model_dump(exclude_none=True)


def _leaderboard(rubric: Rubric, rows: dict[str, dict[str, Any]], total: float) -> list[Any]:
    """One column per win_rate criterion (its win rate, 0 when not played), and the points."""
    board: list[dict[str, Any]] = [
        {"name": f"{c.name} (win rate)", "value": float(rows.get(c.name, {}).get("win_rate", 0.0))}
        for c in rubric.criteria
        if c.check == "win_rate"
    ]
    return [*board, {"name": "points", "value": float(total)}]


def _results(
    rubric: Rubric | None,
    rows: dict[str, dict[str, Any]],
    total: float,
    output: str,
    seconds: float | None,
    stdout_visibility: str | None,
    **extra: Any,
) -> dict[str, Any]:
    """results.json: a test per criterion of ``rubric`` from its report row in ``rows``."""
    tests = [
        {
            "name": c.name,
            "score": rows[c.name]["points"],
            "max_score": c.points,
            "output": rows[c.name]["result"],
            "visibility": c.visibility,
        }
        for c in (rubric.criteria if rubric is not None else ())
    ]
    return _validated(
        score=total,
        execution_time=None if seconds is None else round(seconds),
        output=output,
        output_format="text",
        stdout_visibility=stdout_visibility,
        tests=tests or None,
        leaderboard=None if rubric is None else _leaderboard(rubric, rows, total),
        **extra,
    )


def results_from_report(
    report: dict[str, Any],
    rubric: Rubric,
    *,
    seconds: float | None = None,
    stdout_visibility: str | None = None,
) -> dict[str, Any]:
    """Gradescope's results for a ``grade`` report on ``rubric``: its student view only."""
    view = student_view(report)
    rows = {row["name"]: row for row in view["criteria"]}
    lines = [view["warning"]] if "warning" in view else []
    # Gradescope hides the total while a test is hidden: so does this line (the output is shown)
    shown = all(c.visibility == "visible" for c in rubric.criteria)
    points = f"{view['total']:g} / {view['max_total']:g} points: " if shown else "graded: "
    lines.append(f"{points}{view['bot']} on rubric {view['rubric']} ({view['players']} players)")
    failures = view["failures"]
    lines += failures[:MAX_FAILURE_LINES]
    if len(failures) > MAX_FAILURE_LINES:
        lines.append(f"... and {len(failures) - MAX_FAILURE_LINES} more failure(s)")
    output = "\n".join(lines)
    extra = {"extra_data": {"racko_grade": view}}
    return _results(rubric, rows, report["total"], output, seconds, stdout_visibility, **extra)


def failed_results(
    reason: str,
    rubric: Rubric | None,
    *,
    seconds: float | None = None,
    stdout_visibility: str | None = None,
) -> dict[str, Any]:
    """Results for a submission that could not be graded: score 0 and the one-line ``reason``
    (each criterion of the rubric, if any, a test with 0 points)."""
    reason = " ".join(reason.split())
    criteria = rubric.criteria if rubric is not None else ()
    rows = {c.name: {"points": 0.0, "result": f"not graded: {reason}"} for c in criteria}
    return _results(rubric, rows, 0.0, reason, seconds, stdout_visibility)


def write_results(path: str | Path, results: dict[str, Any]) -> Path:
    """Write a results dict (from ``results_from_report`` or ``failed_results``) atomically."""
    return write_text_atomic(path, json.dumps(_validated(**results), indent=2) + "\n")


def write_report(path: str | Path, report: dict[str, Any], rubric: Rubric) -> Path:
    """``racko grade --gradescope PATH``: the grade's results.json."""
    return write_results(path, results_from_report(report, rubric))


# ----------------------------------------------------------------------------- a submission


def _syntax_errors(folder: Path) -> dict[str, str]:
    """Why each ``.py`` file of ``folder`` that does not parse is no bot (a typo reads as a
    typo, not as 'defines no class Bot')."""
    problems = {}
    for path in sorted(folder.glob("*.py")):
        try:
            ast.parse(path.read_bytes(), filename=path.name)
        except SyntaxError as err:
            problems[path.name] = f"{path.name} does not parse: {err.msg} (line {err.lineno})"
        except ValueError as err:  # null bytes
            problems[path.name] = f"{path.name} does not parse: {err}"
    return problems


def find_submission(folder: Path) -> tuple[str, Path]:
    """The one bot in a submission folder (or in its only subfolder), as a spec for ``grade``,
    and the folder it is graded from; SubmissionError names what was found instead."""
    if not folder.is_dir():
        raise SubmissionError(f"there is no submission folder {folder}")
    entries, skipped = scan(folder)
    if len(entries) > 1:
        names = ", ".join(e.label for e in entries)
        raise SubmissionError(
            f"the submission holds {len(entries)} bots ({names}); {WHAT_TO_SUBMIT} "
            "(helper modules may define neither Bot nor act)"
        )
    if entries:
        return entries[0].spec, folder
    visible = [p for p in folder.iterdir() if not p.name.startswith((".", "__"))]
    if len(visible) == 1 and (link := outside_link(visible)):  # another student's folder, say
        raise SubmissionError(f"no bot in the submission: {link}")
    if len(visible) == 1 and visible[0].is_dir():
        return find_submission(visible[0])
    syntax = _syntax_errors(folder)
    found = [syntax.get(line.partition(":")[0], line) for line in skipped]
    why = f" ({'; '.join(found)})" if found else ""
    raise SubmissionError(f"no bot in the submission{why}: {WHAT_TO_SUBMIT}")


def _readable(spec: str, folder: Path) -> None:
    """Make a Python bot's files readable by all: an isolated bot of a root grader runs as an
    unprivileged user, and Gradescope's files belong to root."""
    if not is_python_spec(spec):
        return
    name = spec.partition(":")[0]
    package = folder / name
    paths = [folder / f"{name}.py"]
    if package.is_dir():
        paths = [package, *package.rglob("*")]
    for path in paths:
        if path.is_symlink():
            continue  # never the mode of what a link points to (the kit's secret, say)
        try:
            extra = 0o555 if path.is_dir() else 0o444
            path.chmod(path.stat().st_mode | extra)
        except OSError:
            pass  # a read-only submission: the sandbox says so if it cannot read it


def _print_report(report: dict[str, Any], stdout_visibility: str | None) -> None:
    """The teacher's report on stdout (instructors only), or the student's view where the kit
    shows stdout to students."""
    if stdout_visibility in INSTRUCTORS_ONLY:
        print(format_report(report))
        print(
            f"seed {report['seed']} ({report['seed_source']}): racko grade BOT --seed "
            f"{report['seed']} reproduces this grade"
        )
    else:
        print(format_report(student_view(report)))


def autograder_isolation(requested: str) -> str:
    """The isolation a graded run uses: ``auto`` is bubblewrap where it works, else a user of its
    own (as root), never none unless asked for by name."""
    if requested != "auto":
        return requested
    isolation, _ = choose_isolation(None)
    if isolation == "none":
        raise IsolationUnavailableError(
            "neither bubblewrap (it needs namespaces) nor a user of its own (it needs root) can "
            "run here"
        )
    return isolation


def autograde(
    root: Path,
    rubric_path: str | Path,
    *,
    isolation: str = "auto",
    stdout_visibility: str | None = None,
    secret: str | Path | None = None,
) -> dict[str, Any]:
    """Grade ``root/submission`` on the rubric, dealing from the ``secret`` file (else fresh
    entropy), and write ``root/results/results.json``. Every failure is a result."""
    start = time.monotonic()
    rubric: Rubric | None = None
    shown = {"stdout_visibility": stdout_visibility}
    try:
        rubric = load_rubric(rubric_path)
        seed, source = graded_seed(secret)
        spec, folder = find_submission(root / "submission")
        _readable(spec, folder)
        chosen = autograder_isolation(isolation)
        report = grade(spec, rubric, seed, folder=folder, isolation=chosen, seed_source=source)
        _print_report(report, stdout_visibility)
        results = results_from_report(report, rubric, seconds=time.monotonic() - start, **shown)
    except (RubricError, SubmissionError, SecretError) as err:
        print(f"not graded: {err}")
        results = failed_results(str(err), rubric, seconds=time.monotonic() - start, **shown)
    except IsolationUnavailableError as err:
        reason = (
            f"the autograder cannot isolate the bot: {err}; instructor: see "
            "docs/coursework/gradescope.md for racko gradescope-kit --isolation"
        )
        print(reason)
        results = failed_results(reason, rubric, seconds=time.monotonic() - start, **shown)
    except Exception as err:  # the grader's own bug: the instructor gets the traceback
        traceback.print_exc(file=sys.stdout)
        reason = f"the autograder failed: {type(err).__name__}: {err}"
        results = failed_results(reason, rubric, seconds=time.monotonic() - start, **shown)
    write_results(root / "results" / "results.json", results)
    return results


def autograde_main(argv: list[str] | None = None) -> int:
    """What ``run_autograder`` runs: exit 0 whenever a results.json was written."""
    parser = OneLineParser(
        prog="python -m racko_apps.gradescope.autograder",
        description="Grade the bot in ROOT/submission on a rubric and write "
        "ROOT/results/results.json (Gradescope's autograder; racko gradescope-kit writes the "
        "run_autograder that calls this).",
    )
    parser.add_argument("--root", type=Path, default=Path(ROOT), help=f"default {ROOT}")
    parser.add_argument("--rubric", type=Path, help="rubric YAML (default ROOT/source/rubric.yaml)")
    parser.add_argument(
        "--secret",
        type=Path,
        help=f"the kit's secret seed (default ROOT/source/{SECRET_FILE}; fresh entropy without)",
    )
    add_isolation_arguments(parser, ISOLATION_CHOICES, "auto")
    parser.add_argument("--stdout-visibility", choices=VISIBILITIES)
    args = parser.parse_args(argv)
    rubric = args.rubric or args.root / "source" / "rubric.yaml"
    results = autograde(
        args.root,
        rubric,
        isolation=args.isolation,
        stdout_visibility=args.stdout_visibility,
        secret=args.secret or args.root / "source" / SECRET_FILE,
    )
    print(f"score {results['score']:g}: wrote {args.root / 'results' / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(autograde_main())
