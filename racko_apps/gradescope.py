"""Gradescope: a grade as its ``results.json``, and the autograder an instructor uploads.

    racko grade my_bot:Bot --gradescope results.json      # one grade, in Gradescope's format
    racko gradescope-kit course.yaml --out kit/           # kit/autograder.zip, to upload
    racko gradescope-kit quick --out kit/ --wheel dist/racko-0.1.0-py3-none-any.whl

Most university courses run their autograders on Gradescope, which builds a Docker image (Ubuntu)
from an uploaded zip holding ``setup.sh`` (run once, as root) and ``run_autograder`` (run for
every submission, from ``/autograder``), puts the student's files in ``/autograder/submission``
and reads ``/autograder/results/results.json`` (format: ``racko_apps.gradescope_schema``, which
follows Gradescope's specification). Here:

* each criterion of the rubric is a test with its points (``score``, ``max_score``), its result
  line as ``output`` and its ``visibility`` from the rubric (default ``visible``); the total is
  the ``score``; the win rates (and the total) are ``leaderboard`` columns; the full
  ``racko-grade/1`` report is kept in ``extra_data``;
* ``setup.sh`` installs bubblewrap (the sandbox of students' bots) and racko with its
  ``eval`` extra into a virtual environment, ``/opt/racko``: by default this very version
  from the package index, or, with ``--wheel``, a wheel shipped inside the zip;
* ``run_autograder`` finds the one bot in the submission (what ``racko league`` takes: ``NAME.py``
  with ``class Bot`` or a function ``act``, or ``NAME.onnx`` with ``NAME.json``), grades it
  sandboxed, prints the grade's table (Gradescope shows the autograder's stdout to instructors)
  and writes ``results.json``. Whatever the submission is or does (no bot, a syntax error, a
  crash, an attack), and even when the grader itself fails, a valid ``results.json`` is written:
  score 0 and a one-line reason, never a missing file. ``AUTOGRADER_ROOT`` (default
  ``/autograder``) and ``RACKO_PYTHON`` move it onto a folder laid out like Gradescope's, for a
  trial run.

``python -m racko_apps.gradescope --root DIR`` is what ``run_autograder`` calls.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import sys
import time
import traceback
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

from racko_apps.grade import (
    VISIBILITIES,
    Rubric,
    RubricError,
    format_report,
    grade,
    load_rubric,
    rubric_text,
)
from racko_apps.gradescope_schema import Results
from racko_apps.league import find_bots
from racko_apps.referee import is_python_spec
from racko_apps.sandbox import IsolationUnavailableError
from racko_env.files import write_bytes_atomic, write_text_atomic

EXTRA = "eval"  # the pyproject extra setup.sh installs (pydantic included)
ROOT = "/autograder"  # Gradescope's folder (source/, submission/, results/)
VENV = "/opt/racko"  # where setup.sh installs racko
MAX_FAILURE_LINES = 30  # failures listed in the output students see (the rest are counted)
WHAT_TO_SUBMIT = (
    "submit one NAME.py defining class Bot or a function act(observation), "
    "or NAME.onnx with its manifest NAME.json"
)


class SubmissionError(ValueError):
    """No bot, or more than one, in a submission; the message says what to submit."""


class KitError(ValueError):
    """The kit cannot be written as asked (one line: what to change)."""


# ----------------------------------------------------------------------------- results.json


def _validated(**fields: Any) -> dict[str, Any]:
    """``fields`` as a results.json dict, checked against Gradescope's format (a ValueError, not a
    file Gradescope would misread)."""
    return Results.model_validate(fields).model_dump(exclude_none=True)


def _leaderboard(rubric: Rubric, rows: dict[str, dict[str, Any]], total: float) -> list[Any]:
    """One column per win_rate criterion (its win rate, 0 when not played), and the points."""
    board: list[dict[str, Any]] = [
        {"name": f"{c.name} (win rate)", "value": float(rows.get(c.name, {}).get("win_rate", 0.0))}
        for c in rubric.criteria
        if c.check == "win_rate"
    ]
    return [*board, {"name": "points", "value": float(total)}]


def results_from_report(
    report: dict[str, Any],
    rubric: Rubric,
    *,
    seconds: float | None = None,
    stdout_visibility: str | None = None,
) -> dict[str, Any]:
    """Gradescope's results for a ``racko_apps.grade.grade`` report on ``rubric``."""
    rows = {row["name"]: row for row in report["criteria"]}
    tests = [
        {
            "name": c.name,
            "score": rows[c.name]["points"],
            "max_score": c.points,
            "output": rows[c.name]["result"],
            "visibility": c.visibility,
        }
        for c in rubric.criteria
    ]
    lines = [report["warning"]] if "warning" in report else []
    # Gradescope hides the total while a test is hidden: so does this line (the output is shown)
    shown = all(c.visibility == "visible" for c in rubric.criteria)
    points = f"{report['total']:g} / {report['max_total']:g} points: " if shown else "graded: "
    lines.append(
        f"{points}{report['bot']} on rubric {report['rubric']} "
        f"(seed {report['seed']}, {report['players']} players)"
    )
    failures = report["failures"]
    lines += failures[:MAX_FAILURE_LINES]
    if len(failures) > MAX_FAILURE_LINES:
        lines.append(f"... and {len(failures) - MAX_FAILURE_LINES} more failure(s)")
    return _validated(
        score=report["total"],
        execution_time=None if seconds is None else round(seconds),
        output="\n".join(lines),
        output_format="text",
        stdout_visibility=stdout_visibility,
        tests=tests,
        leaderboard=_leaderboard(rubric, rows, report["total"]),
        extra_data={"racko_grade": report},
    )


def failed_results(
    reason: str,
    rubric: Rubric | None,
    *,
    seconds: float | None = None,
    stdout_visibility: str | None = None,
) -> dict[str, Any]:
    """Results for a submission that could not be graded: score 0 and the one-line ``reason``
    (every criterion of the rubric, when there is one, a test with 0 points)."""
    reason = " ".join(reason.split())
    tests = [
        {
            "name": c.name,
            "score": 0.0,
            "max_score": c.points,
            "output": f"not graded: {reason}",
            "visibility": c.visibility,
        }
        for c in (rubric.criteria if rubric is not None else ())
    ]
    return _validated(
        score=0.0,
        execution_time=None if seconds is None else round(seconds),
        output=reason,
        output_format="text",
        stdout_visibility=stdout_visibility,
        tests=tests or None,
        leaderboard=_leaderboard(rubric, {}, 0.0) if rubric is not None else None,
    )


def write_results(path: str | Path, results: dict[str, Any]) -> Path:
    """Write a results dict (from ``results_from_report`` or ``failed_results``) atomically."""
    return write_text_atomic(path, json.dumps(_validated(**results), indent=2) + "\n")


def write_report(path: str | Path, report: dict[str, Any], rubric: Rubric) -> Path:
    """``racko grade --gradescope PATH``: the grade's results.json."""
    return write_results(path, results_from_report(report, rubric))


# ----------------------------------------------------------------------------- a submission


def _syntax_errors(folder: Path) -> dict[str, str]:
    """Why each ``.py`` file of ``folder`` that does not parse is no bot (a student's typo must
    read as a typo, not as 'defines no class Bot')."""
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
    """The one bot in a submission folder, as a spec for ``grade``, and the folder it is graded
    from. A submission holding only one folder (a zip of the folder) is looked into. Raises
    SubmissionError naming what was found instead."""
    if not folder.is_dir():
        raise SubmissionError(f"there is no submission folder {folder}")
    entries, skipped = find_bots(folder, [])
    if len(entries) > 1:
        names = ", ".join(e.label for e in entries)
        raise SubmissionError(
            f"the submission holds {len(entries)} bots ({names}); {WHAT_TO_SUBMIT} "
            "(helper modules may define neither Bot nor act)"
        )
    if entries:
        return entries[0].spec, folder
    visible = [p for p in folder.iterdir() if not p.name.startswith((".", "__"))]
    if len(visible) == 1 and visible[0].is_dir():
        return find_submission(visible[0])
    syntax = _syntax_errors(folder)
    found = [syntax.get(line.partition(":")[0], line) for line in skipped]
    why = f" ({'; '.join(found)})" if found else ""
    raise SubmissionError(f"no bot in the submission{why}: {WHAT_TO_SUBMIT}")


def _readable(spec: str, folder: Path) -> None:
    """Make a Python bot's file readable by all: an isolated bot of a root grader runs as
    ``nobody`` (racko_apps.sandbox), and Gradescope's files belong to root."""
    if not is_python_spec(spec):
        return
    path = folder / f"{spec.partition(':')[0]}.py"
    try:
        path.chmod(path.stat().st_mode | 0o444)
    except OSError:
        pass  # a read-only submission: the sandbox says so if it cannot read it


def autograde(
    root: Path,
    rubric_path: str | Path,
    *,
    isolate: bool = True,
    stdout_visibility: str | None = None,
) -> dict[str, Any]:
    """Grade ``root/submission`` on the rubric and write ``root/results/results.json``; return
    the results. Never raises for anything a submission does: every failure is a result."""
    start = time.monotonic()
    rubric: Rubric | None = None
    shown = {"stdout_visibility": stdout_visibility}
    try:
        rubric = load_rubric(rubric_path)
        spec, folder = find_submission(root / "submission")
        _readable(spec, folder)
        report = grade(spec, rubric, folder=folder, isolate=isolate)
        print(format_report(report))
        results = results_from_report(report, rubric, seconds=time.monotonic() - start, **shown)
    except (RubricError, SubmissionError) as err:
        print(f"not graded: {err}")
        results = failed_results(str(err), rubric, seconds=time.monotonic() - start, **shown)
    except IsolationUnavailableError as err:
        reason = (
            f"the autograder cannot isolate the bot: {err}; instructor: see docs/coursework.md "
            "(Gradescope) for racko gradescope-kit --no-isolation"
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
    parser = argparse.ArgumentParser(
        prog="python -m racko_apps.gradescope",
        description="Grade the bot in ROOT/submission on a rubric and write "
        "ROOT/results/results.json (Gradescope's autograder; racko gradescope-kit writes the "
        "run_autograder that calls this).",
    )
    parser.add_argument("--root", type=Path, default=Path(ROOT), help=f"default {ROOT}")
    parser.add_argument("--rubric", type=Path, help="rubric YAML (default ROOT/source/rubric.yaml)")
    parser.add_argument("--no-isolation", action="store_true", help="grade without bubblewrap")
    parser.add_argument("--stdout-visibility", choices=VISIBILITIES)
    args = parser.parse_args(argv)
    rubric = args.rubric or args.root / "source" / "rubric.yaml"
    results = autograde(
        args.root,
        rubric,
        isolate=not args.no_isolation,
        stdout_visibility=args.stdout_visibility,
    )
    print(f"score {results['score']:g}: wrote {args.root / 'results' / 'results.json'}")
    return 0


# ----------------------------------------------------------------------------- the kit

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 22.04 or
# newer). Written by `racko gradescope-kit`: it installs bubblewrap, which isolates each
# student's bot (racko's docs/coursework.md, "Student code is untrusted"), and racko into its own
# virtual environment, @VENV@.
set -euo pipefail
# What pip installs: racko with its 'eval' extra, this version from the package index, or
# the wheel shipped in the zip (racko gradescope-kit --wheel), which Gradescope unpacks here.
RACKO='@INSTALL@'
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends bubblewrap python3 python3-venv
PYTHON=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    # racko needs Python 3.11 or newer; Ubuntu 22.04's python3 is 3.10
    apt-get install -y --no-install-recommends python3.11 python3.11-venv || {
        echo "racko needs Python 3.11 or newer: choose a newer Ubuntu base image" >&2
        exit 1
    }
    PYTHON=python3.11
fi
"$PYTHON" -m venv @VENV@
@VENV@/bin/python -m pip install --upgrade pip
@VENV@/bin/python -m pip install "$RACKO"
# fail the build now, not at every submission, if racko's autograder cannot start
@VENV@/bin/python -P -m racko_apps.gradescope --help > /dev/null
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission, from /autograder. Written by `racko gradescope-kit`:
# it grades the bot in $ROOT/submission on $ROOT/source/rubric.yaml and writes
# $ROOT/results/results.json. A results.json is written whatever the submission does; the
# table of the grade goes to stdout, which Gradescope shows to instructors.
# AUTOGRADER_ROOT (default /autograder) and RACKO_PYTHON (default @VENV@/bin/python) run it
# on a folder laid out like Gradescope's, for a trial.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${RACKO_PYTHON:-@VENV@/bin/python}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
"$PYTHON" -P -m racko_apps.gradescope --root "$ROOT" --rubric "$ROOT/source/rubric.yaml"@FLAGS@
status=$?
# the grader exits 0 whenever it wrote the results: anything else (it was killed) is a failure,
# whatever results.json holds by then
if [ "$status" -ne 0 ] || [ ! -s "$RESULTS" ]; then
    printf '%s\\n' '{"score": 0, "output": "The autograder could not run (exit status '"$status"'); its output says why."}' > "$RESULTS"
fi
exit 0
"""

EXECUTABLE = 0o755


def racko_version() -> str:
    """The installed racko's version (what setup.sh installs by default); KitError without one."""
    try:
        return metadata.version("racko")
    except metadata.PackageNotFoundError:
        raise KitError(
            "racko is not installed as a package here, so its version is unknown: pass --wheel "
            "PATH (build one with: pip wheel --no-deps -w dist .)"
        ) from None


def _zip(files: dict[str, bytes]) -> bytes:
    """The files at the root of a zip (as Gradescope requires), scripts executable, with fixed
    dates so that the same kit gives the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            mode = EXECUTABLE if name in ("setup.sh", "run_autograder") else 0o644
            info.external_attr = (0o100000 | mode) << 16
            info.create_system = 3  # unix: the mode bits above are read
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def write_kit(
    rubric: str | Path,
    out: Path,
    *,
    wheel: Path | None = None,
    isolate: bool = True,
    stdout_visibility: str | None = None,
) -> Path:
    """Write ``setup.sh``, ``run_autograder``, ``rubric.yaml`` (and the wheel) into ``out`` and
    all of them zipped as ``out/autograder.zip``; return the zip's path. The rubric (a file or a
    shipped name) is checked first: a bad one is a RubricError, and nothing is written."""
    text, _ = rubric_text(rubric)
    load_rubric(rubric)
    files: dict[str, bytes] = {}
    if wheel is not None:
        if not wheel.is_file():
            raise KitError(f"wheel {str(wheel)!r} does not exist")
        if wheel.suffix != ".whl" or not wheel.name.startswith("racko-"):
            raise KitError(f"{wheel.name!r} is not a racko wheel (racko-VERSION-...whl)")
        install = f"{ROOT}/source/{wheel.name}[{EXTRA}]"
    else:
        install = f"racko[{EXTRA}]=={racko_version()}"
    if stdout_visibility is not None and stdout_visibility not in VISIBILITIES:
        raise KitError(f"stdout visibility must be one of {', '.join(VISIBILITIES)}")
    flags = ("" if isolate else " --no-isolation") + (
        f" --stdout-visibility {stdout_visibility}" if stdout_visibility else ""
    )
    files["setup.sh"] = SETUP_SH.replace("@VENV@", VENV).replace("@INSTALL@", install).encode()
    files["run_autograder"] = (
        RUN_AUTOGRADER.replace("@VENV@", VENV).replace("@FLAGS@", flags).encode()
    )
    files["rubric.yaml"] = text.encode()
    if wheel is not None:
        files[wheel.name] = wheel.read_bytes()
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        write_bytes_atomic(out / name, data)
        if name in ("setup.sh", "run_autograder"):
            (out / name).chmod(EXECUTABLE)
    return write_bytes_atomic(out / "autograder.zip", _zip(files))


def kit_main(argv: list[str] | None = None) -> int:
    """``racko gradescope-kit RUBRIC --out DIR``."""
    parser = argparse.ArgumentParser(
        prog="racko gradescope-kit",
        description="Write a Gradescope autograder for a rubric: setup.sh (installs bubblewrap "
        "and racko), run_autograder (grades /autograder/submission into "
        "/autograder/results/results.json) and the rubric, zipped as DIR/autograder.zip.",
    )
    parser.add_argument("rubric", metavar="RUBRIC", help="rubric YAML, or a shipped one: quick")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="kit folder")
    parser.add_argument(
        "--wheel",
        type=Path,
        metavar="PATH",
        help="install racko from this wheel, shipped in the zip (default: the package index, "
        "this version)",
    )
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="grade without bubblewrap, where Gradescope's container forbids namespaces: a "
        "submission could then forge its own results (docs/coursework.md)",
    )
    parser.add_argument(
        "--stdout-visibility",
        choices=VISIBILITIES,
        help="show students the grade's table (the autograder's stdout); default: instructors only",
    )
    args = parser.parse_args(argv)
    try:
        path = write_kit(
            args.rubric,
            args.out,
            wheel=args.wheel,
            isolate=not args.no_isolation,
            stdout_visibility=args.stdout_visibility,
        )
    except (RubricError, KitError) as err:
        print(f"racko gradescope-kit: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"racko gradescope-kit: error: cannot write {args.out}: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path} (setup.sh, run_autograder, rubric.yaml at its root)")
    print("upload it as the autograder of a Gradescope programming assignment (Ubuntu 22.04+)")
    return 0


if __name__ == "__main__":
    sys.exit(autograde_main())
