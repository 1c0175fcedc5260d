"""What of the toolkit a sandboxed bot sees: the modules its ``allow`` list names, nothing more.

A submission may import the toolkit's modules that its rubric (or the league) allows, as
patterns: ``"agents.obs"`` (that module and any below it), ``"agents.*"`` (shell-style), or
``"*"`` (everything, the toolkit as it is). The sandbox then shows the child a staged copy of the
toolkit (``stage``) holding only

* the modules the sandbox itself needs to load and play a bot (``RUNTIME_MODULES``: the bot
  interface, the loader and the exported-bot player, with what they import);
* the allowed modules, with every toolkit module they import (read from their source, their
  functions' imports included), and the data files of allowed packages;

so that everything else (the shipped bots' files in ``agents/pretrained/``, ``expert``,
``search``, the compiled planner) is not there to read, not merely refused by an import hook.
The child also refuses, in one line naming the rule, an import of a hidden module and
``agents.load`` of a hidden built-in or shipped bot (``racko_apps.sandbox.child``).
"""

from __future__ import annotations

import ast
import atexit
import fnmatch
import functools
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

# The toolkit's own packages; the rest of a checkout is never shown to a bot.
TOOLKIT_PACKAGES = ("agents", "racko_env", "racko_apps", "racko_eval", "train")
# What a submission may import unless its rubric says otherwise: the bot interface, the
# observation helpers, the function-bot adapter, the two baselines a student may build on
# (random, heuristic) and the game. Not the shipped bots, not expert, search or the planner.
DEFAULT_ALLOW = (
    "agents.base",
    "agents.obs",
    "agents.function_bot",
    "agents.random_bot",
    "agents.heuristic",
    "racko_env",
)
ALLOW_ALL = ("*",)
# What the child needs to load and play any submission (a class, a function, an exported file).
RUNTIME_MODULES = (
    "racko_apps.sandbox.child",
    "racko_apps.sandbox.jit",
    "agents",
    "agents.base",
    "agents.loader",
    "agents.function_bot",
    "agents.onnx_bot",
    "agents.extras",
)
# The compiled planner's modules: a sandbox that shows any of them warms it up at the start
# (racko_apps.sandbox.jit.warm_planner, whose imports are then shown too).
PLANNER_MODULES = ("agents.expert", "agents.search", "agents.batched", "agents.features")
# The module a built-in or shipped bot's name loads (for the child's one-line refusal).
BUILTIN_MODULES = {
    "random": "agents.random_bot",
    "heuristic": "agents.heuristic",
    "expert": "agents.expert",
    "search": "agents.search",
}
_PATTERN = re.compile(r"[A-Za-z_*][A-Za-z0-9_.*]*")


def toolkit_root() -> str:
    """The folder the toolkit's packages are imported from, for the child's PYTHONPATH."""
    return str(Path(__file__).resolve().parents[2])


def check_allow(allow: Sequence[str] | str) -> tuple[str, ...]:
    """``allow`` as a tuple of module patterns; ValueError in one line naming a bad one."""
    if isinstance(allow, str) or not all(isinstance(p, str) for p in allow):
        raise ValueError(f"allow must be a list of module patterns, got {allow!r}")
    for pattern in allow:
        if not _PATTERN.fullmatch(pattern) or ".." in pattern or pattern.endswith("."):
            raise ValueError(
                f"allow: {pattern!r} is not a module pattern (like 'agents.obs', 'agents.*' or '*')"
            )
    return tuple(allow)


def allows_all(allow: Sequence[str]) -> bool:
    """Whether ``allow`` shows the whole toolkit (nothing staged, nothing refused)."""
    return "*" in allow


def matches(name: str, allow: Iterable[str]) -> bool:
    """Whether module (or data file) ``name`` is allowed by a pattern itself or one above it."""
    return any(name == p or name.startswith(p + ".") or fnmatch.fnmatchcase(name, p) for p in allow)


def refusal(name: str, allow: Sequence[str], what: str = "imports") -> str:
    """The one line a submission that reaches a hidden module fails with."""
    shown = ", ".join(allow) if allow else "nothing"
    return f"{what} {name}, which this rubric or league does not allow (allow: {shown})"


def module_name(relative: Path) -> str:
    """The module (or data file) a toolkit file belongs to: ``agents/expert.py`` and its compiled
    forms in ``__pycache__`` are ``agents.expert``, ``agents/pretrained/racko_2p.onnx`` is
    ``agents.pretrained.racko_2p``, a package's ``__init__.py`` is the package."""
    parts = [p for p in relative.parts[:-1] if p != "__pycache__"]
    stem = relative.name.partition(".")[0]
    return ".".join(parts if stem == "__init__" else [*parts, stem])


@functools.cache
def _sources(root: str) -> dict[str, Path]:
    """Every toolkit module under ``root``, by name, and its source file."""
    out: dict[str, Path] = {}
    for package in TOOLKIT_PACKAGES:
        for path in sorted(Path(root, package).rglob("*.py")):
            if "__pycache__" not in path.parts:
                out[module_name(path.relative_to(root))] = path
    return out


def _type_checking(node: ast.stmt) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(test or ast.Pass())


def _statements(body: list[ast.stmt], deep: bool) -> Iterable[ast.Import | ast.ImportFrom]:
    """The import statements of a module: those it runs when imported, and with ``deep`` those
    inside its functions too (never those under ``if TYPE_CHECKING``)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif _type_checking(node):
            continue
        elif deep or isinstance(node, ast.If | ast.Try | ast.With):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _statements([child], deep)
                elif isinstance(child, ast.ExceptHandler):
                    yield from _statements(child.body, deep)


@functools.cache
def _imports(root: str, name: str, deep: bool) -> frozenset[str]:
    """The toolkit modules that ``name`` imports directly: when imported, or (``deep``) when
    any of its functions runs."""
    sources = _sources(root)
    path = sources[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _statements(ast.parse(path.read_text(encoding="utf-8")).body, deep):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            parts = target.split(".")
            found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return frozenset(m for m in found if m in sources and m != name)


def visible_modules(allow: Sequence[str], root: str | None = None) -> frozenset[str]:
    """The toolkit modules a sandbox with ``allow`` shows (``_visible``), once per process."""
    return _visible(tuple(sorted(set(allow))), root or toolkit_root())


@functools.cache
def _visible(allow: tuple[str, ...], root: str) -> frozenset[str]:
    """The toolkit modules a sandbox with ``allow`` shows: the runtime's, the allowed ones, and
    everything importing them imports (their packages' ``__init__`` included)."""
    sources = _sources(root)
    seen: set[tuple[str, bool]] = set()
    # an allowed module brings everything it uses; the runtime, and packages (above a module, or
    # imported by one), only what importing them imports (the loader imports ``agents.search`` inside a function,
    # for ``search:`` names only)
    todo = [(m, True) for m in sources if matches(m, allow)]
    todo += [(m, False) for m in RUNTIME_MODULES if m in sources]
    if any(matches(m, allow) for m in PLANNER_MODULES):
        todo.append(("racko_apps.sandbox.jit", True))
    while todo:
        name, deep = todo.pop()
        if (name, deep) in seen:
            continue
        seen.add((name, deep))
        parts = name.split(".")
        todo += [(".".join(parts[:i]), False) for i in range(1, len(parts))]  # its packages
        todo += [(m, deep and sources[m].name != "__init__.py") for m in _imports(root, name, deep)]
    return frozenset(name for name, _ in seen)


def _staged(relative: Path, visible: frozenset[str], allow: Sequence[str], root: Path) -> bool:
    """Whether a toolkit file is copied into the stage: a visible module's source or compiled
    form, or a data file of an allowed name or in a visible package's own folder."""
    name = module_name(relative)
    if relative.suffix == ".py" or "__pycache__" in relative.parts:
        return name in visible
    folder = relative.parent
    package = ".".join(folder.parts)
    in_package = (root / folder / "__init__.py").exists() and package in visible
    return matches(name, allow) or in_package


_stages: dict[tuple[str, ...], Path] = {}


def stage(allow: Sequence[str], whole: bool = False) -> Path | None:
    """A folder holding a copy of the toolkit's packages that ``allow`` shows (each package's
    folder is there, empty where nothing of it is), made once per process and removed at its
    exit. Where ``allow`` shows everything: None (the toolkit is used where it is), or with
    ``whole`` a copy of all of it. World-readable: a root grader's bots run as other users."""
    allow = check_allow(allow)
    everything = allows_all(allow)
    if everything and not whole:
        return None
    key = ALLOW_ALL if everything else tuple(sorted(set(allow)))
    if key in _stages and _stages[key].is_dir():
        return _stages[key]
    root = Path(toolkit_root())
    visible = frozenset(_sources(str(root))) if everything else visible_modules(key, str(root))
    folder = Path(tempfile.mkdtemp(prefix="racko-toolkit-"))
    atexit.register(shutil.rmtree, folder, True)
    os.chmod(folder, 0o755)
    for package in TOOLKIT_PACKAGES:
        (folder / package).mkdir(mode=0o755)
        for path in sorted((root / package).rglob("*")):
            relative = path.relative_to(root)
            if not path.is_file() or path.is_symlink():
                continue
            if not everything and not _staged(relative, visible, key, root):
                continue
            target = folder / relative
            for above in reversed(relative.parents):
                if not (folder / above).is_dir():
                    (folder / above).mkdir(mode=0o755)
            shutil.copy2(path, target)  # its times too: compiled files stay valid
            os.chmod(target, 0o644)
    _stages[key] = folder
    return folder
