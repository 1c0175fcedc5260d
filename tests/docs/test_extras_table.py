"""The install page's table of extras names every extra of pyproject.toml, and nothing else."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "docs" / "getting-started" / "install.md"


def test_the_install_page_lists_every_extra() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    page = INSTALL.read_text(encoding="utf-8")
    section = page.split("## Extras", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"^\| `([a-z]+)` \|", section, flags=re.M))
    assert rows == set(extras)
