"""Sphinx extension: pages render measured figures from ``docs/results/<name>.json`` and never
retype them (the files are written by the commands that measure, ``racko_eval.results``).

Directive ``results-table`` (argument: the file's name): each table of the file with its title,
its note and a caption line saying the command, the commit, the date and the machine that
produced it. A missing or malformed file is a build warning (an error under ``-W``), and each page
depends on the files it renders, so an updated file rebuilds the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from racko_eval.results import ResultsError, caption, format_cell, load_results

logger = logging.getLogger(__name__)


def _load(env: Any, name: str) -> dict[str, Any]:
    folder = Path(env.srcdir) / env.config.results_dir
    env.note_dependency(str(folder / f"{name}.json"))
    return load_results(name, folder)


def _table_node(table: dict[str, Any]) -> nodes.table:
    """A docutils table of the results table: header row, body rows, numbers right-aligned."""
    columns, rows = table["columns"], table["rows"]
    node = nodes.table(classes=["results-table"])
    node += nodes.title(text=table["title"])
    group = nodes.tgroup(cols=len(columns))
    node += group
    for _ in columns:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    head += _row(columns)
    body = nodes.tbody()
    group += body
    for row in rows:
        body += _row([format_cell(c) for c in row])
    return node


def _row(cells: list[str]) -> nodes.row:
    row = nodes.row()
    for text in cells:
        entry = nodes.entry()
        entry += _inline(nodes.paragraph(), text)
        row += entry
    return row


def _inline(paragraph: nodes.paragraph, text: str, plain: Any = nodes.Text) -> nodes.paragraph:
    """``text`` into ``paragraph``, its `code` spans (bot names, commands) set as literals and the
    rest as ``plain`` nodes."""
    for i, part in enumerate(text.split("`")):
        if part:
            paragraph += nodes.literal(text=part) if i % 2 else plain(part)
    return paragraph


class ResultsTable(SphinxDirective):
    """``results-table NAME``: every table of ``docs/results/NAME.json``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        try:
            data = _load(self.env, self.arguments[0])
        except ResultsError as exc:
            logger.warning(str(exc), location=self.get_location())
            return []
        out: list[nodes.Node] = []
        for table in data["tables"]:
            out.append(_table_node(table))
            if table.get("note"):
                out.append(_inline(nodes.paragraph(), table["note"]))
        line = nodes.paragraph(classes=["results-caption"])
        out.append(_inline(line, caption(data), lambda part: nodes.emphasis(text=part)))
        return out


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("results_dir", "results", "env")
    app.add_directive("results-table", ResultsTable)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
