"""Sphinx extension: pages render measured figures from ``docs/results/<name>.json`` and never
retype them (the files are written by the commands that measure, ``racko_eval.results``).

Directive ``results-table`` (argument: the file's name): each table of the file with its title,
its note and a caption line saying the command, the commit, the date and the machine that
produced it, written as MyST Markdown (``racko_eval.results.markdown_table``). A missing or
malformed file fails the build under ``-W``, and each page depends on the files it renders, so an
updated file rebuilds the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from racko_tables import MarkdownDirective  # docs/_ext is on the path of every extension
from sphinx.application import Sphinx

from racko_eval.results import caption, load_results, markdown_table


class ResultsTable(MarkdownDirective):
    """``results-table NAME``: every table of ``docs/results/NAME.json``."""

    required_arguments = 1

    def markdown(self) -> str:
        name = self.arguments[0]
        folder = Path(self.env.srcdir) / self.env.config.results_dir
        self.env.note_dependency(str(folder / f"{name}.json"))
        data = load_results(name, folder)
        parts = []
        for table in data["tables"]:
            parts += [f"```{{table}} {table['title']}", markdown_table(table), "```", ""]
            if table.get("note"):
                parts += [table["note"], ""]
        return "\n".join([*parts, f"*{caption(data)}*"])


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("results_dir", "results", "env")
    app.add_directive("results-table", ResultsTable)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
