"""``racko gradescope-kit RUBRIC --out DIR``: the autograder an instructor uploads to Gradescope.

    racko gradescope-kit course.yaml --out kit/           # kit/autograder.zip, to upload
    racko gradescope-kit course.yaml --out kit/ --new-secret     # a regrade: new secret deals

The zip holds ``setup.sh`` (installs bubblewrap, and racko from the wheel in the zip, never by
name from a package index), ``run_autograder``, ``rubric.yaml``, the rubric's staff files and
``secret_seed.json`` (mode 0600; a copy stays in the kit folder, kept by a rebuild unless
``--new-secret``). docs/coursework/gradescope.md describes each.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from racko_apps.grade.rubric import VISIBILITIES, RubricError, load_rubric, rubric_text
from racko_apps.grade.secret import (
    SECRET_FILE,
    SECRET_MODE,
    SecretError,
    new_secret,
    read_secret,
    secret_text,
)
from racko_apps.gradescope.autograder import ISOLATION_CHOICES, ROOT
from racko_apps.sandbox.isolation import add_isolation_arguments
from racko_env.cli import OneLineParser
from racko_env.files import write_bytes_atomic

EXTRA = "eval"  # the pyproject extra setup.sh installs (pydantic included)
VENV = "/opt/racko"  # where setup.sh installs racko
EXECUTABLE = 0o755
SCRIPTS = ("setup.sh", "run_autograder")

SETUP_SH = """#!/usr/bin/env bash
# Written by `racko gradescope-kit`; Gradescope runs it once, as root, to build the image. It
# installs bubblewrap (which isolates each student's bot) and racko, from the wheel in the zip
# (never by name from a package index), into its own virtual environment, @VENV@.
set -euo pipefail
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
@VENV@/bin/python -P -m racko_apps.gradescope.autograder --help > /dev/null
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Written by `racko gradescope-kit`; Gradescope runs it for every submission. It grades the bot
# in $ROOT/submission and writes $ROOT/results/results.json whatever the submission does.
# AUTOGRADER_ROOT and RACKO_PYTHON run it on a folder laid out like Gradescope's, for a trial.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${RACKO_PYTHON:-@VENV@/bin/python}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
"$PYTHON" -P -m racko_apps.gradescope.autograder --root "$ROOT" --rubric "$ROOT/source/rubric.yaml"@FLAGS@
status=$?
# the grader exits 0 whenever it wrote the results: anything else (it was killed) is a failure,
# whatever results.json holds by then
if [ "$status" -ne 0 ] || [ ! -s "$RESULTS" ]; then
    printf '%s\\n' '{"score": 0, "output": "The autograder could not run (exit status '"$status"'); its output says why."}' > "$RESULTS"
fi
exit 0
"""


class KitError(ValueError):
    """The kit cannot be written as asked (one line: what to change)."""


def source_tree() -> Path:
    """The checkout of the racko that runs (where its pyproject.toml is); KitError without one."""
    import racko_apps

    root = Path(racko_apps.__file__).resolve().parents[1]
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file() or 'name = "racko"' not in pyproject.read_text(encoding="utf-8"):
        raise KitError(
            "this racko is installed from a wheel, not run from its checkout: pass that wheel "
            "with --wheel PATH"
        )
    return root


def build_wheel(into: Path) -> Path:
    """Build the wheel of the racko that runs into ``into``, leaving its checkout as it was."""
    root = source_tree()
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(into), str(root)]
    try:
        import setuptools  # noqa: F401

        command.insert(4, "--no-build-isolation")  # no download of the build backend
    except ImportError:
        pass
    leftovers = [root / "build", *root.glob("*.egg-info")]
    existed = {p for p in leftovers if p.exists()}
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=900)
    finally:
        for path in leftovers:
            if path not in existed:
                shutil.rmtree(path, ignore_errors=True)
    wheels = sorted(into.glob("racko-*.whl"))
    if run.returncode != 0 or len(wheels) != 1:
        last = (run.stderr.strip().splitlines() or ["no wheel was written"])[-1]
        raise KitError(f"cannot build racko's wheel from {root}: {last}")
    return wheels[0]


def _checked_wheel(wheel: Path) -> Path:
    if not wheel.is_file():
        raise KitError(f"wheel {str(wheel)!r} does not exist")
    if wheel.suffix != ".whl" or not wheel.name.startswith("racko-"):
        raise KitError(f"{wheel.name!r} is not a racko wheel (racko-VERSION-...whl)")
    return wheel


def staff_files(rubric_path: str | Path) -> dict[str, bytes]:
    """Every file the rubric names, by its path relative to it; KitError for one outside."""
    rubric = load_rubric(rubric_path)
    if rubric.folder is None:
        return {}
    base = Path(rubric.folder)
    files: dict[str, bytes] = {}
    for name in rubric.staff_files():
        path = (base / name).resolve()
        if not path.is_relative_to(base) or Path(name).is_absolute():
            raise KitError(f"staff file {name!r} is outside the rubric's folder {base}")
        found = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in found:
            if "__pycache__" in file.parts:
                continue
            relative = file.relative_to(base).as_posix()
            if relative in (*SCRIPTS, "rubric.yaml", SECRET_FILE):
                raise KitError(f"staff file {relative!r} has the name of a file of the kit")
            files[relative] = file.read_bytes()
    return files


def _zip(files: dict[str, bytes]) -> bytes:
    """The files at the root of a zip, scripts executable, the secret its owner's only, with
    fixed dates (the same kit gives the same bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            mode = EXECUTABLE if name in SCRIPTS else SECRET_MODE if name == SECRET_FILE else 0o644
            info.external_attr = (0o100000 | mode) << 16
            info.create_system = 3  # unix: the mode bits above are read
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def kit_secret(out: Path, new: bool) -> tuple[int, bool]:
    """The kit's secret seed: the one kept in ``out`` (unless ``new``), else a fresh one; and
    whether it is fresh."""
    kept = out / SECRET_FILE
    if kept.exists() and not new:
        return read_secret(kept), False
    return new_secret(), True


def write_kit(
    rubric: str | Path,
    out: Path,
    *,
    wheel: Path | None = None,
    isolation: str = "auto",
    stdout_visibility: str | None = None,
    new_secret: bool = False,
) -> Path:
    """Write the kit's files into ``out`` and all of them zipped as ``out/autograder.zip`` (its
    path). ``wheel``: ship this racko wheel (default: build the running one's). Everything is
    checked before anything is written."""
    text, _ = rubric_text(rubric)
    load_rubric(rubric)
    if isolation not in ISOLATION_CHOICES:
        raise KitError(f"isolation must be one of {', '.join(ISOLATION_CHOICES)}")
    if stdout_visibility is not None and stdout_visibility not in VISIBILITIES:
        raise KitError(f"stdout visibility must be one of {', '.join(VISIBILITIES)}")
    staff = staff_files(rubric)
    seed, _ = kit_secret(out, new_secret)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = _checked_wheel(wheel) if wheel is not None else build_wheel(Path(tmp))
        install = f"{ROOT}/source/{wheel.name}[{EXTRA}]"
        flags = f" --isolation {isolation}" + (
            f" --stdout-visibility {stdout_visibility}" if stdout_visibility else ""
        )
        files: dict[str, bytes] = {
            "setup.sh": SETUP_SH.replace("@VENV@", VENV).replace("@INSTALL@", install).encode(),
            "run_autograder": RUN_AUTOGRADER.replace("@VENV@", VENV)
            .replace("@FLAGS@", flags)
            .encode(),
            "rubric.yaml": text.encode(),
            SECRET_FILE: secret_text(seed).encode(),
            wheel.name: wheel.read_bytes(),
            **staff,
        }
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        write_bytes_atomic(out / name, data)
        mode = EXECUTABLE if name in SCRIPTS else SECRET_MODE if name == SECRET_FILE else None
        if mode is not None:
            (out / name).chmod(mode)
    return write_bytes_atomic(out / "autograder.zip", _zip(files))


def kit_main(argv: list[str] | None = None) -> int:
    """``racko gradescope-kit RUBRIC --out DIR``."""
    parser = OneLineParser(
        prog="racko gradescope-kit",
        description="Write a Gradescope autograder for a rubric, dealing from the kit's secret "
        "seed, zipped as DIR/autograder.zip (docs/coursework/gradescope.md).",
    )
    parser.add_argument("rubric", metavar="RUBRIC", help="rubric YAML, or a shipped one: quick")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="kit folder")
    parser.add_argument(
        "--wheel",
        type=Path,
        metavar="PATH",
        help="ship this racko wheel (default: build the wheel of the racko that runs)",
    )
    parser.add_argument(
        "--new-secret",
        action="store_true",
        help=f"draw a new secret seed even if DIR/{SECRET_FILE} holds one (a regrade)",
    )
    add_isolation_arguments(
        parser,
        ISOLATION_CHOICES,
        "auto",
        "how the autograder runs bots: auto (default: bubblewrap where Gradescope's container "
        "allows namespaces, else a user of its own with resource limits), bwrap, user, or none "
        "(docs/coursework/isolation.md)",
        "--isolation none: a submission could then forge its own results",
    )
    parser.add_argument(
        "--stdout-visibility",
        choices=VISIBILITIES,
        help="show students the grade's table (the autograder's stdout; then without the seed); "
        "default: instructors only",
    )
    args = parser.parse_args(argv)
    try:
        kept = (args.out / SECRET_FILE).exists() and not args.new_secret
        path = write_kit(
            args.rubric,
            args.out,
            wheel=args.wheel,
            isolation=args.isolation,
            stdout_visibility=args.stdout_visibility,
            new_secret=args.new_secret,
        )
    except (RubricError, KitError, SecretError) as err:
        print(f"racko gradescope-kit: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"racko gradescope-kit: error: cannot write {args.out}: {err}", file=sys.stderr)
        return 2
    secret = "kept from" if kept else "new, in"
    print(f"wrote {path} (setup.sh, run_autograder, rubric.yaml and the racko wheel at its root)")
    print(f"secret seed: {secret} {args.out / SECRET_FILE} (keep it; students never see it)")
    print("upload it as the autograder of a Gradescope programming assignment (Ubuntu 22.04+)")
    return 0


if __name__ == "__main__":
    sys.exit(kit_main())
