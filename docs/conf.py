"""Sphinx configuration of racko's documentation site: Sphinx with furo and MyST, the stack of
PettingZoo's and Gymnasium's own sites. The project's directives (tables generated from the code,
results rendered from their files) live in ``docs/_ext``. Build it as CI does::

    sphinx-build -W --keep-going -q -b html docs docs/_build/html
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path[:0] = [str(DOCS / "_ext"), str(ROOT)]

project = "racko"
author = "the racko authors"
copyright = "the racko authors"  # noqa: A001 (Sphinx's name)
release = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "racko_tables",
    "results_table",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "tutorial.ipynb", "**/.ipynb_checkpoints"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # [text](page.md#a-heading) links resolve to headings up to ###

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = f"racko {release}"
