"""``train/`` says what ships: one module per trainer, imports that point one way (issue 11, item 8)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MODULES = sorted(p.stem for p in (REPO / "train").glob("*.py") if p.stem != "__init__")


def _train_imports(path: Path) -> set[str]:
    """``train.*`` modules a file imports anywhere (top level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "train":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("train."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("train."):
                    found.add(alias.name.split(".")[1])
    return found - {path.stem}


def test_no_import_cycles_inside_train() -> None:
    """Not even through imports inside functions: the module graph is acyclic."""
    graph = {m: _train_imports(REPO / "train" / f"{m}.py") & set(MODULES) for m in MODULES}
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
    assert "ppo" in graph["export"] and "value_iteration" in graph["export"]


@pytest.mark.parametrize("module", MODULES)
def test_each_train_module_imports_alone(module: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", f"import train.{module}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr


def test_the_front_door_holds_only_what_ships() -> None:
    configs = sorted(p.name for p in (REPO / "configs").glob("*.yaml"))
    assert configs == [
        "2p.yaml",
        "2p_rllib.yaml",
        "2p_value.yaml",
        "3p.yaml",
        "3p_value.yaml",
        "4p.yaml",
        "4p_value.yaml",
        "smoke.yaml",
        "smoke_rllib.yaml",
        "smoke_structured.yaml",
        "smoke_value.yaml",
    ]
    for path in (REPO / "configs").glob("*.yaml"):  # no config points at a run folder
        assert "runs/" not in path.read_text().replace(f"out: runs/{path.stem}", "")
    import train.pretrain as pretrain

    assert not hasattr(pretrain, "dagger_run") and callable(pretrain.collect_teacher_data)


def test_every_trainer_uses_the_one_quick_check() -> None:
    for module in ("ppo", "value_iteration"):
        assert "quick_eval" in _train_imports(REPO / "train" / f"{module}.py")
    text = "\n".join((REPO / "train" / f"{m}.py").read_text() for m in MODULES if m != "quick_eval")
    assert "def evaluate_vs" not in text and "def win_rate(" not in text
