"""What counts as a bot in a folder of submissions, and the label each is shown by.

A folder of submissions (the league's DIR, one Gradescope submission) holds, and nothing else in
it is touched:

* ``NAME.onnx`` with its manifest ``NAME.json`` beside it (an exported bot, docs/bot-format.md),
  labelled ``NAME.onnx``;
* ``NAME.py`` whose source defines a top-level ``class Bot`` (what ``racko new-bot`` writes), or
  else a top-level function ``act(observation)`` (a bot as a function, agents.function_bot),
  labelled ``NAME``;
* a folder ``NAME/`` holding a package (``NAME/__init__.py`` defining ``Bot`` or ``act``) with its
  own modules and data files (weights as ``.npz``, ``.npy``, ``.onnx``, ``.json``), at most
  ``sandbox.submission.MAX_SUBMISSION_MB`` in all, labelled ``NAME``: a trained model with
  its weights.

NAME is a Python identifier not starting with ``test_`` or ``_`` (an ``.onnx`` file's stem may be
any name of the safe alphabet). A bot that is a link, or a folder holding a link to outside
itself, is left out with one line naming the link (``sandbox.submission.outside_link``). Sources are parsed, never imported, here: the bot itself runs in
its sandbox (racko_apps.sandbox).

Labels go into every report: Markdown tables, HTML, CSV and JSON. A label is therefore made of
the safe alphabet ``[A-Za-z0-9_.-]`` only (``safe_label``); a file or folder whose name is outside
it is left out with one line that shows the name escaped (``shown``), so no name can add a row, a
cell or a heading to a report.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path

from agents import BUILTIN_BOTS
from racko_apps.sandbox.submission import SAFE, outside_link, refused, shown
from racko_eval.course_files import load_yaml

MAX_LABEL = 64  # characters of a label: a table's column stays readable


@dataclass(frozen=True)
class Entry:
    """One bot of a league: ``label`` in tables, ``spec`` to load, ``key`` = label + hash of its
    files (a changed file is a new bot), ``kind`` python, onnx or builtin, ``path`` its file or
    folder (None for a built-in)."""

    label: str
    spec: str
    key: str
    kind: str
    path: Path | None = None


def safe_label(name: str) -> str:
    """``name`` itself when it is a label of the safe alphabet ``[A-Za-z0-9_.-]`` (at most
    ``MAX_LABEL`` characters, not starting with a dot); else ValueError, one line naming it
    escaped."""
    if not SAFE.fullmatch(name) or name.startswith(".") or len(name) > MAX_LABEL:
        raise ValueError(
            f"{shown(name)}: the name is not a label (use at most {MAX_LABEL} letters, digits, "
            "'_', '.' and '-', not starting with '.')"
        )
    return name


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _folder_digest(folder: Path) -> str:
    """A hash of a folder's files, their relative paths included (a renamed file is a change;
    links are not followed, as the sandbox does not)."""
    h = hashlib.sha256()
    for p in sorted(q for q in folder.rglob("*") if q.is_file() and not q.is_symlink()):
        h.update(str(p.relative_to(folder)).encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _top_level(path: Path) -> list[ast.stmt]:
    """The module's top-level statements, parsed, never imported ([] when it does not parse)."""
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []


def defines_bot_class(path: Path) -> bool:
    """True when the module's source has a top-level ``class Bot`` (parsed, not imported)."""
    return any(isinstance(n, ast.ClassDef) and n.name == "Bot" for n in _top_level(path))


def defines_act(path: Path) -> bool:
    """True when the module's source has a top-level ``def act`` (a bot as a function, Kaggle's
    style: agents.function_bot); parsed, not imported."""
    return any(isinstance(n, ast.FunctionDef) and n.name == "act" for n in _top_level(path))


def _attribute(path: Path) -> str:
    """``Bot`` or ``act``: what the module defines to play; '' when neither."""
    return "Bot" if defines_bot_class(path) else "act" if defines_act(path) else ""


def _module_name(name: str) -> bool:
    return name.isidentifier() and name.isascii() and not name.startswith(("test_", "_"))


def _onnx(path: Path) -> tuple[Entry | None, str | None]:
    manifest = path.with_suffix(".json")
    link = outside_link([path, manifest])
    if link:
        return None, link
    if not manifest.is_file():
        return None, f"{shown(path.name)}: no manifest {shown(manifest.name)} beside it"
    label = safe_label(path.name)
    return Entry(label, str(path), f"{label}@{_digest(path, manifest)}", "onnx", path), None


def _module(path: Path) -> tuple[Entry | None, str | None]:
    name = path.stem
    if not _module_name(name):
        return None, None  # a helper, a test or no module name at all: not a bot
    link = outside_link([path])
    if link:
        return None, link
    attribute = _attribute(path)
    if not attribute:
        return None, f"{path.name}: defines no top-level class Bot nor function act"
    return Entry(name, f"{name}:{attribute}", f"{name}@{_digest(path)}", "python", path), None


def _package(path: Path) -> tuple[Entry | None, str | None]:
    name = path.name
    init = path / "__init__.py"
    if not _module_name(name) or not init.is_file():
        return None, None  # not a package: a folder of something else
    link = outside_link([path])
    if link:
        return None, link
    attribute = _attribute(init)
    if not attribute:
        return None, f"{name}/: its __init__.py defines no top-level class Bot nor function act"
    too_big = refused([path])
    if too_big:
        return None, f"{name}/: {too_big}"
    key = f"{name}@{_folder_digest(path)}"
    return Entry(name, f"{name}:{attribute}", key, "python", path), None


def scan(folder: Path) -> tuple[list[Entry], list[str]]:
    """The submissions in ``folder`` (module docstring), sorted by label; and one line per file
    or folder that looks like a bot but is left out, saying why (names shown escaped)."""
    entries: list[Entry] = []
    skipped: list[str] = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        looks = (
            (path.is_dir() and (path / "__init__.py").is_file())
            or path.suffix in (".py", ".onnx")
            and path.is_file()
        )
        if looks:
            try:
                safe_label(path.name)
            except ValueError as err:
                skipped.append(str(err))
                continue
        if path.is_dir():
            found = _package(path)
        elif path.suffix == ".onnx":
            found = _onnx(path)
        elif path.suffix == ".py":
            found = _module(path)
        else:
            continue
        entry, why = found
        if entry is not None:
            entries.append(entry)
        elif why is not None:
            skipped.append(why)
    return sorted(entries, key=lambda e: e.label), skipped


def find_bots(folder: Path) -> dict[str, Path]:
    """The bots of a folder of submissions: label -> its file (``.py``, ``.onnx``) or folder
    (a package); what is left out is not among them (``scan`` says why)."""
    entries, _ = scan(Path(folder))
    return {e.label: e.path for e in entries if e.path is not None}


def league_entries(
    folder: Path | None, baselines: list[str], more: list[Entry] | None = None
) -> tuple[list[Entry], list[str]]:
    """The bots of ``folder`` (None: none), ``more`` and built-in ``baselines``, sorted by
    label, and the lines of what is left out; ValueError for an unknown baseline or two bots of
    one label."""
    entries, skipped = scan(folder) if folder is not None else ([], [])
    entries += more or []
    for name in baselines:
        if name not in BUILTIN_BOTS:
            raise ValueError(f"unknown baseline {name!r}; choose from {', '.join(BUILTIN_BOTS)}")
        entries.append(Entry(name, name, f"{name}@builtin", "builtin"))
    labels = [e.label for e in entries]
    for label in labels:
        if labels.count(label) > 1:
            raise ValueError(f"two bots are labelled {label!r}; rename one")
    return sorted(entries, key=lambda e: e.label), skipped


# ----------------------------------------------------------------------------- Gradescope


@dataclass(frozen=True)
class Submitter:
    """One student of a Gradescope submission (a group submission has several)."""

    name: str
    sid: str
    email: str


@dataclass(frozen=True)
class Exported:
    """One submission of a Gradescope export: its folder, its students, the alias it plays
    under (a label), and its bot (None, with ``why``, when it has none that plays)."""

    folder: Path
    submitters: tuple[Submitter, ...]
    alias: str
    bot: Entry | None
    why: str = ""


def _text(value: object) -> str:
    return "" if value is None else " ".join(str(value).split())


def _submitters(meta: object) -> tuple[Submitter, ...]:
    """The students of one submission's metadata (Gradescope's keys are ``:submitters``,
    ``:name``, ``:sid``, ``:email``; the same without the colon are accepted)."""
    if not isinstance(meta, dict):
        return ()
    people = meta.get(":submitters", meta.get("submitters")) or []
    out = []
    for p in people if isinstance(people, list) else []:
        if isinstance(p, dict):
            get = lambda k, p=p: _text(p.get(f":{k}", p.get(k)))  # noqa: E731
            out.append(Submitter(get("name"), get("sid"), get("email")))
    return tuple(out)


def read_aliases(path: Path | None) -> dict[str, str]:
    """The teacher's aliases: a CSV file of ``key,alias`` rows (a header row is allowed), where
    key is a student's email, SID or the submission's folder name; each alias a label
    (``safe_label``). ValueError, one line, for a bad alias or a key given twice."""
    if path is None:
        return {}
    import csv

    aliases: dict[str, str] = {}
    with open(path, newline="", encoding="utf-8") as f:
        for n, row in enumerate(csv.reader(f), 1):
            if not row or not "".join(row).strip() or row[0].strip().startswith("#"):
                continue
            if len(row) != 2:
                raise ValueError(f"{path}:{n}: expected two columns, key and alias")
            key, alias = row[0].strip(), row[1].strip()
            if n == 1 and alias.lower() == "alias":
                continue  # the header
            try:
                safe_label(alias)
            except ValueError as err:
                raise ValueError(f"{path}:{n}: {err}") from None
            if key in aliases:
                raise ValueError(f"{path}:{n}: {shown(key)} has two aliases")
            aliases[key] = alias
    return aliases


def _alias(folder: Path, people: tuple[Submitter, ...], aliases: dict[str, str]) -> str:
    """The teacher's alias for a submission (by folder name, then each student's email or SID),
    else one made from the folder's name (Gradescope's ``submission_NNN``: no student's name)."""
    for key in (folder.name, *(k for p in people for k in (p.email, p.sid) if k)):
        if key in aliases:
            return aliases[key]
    digits = "".join(c for c in folder.name if c.isdigit())
    if digits:
        return f"sub_{digits}"
    return f"sub_{hashlib.sha256(folder.name.encode()).hexdigest()[:8]}"


def read_gradescope_export(folder: Path, aliases: dict[str, str] | None = None) -> list[Exported]:
    """The submissions of a Gradescope export ("Export submissions": one folder per
    submission, with ``submission_metadata.yml`` at the top mapping each folder to its
    students), each with its alias and its bot: the one bot its folder holds (``scan``).
    ValueError, one line, when there is no metadata or two submissions share an alias."""
    import yaml

    folder = Path(folder)
    path = folder / "submission_metadata.yml"
    if not path.is_file():
        raise ValueError(f"{folder} is not a Gradescope export: no submission_metadata.yml")
    try:
        metadata = load_yaml(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not YAML ({' '.join(str(err).split())})") from None
    if not isinstance(metadata, dict):
        raise ValueError(f"{path}: expected a mapping of submission folders")
    out: list[Exported] = []
    for name in sorted(str(k) for k in metadata):
        sub = folder / name
        if not SAFE.fullmatch(name) or not sub.is_dir():
            continue  # a name that is no folder of the export: nothing to play
        people = _submitters(metadata[name])
        alias = _alias(sub, people, aliases or {})
        entries, skipped = scan(sub)
        if len(entries) == 1:
            e = entries[0]
            key = f"{alias}@{e.key.partition('@')[2]}"
            out.append(Exported(sub, people, alias, Entry(alias, e.spec, key, e.kind, e.path)))
        else:
            why = f"holds {len(entries)} bots" if entries else "holds no bot"
            why += "".join(f"; {s}" for s in skipped)
            out.append(Exported(sub, people, alias, None, why))
    seen: dict[str, str] = {}
    for s in out:
        if s.alias in seen:
            raise ValueError(
                f"submissions {seen[s.alias]} and {s.folder.name} share alias {s.alias}"
            )
        seen[s.alias] = s.folder.name
    return out
