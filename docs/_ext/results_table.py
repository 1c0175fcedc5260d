"""Sphinx extension: pages render measured figures from ``docs/results/<name>.json`` and never
retype them (the files are written by the commands that measure, ``racko_eval.results``).

- Directive ``results-table`` (argument: the file's name; option ``:table:`` an index or a
  title, else every table of the file): each table with its title, its note and a caption line
  saying the command, the commit, the date and the machine that produced it.
- Role ``result`` (``{result}`env_speed:racko_v1_steps_per_s```): one named figure, formatted,
  inside running text.

A missing file, table or figure is a build warning (an error under ``-W``), and each page
depends on the files it renders, so an updated file rebuilds the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from racko_eval.results import (
    ResultsError,
    caption,
    figure_text,
    find_table,
    format_cell,
    load_results,
)

logger = logging.getLogger(__name__)


def _folder(env: Any) -> Path:
    return Path(env.srcdir) / env.config.results_dir


def _load(env: Any, name: str) -> dict[str, Any]:
    folder = _folder(env)
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


def _inline(paragraph: nodes.paragraph, text: str) -> nodes.paragraph:
    """``text`` into ``paragraph``, its `code` spans (bot names, commands) set as literals."""
    for i, part in enumerate(text.split("`")):
        if part:
            paragraph += nodes.literal(text=part) if i % 2 else nodes.Text(part)
    return paragraph


def _caption_node(text: str) -> nodes.paragraph:
    """The caption line, its `code` spans (the command) set as literals."""
    line = nodes.paragraph(classes=["results-caption"])
    for i, part in enumerate(text.split("`")):
        if part:
            line += nodes.literal(text=part) if i % 2 else nodes.emphasis(text=part)
    return line


class ResultsTable(SphinxDirective):
    """``results-table NAME`` with ``:table: INDEX-OR-TITLE`` (optional)."""

    required_arguments = 1
    optional_arguments = 0
    final_argument_whitespace = False
    option_spec = {"table": directives.unchanged_required}
    has_content = False

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        try:
            data = _load(self.env, name)
            which = self.options.get("table")
            tables = data["tables"] if which is None else [find_table(data, which)]
        except ResultsError as exc:
            logger.warning(str(exc), location=self.get_location())
            return []
        out: list[nodes.Node] = []
        for table in tables:
            out.append(_table_node(table))
            if table.get("note"):
                out.append(_inline(nodes.paragraph(), table["note"]))
        out.append(_caption_node(caption(data)))
        return out


class ResultRole(SphinxRole):
    """``{result}`NAME:FIGURE``` -> the figure's formatted value."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        name, sep, key = self.text.partition(":")
        if not sep or not name or not key:
            logger.warning(
                f"result role: {self.text!r} is not 'file:figure'", location=self.get_location()
            )
            return [nodes.inline(text=self.text)], []
        try:
            text = figure_text(_load(self.env, name), key)
        except ResultsError as exc:
            logger.warning(str(exc), location=self.get_location())
            return [nodes.inline(text=self.text)], []
        return [nodes.inline(text=text, classes=["result"])], []


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("results_dir", "results", "env")
    app.add_directive("results-table", ResultsTable)
    app.add_role("result", ResultRole())
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
