"""``train/`` shows its architecture: the two scripts at the top, one folder per trainer plus
``train/common/``, the one-file references and the other libraries' examples, imports that point
one way."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FRONT_DOORS = ["ppo", "rllib_ppo"]  # the scripts; every command's logic is in a folder
FOLDERS = ["common", "examples", "network", "reference", "rllib", "sb3"]


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = sorted(_module_name(p) for p in (REPO / "train").rglob("*.py"))


def _path(module: str) -> Path:
    base = REPO / module.replace(".", "/")
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _imports(path: Path, package: str = "train") -> set[str]:
    """Modules of ``package`` a file imports anywhere (top level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == package or node.module.startswith(package + "."):
                found.add(node.module)
                found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith(package + ".")}
    return found


def _train_imports(path: Path) -> set[str]:
    return (_imports(path) & set(MODULES)) - {_module_name(path)}


def test_no_import_cycles_inside_train() -> None:
    """Not even through imports inside functions: the module graph is acyclic."""
    graph = {m: _train_imports(_path(m)) for m in MODULES}
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        if state.get(m) == 1:
            raise AssertionError("import cycle: " + " -> ".join([*path, m]))
        if state.get(m) == 2:
            return
        state[m] = 1
        for dep in sorted(graph[m]):
            visit(dep, [*path, m])
        state[m] = 2

    for m in MODULES:
        visit(m, [])
    assert "train.sb3.run" in graph["train.sb3.exploit"]


def test_the_top_of_train_holds_the_front_doors_and_the_folders() -> None:
    top = sorted(p.stem for p in (REPO / "train").glob("*.py") if p.stem != "__init__")
    assert top == FRONT_DOORS
    assert sorted(p.name for p in (REPO / "train").iterdir() if (p / "__init__.py").exists()) == (
        FOLDERS
    )


def test_the_parts_never_import_a_front_door() -> None:
    """A folder's modules are what the two scripts are built from, never the other way round
    (``tests/test_layers.py`` checks that nothing in the whole tree imports a script)."""
    doors = {f"train.{m}" for m in FRONT_DOORS}
    hits = {m: sorted(_train_imports(_path(m)) & doors) for m in MODULES if m.count(".") == 2}
    assert {m: h for m, h in hits.items() if h} == {}


# The third-party libraries the modules import, loaded once before the forks: importing them is
# most of the cost of a fresh interpreter, and what "alone" checks is racko's own modules (each
# imports what it uses, in an order without cycles), which no child finds already loaded.
PRELOAD = [
    "numpy",
    "numba",
    "gymnasium",
    "pettingzoo",
    "torch",
    "stable_baselines3",
    "sb3_contrib",
    "onnx",
    "onnxruntime",
    "pydantic",
    "yaml",
    "rich",
    "ray.rllib",
    "ray.tune",
]
IMPORT_EACH_ALONE = """
import importlib, json, os, sys, traceback
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except ImportError:
        pass  # an extra that is not installed: the module's own import says so below
ours = sorted(m for m in sys.modules if m.split(".")[0] in ("racko_env", "agents", "racko_eval", "train"))
assert not ours, f"preloaded racko modules: {ours}"
failed = {}
for module in json.loads(sys.argv[2]):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a fresh interpreter's view of racko, one module imported
        os.close(read)
        code = 0
        try:
            importlib.import_module(module)
        except BaseException:
            os.write(write, traceback.format_exc()[-3000:].encode())
            code = 1
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        error = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    if status != 0:
        failed[module] = error or f"exit status {status}"
print(json.dumps(failed))
"""


def _import_each_alone(modules: list[str], preload: list[str] = PRELOAD) -> dict[str, str]:
    """{module: traceback} of the modules that fail to import in a fresh process of their own."""
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH_ALONE, json.dumps(preload), json.dumps(modules)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# torch, Ray and the rest loaded, then a fork per module; the AST checks above are quick
@pytest.mark.slow
def test_each_train_module_imports_alone() -> None:
    """Each module of ``train`` imported first in a process of its own (one fork each)."""
    assert _import_each_alone(MODULES) == {}


def test_the_import_check_sees_a_module_that_does_not_import() -> None:
    failed = _import_each_alone(["train.no_such_module", "train.common.files"], preload=[])
    assert (
        list(failed) == ["train.no_such_module"]
        and "ModuleNotFoundError" in failed["train.no_such_module"]
    )


def test_the_front_door_holds_only_what_ships() -> None:
    configs = sorted(p.name for p in (REPO / "configs").glob("*.yaml"))
    assert configs == [
        "2p.yaml",
        "2p_k5.yaml",
        "2p_rllib.yaml",
        "3p.yaml",
        "4p.yaml",
        "smoke.yaml",
        "smoke_rllib.yaml",
        "smoke_rllib_multiagent.yaml",
        "smoke_structured.yaml",
        "solitaire.yaml",
        "solitaire_k4.yaml",
        "sweep_2p.yaml",
    ]
    for path in (REPO / "configs").glob("*.yaml"):  # no config points at a run folder
        assert "runs/" not in path.read_text().replace(f"out: runs/{path.stem}", "")


def test_every_trainer_uses_the_one_quick_check() -> None:
    assert "racko_eval" in _imports(REPO / "train/common/evaluation.py", "racko_eval")
    for path in ("sb3/evaluation", "rllib/finish"):
        assert "train.common.evaluation" in _imports(REPO / f"train/{path}.py"), path
    text = "\n".join(_path(m).read_text() for m in MODULES)
    assert "def evaluate_vs" not in text and "def win_rate(" not in text
    assert "def wilson_interval" not in text and "def deal_seeds" not in text
    assert "run_tournament" not in "\n".join(_path(m).read_text() for m in MODULES if "rllib" in m)
