"""Layers point one way: racko_env never loads agents, train, torch or stable-baselines3, and the
evaluator (racko_eval) never loads train, racko_apps or torch.

Bot names in the Gymnasium view still work after ``import racko_env`` alone, through the
``racko.bots`` entry point that ``pyproject.toml`` declares (``racko_env/opponents.py``).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import racko_env.opponents

ROOT = Path(__file__).resolve().parents[1]
ABOVE = ("agents", "train", "racko_apps", "torch", "stable_baselines3", "sb3_contrib")


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )


@pytest.mark.parametrize(
    "module",
    [
        "racko_env",
        "racko_env.racko_v1",
        "racko_env.gym_env",
        "racko_env.vector",
        "racko_env.vector_env",
    ],
)
def test_importing_the_env_loads_nothing_above_it(module: str) -> None:
    code = f"""
import json, sys
import {module}
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {ABOVE!r})))
"""
    out = _run(code)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


FIRST_PARTY = ("racko_env", "agents", "racko_eval", "train", "racko_apps")
# a string that names a module of racko, as an entry point ("agents.loader:load") or alone
MODULE_STRING = re.compile(rf"^(?:{'|'.join(FIRST_PARTY)})(?:\.\w+)+(?::[\w.]+)?$")


def _is_module(name: str, root: Path) -> bool:
    base = root / name.replace(".", "/")
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _module_string(node: ast.AST, root: Path) -> str | None:
    """The module a string constant names: ``"pkg.mod:attr"`` (an entry point, Gymnasium's
    ``entry_point=``), or ``"pkg.mod"`` where that module exists (``"train.log"`` is a file)."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None
    text = node.value
    if not MODULE_STRING.match(text):
        return None
    module = text.split(":")[0]
    return module if ":" in text or _is_module(module, root) else None


def _imports_above(path: Path, root: Path = ROOT, above: tuple[str, ...] = ABOVE) -> list[str]:
    """Every import of a package above racko_env in a file, at any depth (functions included),
    also through importlib.import_module / __import__ with a literal name, and every string that
    names a module of racko (an entry point: ``vector_entry_point="agents.x:Env"``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            subs = [f"{node.module}.{a.name}" for a in node.names]  # from train import ppo
            names = [node.module, *(m for m in subs if _is_module(m, root))]
        elif (module := _module_string(node, root)) is not None:
            names = [module]  # import_module("train.x") / __import__ strings are caught here too
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        found += [f"{path.relative_to(root)}:{node.lineno}: {n}" for n in names]
    found = list(dict.fromkeys(found))  # import_module("x.y") is a call and a string: once
    return [f for f in found if f.rsplit(": ", 1)[1].split(".")[0] in above]


def test_no_file_under_racko_env_imports_a_layer_above() -> None:
    files = sorted((ROOT / "racko_env").rglob("*.py"))
    assert len(files) > 10
    assert [hit for f in files for hit in _imports_above(f)] == []


EVAL_ABOVE = ("train", "racko_apps", "torch", "stable_baselines3", "sb3_contrib", "ray")


def test_no_file_under_racko_eval_imports_train_apps_or_torch() -> None:
    files = sorted((ROOT / "racko_eval").rglob("*.py"))
    assert len(files) >= 4
    assert [hit for f in files for hit in _imports_above(f, above=EVAL_ABOVE)] == []


def test_importing_the_evaluator_loads_no_torch_and_no_trainer() -> None:
    code = f"""
import json, sys
import racko_eval, racko_eval.evaluate
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {EVAL_ABOVE!r})))
"""
    out = _run(code)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_test_file_names_are_unique_across_test_folders() -> None:
    """pytest imports test files by their name (tests/conftest.py puts every folder on the path)."""
    names = [p.name for p in (ROOT / "tests").rglob("test_*.py")]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


def test_scripts_run_as_modules_without_patching_sys_path() -> None:
    """Benchmarks run as ``python -m benchmarks.NAME`` from the repository root (or
    from the installed package): none edits ``sys.path`` to find the packages."""
    patched = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "benchmarks").rglob("*.py"))
        if re.search(r"sys\.path\.(insert|append)|sys\.path\[", p.read_text())
    ]
    assert patched == []
    assert (ROOT / "benchmarks" / "__init__.py").is_file()


def test_the_import_scan_sees_imports_hidden_in_functions(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import numpy\n"
        "def f():\n    import agents.loader\n    return importlib.import_module('train.ppo')\n"
    )
    hits = _imports_above(sample, root=tmp_path)
    assert [h.rsplit(": ", 1)[1] for h in hits] == ["agents.loader", "train.ppo"]


def _entry_point_dir(tmp_path: Path) -> Path:
    """A dist-info declaring this checkout's ``racko.bots`` entry points (what pip install writes
    from pyproject.toml), so the test sees this tree's declaration, not an older install's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    group = project["entry-points"][racko_env.opponents.ENTRY_POINT_GROUP]
    info = tmp_path / "racko_entry_points_under_test-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: racko-entry-points-under-test\nVersion: 0.0\n"
    )
    lines = [f"[{racko_env.opponents.ENTRY_POINT_GROUP}]"]
    lines += [f"{name} = {value}" for name, value in group.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_pyproject_names_agents_load_as_the_bot_resolver() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["racko.bots"] == {"agents": "agents.loader:load"}


def test_gymnasium_make_with_bot_names_after_importing_racko_env_alone(tmp_path: Path) -> None:
    code = """
import sys
import gymnasium
import racko_env
assert "agents" not in sys.modules
env = gymnasium.make("racko/Racko-v1", num_players=2, opponents=["heuristic"])
obs, info = env.reset(seed=0)
assert obs.shape == (racko_env.observation.OBS_SIZE,)
bot = env.unwrapped.opponent_pool[0]
print(type(bot).__module__, "agents" in sys.modules)
"""
    out = _run(code, PYTHONPATH=str(_entry_point_dir(tmp_path)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["agents.heuristic", "True"]


def test_a_bot_name_without_any_resolver_is_one_clear_error(monkeypatch) -> None:
    from racko_env.gym_env import RackoGymEnv

    monkeypatch.setattr(racko_env.opponents, "_registered", [])
    monkeypatch.setattr(racko_env.opponents, "_discovered", [])
    with pytest.raises(LookupError, match=r"'heuristic' is a bot name, but no bot resolver") as err:
        RackoGymEnv(num_players=2, opponents=["heuristic"])
    assert "\n" not in str(err.value) and "pip install -e ." in str(err.value)


def test_bot_objects_need_no_resolver(monkeypatch) -> None:
    from racko_env.gym_env import RackoGymEnv

    class First:
        def reset(self) -> None:
            pass

        def act(self, observation: dict) -> int:
            import numpy as np

            return int(np.flatnonzero(observation["action_mask"])[0])

    monkeypatch.setattr(racko_env.opponents, "_registered", [])
    monkeypatch.setattr(racko_env.opponents, "_discovered", [])
    env = RackoGymEnv(num_players=3, opponents=[First()])
    env.reset(seed=1)
    env.step(int(env.action_masks().argmax()))


# ----------------------------------------------------------------------------- the package map

PACKAGE_MAP = ROOT / "docs" / "packages.md"


def _package_map() -> dict[str, set[str]]:
    """docs/packages.md's table: package -> the packages it may import."""
    text = PACKAGE_MAP.read_text(encoding="utf-8")
    table = text.split("<!-- packages: read by tests/test_layers.py -->")[1].split(
        "<!-- /packages -->"
    )[0]
    rows = {}
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        name = cells[0].strip("`")
        rows[name] = set(re.findall(r"`([\w.]+)`", cells[2]))
    return rows


def _train_folders() -> list[str]:
    return sorted(p.name for p in (ROOT / "train").iterdir() if (p / "__init__.py").is_file())


def _package_of(name: str) -> str | None:
    """The map's package of a module name (a file's own, or one it imports)."""
    parts = name.split(".")
    if parts[0] not in FIRST_PARTY:
        return None
    if parts[0] == "train" and len(parts) > 1 and parts[1] in _train_folders():
        return f"train.{parts[1]}"
    return parts[0]


def test_the_package_map_names_every_package_and_folder_of_train() -> None:
    rows = _package_map()
    assert set(rows) == {*FIRST_PARTY, *(f"train.{f}" for f in _train_folders())}
    for name, allowed in rows.items():
        assert allowed <= set(rows), (name, allowed - set(rows))


def test_every_file_imports_only_what_the_package_map_allows() -> None:
    rows = _package_map()
    found = []
    for top in FIRST_PARTY:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            mine = _package_of(".".join(rel.with_suffix("").parts))
            for hit in _imports_above(path, above=FIRST_PARTY):
                module = hit.rsplit(": ", 1)[1]
                theirs = _package_of(module)
                if theirs not in (mine, None) and theirs not in rows[mine]:
                    found.append(f"{hit} ({mine} may not import {theirs})")
    assert found == []


def test_the_map_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    sample = tmp_path / "racko_eval" / "x.py"
    sample.parent.mkdir()
    sample.write_text("def f():\n    import train.sb3.policy\n")
    hits = _imports_above(sample, root=tmp_path, above=FIRST_PARTY)
    assert [_package_of(h.rsplit(": ", 1)[1]) for h in hits] == ["train.sb3"]
    assert "train.sb3" not in _package_map()["racko_eval"]


def test_the_map_check_sees_an_entry_point_string_and_skips_a_file_name(tmp_path: Path) -> None:
    """An upward link in a string (Gymnasium's ``vector_entry_point``) is an import too."""
    sample = tmp_path / "racko_env" / "x.py"
    sample.parent.mkdir()
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "__init__.py").write_text("")
    (tmp_path / "agents" / "bots.py").write_text("")
    sample.write_text(
        "import gymnasium\n"
        "gymnasium.register(id='x', vector_entry_point='agents.vector_env:RackoVectorEnv')\n"
        "NAMES = ['agents.bots', 'train.log', 'agents.missing', 'see agents.bots']\n"
    )
    hits = _imports_above(sample, root=tmp_path, above=FIRST_PARTY)
    assert sorted(h.rsplit(": ", 1)[1] for h in hits) == ["agents.bots", "agents.vector_env"]
    assert {_package_of(h.rsplit(": ", 1)[1]) for h in hits} == {"agents"}
    assert "agents" not in _package_map()["racko_env"]


# ----------------------------------------------------------------------------- nothing imports a script

SCRIPTS = sorted(f"train.{p.stem}" for p in (ROOT / "train").glob("*.py") if p.stem != "__init__")


def _script_imports(root: Path = ROOT, scripts: list[str] = SCRIPTS) -> list[str]:
    """Every import of a script at the top of ``train/`` (or string naming one) in any Python
    file of the tree: tests, benchmarks and docs included."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).parts
        if rel[0].startswith(".") or "_build" in rel or "node_modules" in rel:
            continue
        if path == Path(__file__).resolve():
            continue  # this file names the scripts as the data of its checks
        for hit in _imports_above(path, root=root, above=("train",)):
            module = hit.rsplit(": ", 1)[1]
            if any(module == s or module.startswith(s + ".") for s in scripts):
                found.append(hit)
    return found


def test_nothing_imports_a_script_of_train() -> None:
    """``train/ppo.py`` and ``train/rllib_ppo.py`` are run, never imported: their logic is in
    ``train.sb3.run`` and ``train.rllib.run``, which ``racko train`` and the tests import."""
    assert SCRIPTS == ["train.ppo", "train.rllib_ppo"]
    assert _script_imports() == []


def test_the_script_check_sees_an_import_and_a_dispatch_string(tmp_path: Path) -> None:
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "ppo.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text(
        "def f():\n    from train import ppo\n    from train.ppo import main\n"
        "CLI = {'train': ('train.ppo:main', '')}\n"
    )
    hits = _script_imports(tmp_path, ["train.ppo"])
    assert [h.rsplit(": ", 1)[1] for h in hits] == ["train.ppo", "train.ppo", "train.ppo"]


# ----------------------------------------------------------------------------- no import cycles


def _module_imports(root: Path = ROOT) -> dict[str, set[str]]:
    """Each first-party module -> the first-party modules it imports (at any depth)."""
    files = {}
    for top in (*FIRST_PARTY, "benchmarks"):
        for path in (root / top).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def module_of(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    edges = {}
    for module, path in files.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found |= {m for n in names if (m := module_of(n)) not in (None, module)}
        edges[module] = found
    return edges


def _mutual_pairs(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {tuple(sorted((a, b))) for a in edges for b in edges[a] if a in edges.get(b, ())}


@pytest.mark.slow
def test_no_two_modules_import_each_other() -> None:
    """A pair that imports each other is one concern split in two, or a shared part left inside
    one of them (``agents.expert_params`` is the expert's and the batched planner's)."""
    pairs = _mutual_pairs(_module_imports())
    assert pairs == set()


def test_the_cycle_check_sees_a_pair(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "a.py").write_text("def f():\n    from agents.b import g\n")
    (tmp_path / "agents" / "b.py").write_text("import agents.a\n")
    assert _mutual_pairs(_module_imports(tmp_path)) == {("agents.a", "agents.b")}
