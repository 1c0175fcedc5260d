"""A grading rubric (YAML): what ``racko grade`` checks and the points each check is worth.

Checked here, once, so that every later step can trust it; a bad rubric is a RubricError of one
line naming the file and the key. The format is in docs/coursework/grade.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from racko_apps.referee.match import is_bot_file_spec, is_python_spec
from racko_apps.sandbox.toolkit import DEFAULT_ALLOW, check_allow
from racko_apps.sandbox.wire import DEFAULT_ROUND_SECONDS
from racko_env.config import RulesConfig
from racko_env.rules import MAX_PLAYERS, SOLITAIRE
from racko_env.solitaire_space import check_size
from racko_eval.course_files import load_yaml

CHECKS = ("loads", "legal", "speed", "win_rate")
# Solitaire's exact checks (racko_apps.grade.solitaire): the key of their thresholds' limits.
SOLITAIRE_CHECKS = ("solitaire_policy", "solitaire_values", "solitaire_turns")
LIMIT_KEY = {
    "solitaire_policy": "gap_percent",
    "solitaire_values": "max_error",
    "solitaire_turns": "excess_percent",
}
EXACT_CHECKS = ("solitaire_policy", "solitaire_values")  # need a size that solves
DEFAULT_VALUES_FILE = "values.npy"
# When students see a criterion on Gradescope (its test's "visibility"; racko_apps.gradescope).
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
# How a win_rate criterion turns a win rate into points (racko_apps.grade.scoring).
SCORINGS = ("steps", "interpolate", "lower_bound")


class RubricError(ValueError):
    """A rubric file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Criterion:
    name: str
    check: str
    points: float
    opponent: str | None = None
    thresholds: tuple[tuple[float, float], ...] = ()  # (min win rate, points), ascending
    visibility: str = "visible"  # one of VISIBILITIES (Gradescope's test visibility)
    scoring: str = "steps"  # one of SCORINGS (win_rate criteria)


@dataclass(frozen=True)
class Rubric:
    source: str
    players: int
    seed: int
    positions: int
    rounds: int
    time_limit: float
    kill_after: float
    memory_mb: int
    max_forfeits: int
    rules: dict[str, Any]
    criteria: tuple[Criterion, ...] = field(default_factory=tuple)
    round_seconds: float = DEFAULT_ROUND_SECONDS  # a sandboxed bot's clock per round
    # toolkit modules a submission may import (racko_apps.sandbox.bot's patterns)
    allow: tuple[str, ...] = DEFAULT_ALLOW
    # the folder a staff opponent's file is found in (the rubric file's; None: the current one)
    folder: str | None = None

    @property
    def max_points(self) -> float:
        return sum(c.points for c in self.criteria)

    def staff_files(self) -> list[str]:
        """The files the rubric's opponents are, relative to ``folder``: bot files (with their
        manifests) and staff Python modules (``NAME.py`` or a package folder ``NAME/``)."""
        base = Path(self.folder or ".")
        names = [n for c in self.criteria for n in _staff_names(c.opponent or "")]
        return [n for n in dict.fromkeys(names) if (base / n).exists()]


def _staff_names(spec: str) -> list[str]:
    """What a staff opponent's file may be: a bot file and its manifest, or a module ``NAME.py``
    or a package folder ``NAME/`` (none for a built-in or shipped bot)."""
    if is_bot_file_spec(spec):
        return [spec, str(Path(spec).with_suffix(".json"))]
    if is_python_spec(spec):
        module = spec.partition(":")[0]
        return [f"{module}.py", module]
    return []


_TOP_KEYS = {
    "players": int,
    "seed": int,
    "positions": int,
    "rounds": int,
    "time_limit": float,
    "kill_after": float,
    "memory_mb": int,
    "max_forfeits": int,
    "round_seconds": float,
    "rules": dict,
    "allow": list,
    "criteria": list,
}


OPTIONAL_KEYS = ("rules", "round_seconds", "allow")  # {}; Limits' default; the sandbox's default


def _number(value: Any, where: str, kind: type, positive: bool = True) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RubricError(f"{where} must be a number, got {value!r}")
    if kind is int and value != int(value):
        raise RubricError(f"{where} must be a whole number, got {value!r}")
    if positive and value <= 0:
        raise RubricError(f"{where} must be positive, got {value!r}")
    if not math.isfinite(value):
        raise RubricError(f"{where} must be finite, got {value!r}")
    return kind(value)


def parse_rubric(data: Any, source: str, folder: str | None = None) -> Rubric:
    """Check a rubric's content and return it; RubricError names the first problem. ``folder``:
    where its staff opponents' files are (the rubric file's folder)."""
    if not isinstance(data, dict):
        raise RubricError(f"rubric {source}: expected a mapping of keys, got {type(data).__name__}")
    unknown = sorted(set(data) - set(_TOP_KEYS))
    if unknown:
        raise RubricError(
            f"rubric {source}: unknown key {unknown[0]!r}; keys are {', '.join(_TOP_KEYS)}"
        )
    missing = [k for k in _TOP_KEYS if k not in data and k not in OPTIONAL_KEYS]
    if missing:
        raise RubricError(f"rubric {source}: missing key {missing[0]!r}")
    values: dict[str, Any] = {}
    for key, kind in _TOP_KEYS.items():
        if key in ("rules", "criteria", "allow") or key not in data:
            continue
        values[key] = _number(data[key], f"rubric {source}: {key}", kind, positive=key != "seed")
    if not SOLITAIRE <= values["players"] <= MAX_PLAYERS:
        raise RubricError(
            f"rubric {source}: players must be from {SOLITAIRE} (solitaire) to {MAX_PLAYERS}, "
            f"got {values['players']}"
        )
    rules = data.get("rules") or {}
    if not isinstance(rules, dict):
        raise RubricError(f"rubric {source}: rules must be a mapping of rules options")
    try:
        RulesConfig.from_dict({"num_players": values["players"], **rules})
    except (TypeError, ValueError) as err:
        raise RubricError(f"rubric {source}: rules: {err}") from None
    raw = data["criteria"]
    if not isinstance(raw, list) or not raw:
        raise RubricError(f"rubric {source}: criteria must be a non-empty list")
    criteria = [_criterion(c, f"rubric {source}: criteria[{i}]") for i, c in enumerate(raw)]
    names = [c.name for c in criteria]
    for name in names:
        if names.count(name) > 1:
            raise RubricError(f"rubric {source}: two criteria are named {name!r}")
    rubric = Rubric(
        source=source,
        rules=dict(rules),
        criteria=tuple(criteria),
        allow=_allow(data.get("allow"), source),
        folder=folder,
        **values,
    )
    if rubric.players == SOLITAIRE:  # graded exactly: racko_apps.grade.solitaire
        _check_solitaire(rubric)
    return rubric


def _allow(raw: Any, source: str) -> tuple[str, ...]:
    """The ``allow:`` list: module patterns (``agents.obs``, ``agents.*``, ``*``); without one,
    the sandbox's default (no shipped bot, no ``expert``)."""
    if raw is None:
        return DEFAULT_ALLOW
    if not isinstance(raw, list):
        raise RubricError(
            f"rubric {source}: allow must be a list of module patterns such as agents.obs"
        )
    try:
        return check_allow(raw)
    except ValueError as err:
        raise RubricError(f"rubric {source}: {err}") from None


def _criterion(raw: Any, where: str) -> Criterion:
    if not isinstance(raw, dict):
        raise RubricError(f"{where} must be a mapping with name and check")
    allowed = ("name", "check", "points", "opponent", "thresholds", "visibility", "score", "file")
    unknown = sorted(set(raw) - set(allowed))
    if unknown:
        raise RubricError(f"{where}: unknown key {unknown[0]!r}; keys are {', '.join(allowed)}")
    name, check = raw.get("name"), raw.get("check")
    if not isinstance(name, str) or not name.strip():
        raise RubricError(f"{where}: name must be a non-empty string")
    visibility = raw.get("visibility", "visible")
    if visibility not in VISIBILITIES:
        raise RubricError(
            f"{where} ({name}): visibility must be one of {', '.join(VISIBILITIES)}, "
            f"got {visibility!r}"
        )
    if check in SOLITAIRE_CHECKS:  # a value table's file is kept in ``opponent``
        return _solitaire_criterion(raw, where, name, visibility)
    if check not in CHECKS:
        raise RubricError(
            f"{where} ({name}): check must be one of {', '.join(CHECKS)}, got {check!r}"
        )
    if check != "win_rate":
        if "opponent" in raw or "thresholds" in raw or "score" in raw:
            raise RubricError(
                f"{where} ({name}): opponent, thresholds and score are for win_rate checks"
            )
        if "points" not in raw:
            raise RubricError(f"{where} ({name}): missing points")
        points = _number(raw["points"], f"{where} ({name}): points", float, positive=False)
        if points < 0:
            raise RubricError(f"{where} ({name}): points must not be negative")
        return Criterion(name, check, points, visibility=visibility)
    return _win_rate_criterion(raw, where, name, visibility)


def _win_rate_criterion(raw: dict[str, Any], where: str, name: str, visibility: str) -> Criterion:
    if "points" in raw:
        raise RubricError(f"{where} ({name}): a win_rate check gets its points from thresholds")
    opponent = raw.get("opponent")
    if not isinstance(opponent, str) or not opponent:
        raise RubricError(f"{where} ({name}): opponent must be a bot spec such as 'heuristic'")
    scoring = raw.get("score", "steps")
    if scoring not in SCORINGS:
        raise RubricError(
            f"{where} ({name}): score must be one of {', '.join(SCORINGS)}, got {scoring!r}"
        )
    parsed = _thresholds(raw, f"{where} ({name})", "win_rate", top=1.0)
    points = max(p for _, p in parsed)
    return Criterion(name, "win_rate", points, opponent, parsed, visibility, scoring)


def _thresholds(
    raw: dict[str, Any], where: str, key: str, top: float = math.inf
) -> tuple[tuple[float, float], ...]:
    """A criterion's ``thresholds``: (``key``, points) pairs, ascending, ``key`` from 0 to
    ``top`` and points not negative."""
    steps = raw.get("thresholds")
    if not isinstance(steps, list) or not steps:
        raise RubricError(f"{where}: thresholds must be a non-empty list")
    parsed = []
    for k, step in enumerate(steps):
        at = f"{where}: thresholds[{k}]"
        if not isinstance(step, dict) or set(step) != {key, "points"}:
            raise RubricError(f"{at} must be a mapping with exactly {key} and points")
        value = _number(step[key], f"{at}.{key}", float, positive=False)
        pts = _number(step["points"], f"{at}.points", float, positive=False)
        if not 0 <= value <= top:
            bound = "not negative" if top == math.inf else f"from 0 to {top:g}"
            raise RubricError(f"{at}.{key} must be {bound}, got {value}")
        if pts < 0:
            raise RubricError(f"{at}.points must not be negative")
        parsed.append((value, pts))
    return tuple(sorted(parsed))


def _solitaire_criterion(raw: dict[str, Any], where: str, name: str, visibility: str) -> Criterion:
    """A solitaire criterion from its YAML mapping; RubricError names the first problem."""
    check = raw["check"]
    allowed = {"name", "check", "thresholds", "visibility"} | (
        {"file"} if check == "solitaire_values" else set()
    )
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise RubricError(f"{where} ({name}): unknown key {unknown[0]!r} for a {check} check")
    parsed = _thresholds(raw, f"{where} ({name})", LIMIT_KEY[check])
    file = raw.get("file", DEFAULT_VALUES_FILE) if check == "solitaire_values" else None
    if file is not None and (not isinstance(file, str) or not file.endswith(".npy")):
        raise RubricError(f"{where} ({name}): file must be a .npy file name, got {file!r}")
    points = max(p for _, p in parsed)
    return Criterion(name, check, points, file, parsed, visibility)


def _check_solitaire(rubric: Rubric) -> None:
    """A solitaire rubric has only solitaire checks, and a size that solves if it grades
    exactly (``solitaire_turns`` plays deals, at any size)."""
    for crit in rubric.criteria:
        if crit.check not in ("loads", *SOLITAIRE_CHECKS):
            raise RubricError(
                f"rubric {rubric.source}: {crit.name}: a solitaire rubric (players: 1) grades "
                f"with loads, {', '.join(SOLITAIRE_CHECKS)}; {crit.check} plays games"
            )
    checks = {crit.check for crit in rubric.criteria}
    if "solitaire_turns" in checks and not checks & set(EXACT_CHECKS):
        return  # solitaire_turns plays deals: any size the rules allow
    try:
        check_size(*size(rubric))
    except (TypeError, ValueError) as err:
        raise RubricError(f"rubric {rubric.source}: rules: {err}") from None


def size(rubric: Rubric) -> tuple[int, int]:
    """A solitaire rubric's (rack_size, deck_size)."""
    return rubric.rules.get("rack_size", 10), rubric.rules.get("deck_size", 0) or 40


def shipped_rubrics() -> list[str]:
    """Names of the rubrics shipped in racko_apps/grade/rubrics/ (``default``, ``quick``)."""
    files = resources.files("racko_apps.grade.rubrics").iterdir()
    return sorted(f.name.removesuffix(".yaml") for f in files if f.name.endswith(".yaml"))


def load_rubric(path: str | Path | None = None) -> Rubric:
    """The rubric in the YAML file ``path``, or the shipped one of that name (``"quick"``), or
    the shipped default one."""
    import yaml

    text, source = rubric_text(path)
    try:
        data = load_yaml(text)  # the safe loader: a python/object tag is an error
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise RubricError(f"rubric {source} is not valid YAML{where}") from None
    rubric = parse_rubric(data, source, folder=rubric_folder(path))
    _check_staff_files(rubric)
    return rubric


def _check_staff_files(rubric: Rubric) -> None:
    """Every staff opponent's file is there (a missing one is named now, not after the games)."""
    base = Path(rubric.folder or ".")
    for crit in rubric.criteria:
        names = _staff_names(crit.opponent or "")
        if names and not any((base / n).is_file() for n in (names[0], f"{names[1]}/__init__.py")):
            raise RubricError(
                f"rubric {rubric.source}: {crit.name}: opponent {crit.opponent!r} needs "
                f"{names[0]} in {base}"
            )


def _is_shipped(path: str | Path | None) -> bool:
    return path is None or (not Path(path).exists() and str(path) in shipped_rubrics())


def rubric_folder(path: str | Path | None) -> str | None:
    """The folder a rubric file's staff opponents are found in (None for a shipped rubric)."""
    return None if _is_shipped(path) else str(Path(path).resolve().parent)  # type: ignore[arg-type]


def rubric_text(path: str | Path | None = None) -> tuple[str, str]:
    """The text of the rubric ``load_rubric(path)`` reads, and its source name (the Gradescope
    kit copies the text, comments included)."""
    if _is_shipped(path):
        source = f"{path or 'default'}.yaml"
        text = resources.files("racko_apps.grade.rubrics").joinpath(source).read_text()
    else:
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")  # type: ignore[arg-type]
        except FileNotFoundError:
            raise RubricError(f"rubric file {source!r} does not exist") from None
        except (OSError, UnicodeDecodeError) as err:
            raise RubricError(f"rubric file {source!r} cannot be read: {err}") from None
    return text, source
