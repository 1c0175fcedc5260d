"""Every ``racko`` subcommand from a plain package install: one that needs an extra names it in one
line with the install command before it starts; the others run without any extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from racko_apps.cli import NEEDS, SUBCOMMANDS

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = sorted({m for _, mods in NEEDS.values() for m in mods} | {"onnxruntime"})


def run_hidden(hidden: list[str], code: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Run ``code`` with ``hidden`` made unimportable (as if their extra were not installed)."""
    prelude = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in hidden)
    return subprocess.run(
        [sys.executable, "-c", prelude + code], cwd=cwd, capture_output=True, text=True, timeout=300
    )


CASES = [(name, extra, m) for name, (extra, mods) in sorted(NEEDS.items()) for m in mods]


@pytest.mark.parametrize(("name", "extra", "module"), CASES)
def test_a_missing_extra_is_one_line_with_its_install_command(name, extra, module):
    out = run_hidden([module], f"from racko_apps.cli import main; sys.exit(main([{name!r}]))")
    assert out.returncode == 2, out.stderr
    assert out.stdout == "" and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith(f"racko {name} needs {module}")
    assert f"(the '{extra}' extra): pip install 'racko[{extra}]'" in out.stderr


def test_every_subcommand_is_either_free_or_names_its_extra():
    assert set(NEEDS) <= set(SUBCOMMANDS)
    assert {e for e, _ in NEEDS.values()} == {"eval", "play", "train", "cluster"}
    free = set(SUBCOMMANDS) - set(NEEDS)
    assert free == {"new-bot", "web"}


def test_the_free_subcommands_run_with_no_extra_at_all(tmp_path):
    code = (
        "from racko_apps.cli import main\n"
        f"assert main(['new-bot', 'my_bot', '--dir', {str(tmp_path)!r}]) == 0\n"
        "from racko_apps.play import web\n"
        "web.check_setup = lambda: None\n"
        "try:\n    main(['web', '--help'])\nexcept SystemExit as e:\n    assert e.code == 0\n"
        "print('ok')\n"
    )
    out = run_hidden(OPTIONAL, code)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr
    assert (tmp_path / "my_bot.py").is_file()


def test_an_onnx_bot_without_onnxruntime_names_the_bots_extra():
    out = run_hidden(["onnxruntime"], "import agents\nagents.load('racko_2p')\n")
    last = out.stderr.strip().splitlines()[-1]
    assert "needs onnxruntime" in last and "pip install 'racko[bots]'" in last
