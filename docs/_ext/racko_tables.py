"""Tables and facts the documentation generates from the code at build time, so a page cannot go
stale when the code changes: the directives ``observation-layout``, ``feature-columns``,
``action-table``, ``rules-options``, ``config-keys module:Model`` and ``module-docstring module``
(an env's docstring is its page), and the role ``{fact}`obs_size``` for one number inline.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import MISSING, fields
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective, SphinxRole

from racko_eval.results import markdown_table


class MarkdownDirective(SphinxDirective):
    """A directive whose output is Markdown, parsed by MyST as if the page held it."""

    def markdown(self) -> str:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        try:
            text = self.markdown()
        except (ImportError, ValueError, AttributeError) as exc:
            raise self.error(f"{self.name}: {exc}") from exc
        return self.parse_text_to_nodes(text)


class ObservationLayout(MarkdownDirective):
    """The observation layout, field by field, as ``racko_env.observation.markdown_table`` says."""

    def markdown(self) -> str:
        from racko_env.observation import markdown_table as layout_table

        return layout_table()


class FeatureColumns(MarkdownDirective):
    """The feature observation's columns, as ``agents.feature_obs.markdown_table`` says."""

    def markdown(self) -> str:
        from agents.feature_obs import markdown_table as feature_table

        return feature_table()


def _legal_when() -> dict[int, str]:
    from racko_env.actions import LEGAL_BY_PHASE

    when: dict[int, str] = {}
    for phase, legal in LEGAL_BY_PHASE.items():
        for action in legal:
            when[action] = phase.name.lower().replace("_", "-") + " decision"
    return when


ACTION_MEANINGS = {
    "draw_pile": "draw the top card of the draw pile (only you see it)",
    "take_discard": "take the top card of the discard pile (it must go into the rack)",
    "keep": "keep the drawn card (a place decision follows)",
    "discard": "discard the drawn card (the turn ends)",
}


class ActionTable(MarkdownDirective):
    """The action ids: the slots as one row, then each named action."""

    def markdown(self) -> str:
        from racko_env.actions import ACTION_NAMES, NUM_ACTIONS

        when = _legal_when()
        slots = [a for a in range(NUM_ACTIONS) if ACTION_NAMES[a].startswith("slot_")]
        rows = [
            [
                f"{slots[0]}-{slots[-1]}",
                "`slot_i`",
                f"put the held card into slot i ({slots[0]} = front, {slots[-1]} = back); "
                "the card that was there is discarded",
                when[slots[0]],
            ]
        ]
        for a in range(NUM_ACTIONS):
            name = ACTION_NAMES[a]
            if a not in slots:
                rows.append([str(a), f"`{name}`", ACTION_MEANINGS.get(name, name), when[a]])
        return markdown_table({"columns": ["id", "name", "meaning", "legal in"], "rows": rows})


class RulesOptions(MarkdownDirective):
    """Every field of ``RulesConfig``: its default, its range or choices and its help text."""

    def markdown(self) -> str:
        from racko_env.config import RulesConfig

        rows = []
        for f in fields(RulesConfig):
            meta = f.metadata
            if meta["choices"]:
                allowed = " / ".join(f"`{c!r}`" for c in meta["choices"])
            elif meta["minimum"] is not None or meta["maximum"] is not None:
                low = "" if meta["minimum"] is None else str(meta["minimum"])
                high = "" if meta["maximum"] is None else str(meta["maximum"])
                allowed = f"{low}..{high}" if high else f">= {low}"
                if meta["off"] is not None:
                    allowed += f" (or {meta['off']}: {meta['off_means']})"
            else:
                allowed = "`True` / `False`" if isinstance(f.default, bool) else ""
            default = f.default if f.default is not MISSING else ""
            rows.append([f"`{f.name}`", f"`{default!r}`", allowed, meta["help"]])
        return markdown_table({"columns": ["option", "default", "values", "meaning"], "rows": rows})


def _source_comments(model: type) -> dict[str, str]:
    """The ``# comment`` on (or right above) each field of a class body: what a config key means
    where the model gives it no ``description``."""
    comments: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        if klass.__module__.startswith("pydantic") or klass is object:
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        lines = source.splitlines()
        body = ast.parse(source).body[0]
        for node in getattr(body, "body", []):
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            inline = lines[node.end_lineno - 1].partition("  # ")[2]
            above = []
            i = node.lineno - 2
            while i >= 0 and lines[i].strip().startswith("#"):
                above.insert(0, lines[i].strip().lstrip("#").strip())
                i -= 1
            text = inline.strip() or " ".join(above)
            if text:
                comments[node.target.id] = text
    return comments


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    if text is None:
        text = repr(annotation)
    text = re.sub(r"typing\.|Annotated\[(\w+\[?\w*\]?), .*\]", r"\1", text)
    return text.replace("NoneType", "None")


def _constraints(info: Any) -> str:
    parts = []
    for item in info.metadata:
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            value = getattr(item, attr, None)
            if value is not None:
                parts.append(f"{sign} {value}")
        if getattr(item, "min_length", None):
            parts.append("not empty")
    return ", ".join(parts)


def config_rows(model: type, prefix: str = "") -> Iterator[list[str]]:
    """One row per leaf key of a pydantic model; a nested model's keys are dotted."""
    from pydantic import BaseModel

    comments = _source_comments(model)
    for name, info in model.model_fields.items():
        key = f"{prefix}{name}"
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            yield from config_rows(kind, f"{key}.")
            continue
        default = info.get_default(call_default_factory=True)
        meaning = info.description or comments.get(name, "")
        yield [f"`{key}`", f"`{_type_name(kind)}`", f"`{default!r}`", _constraints(info), meaning]


class ConfigKeys(MarkdownDirective):
    """Every key of a config model (``module:Class``), one row each, generated from the model."""

    required_arguments = 1

    def markdown(self) -> str:
        module_name, _, attr = self.arguments[0].partition(":")
        model = getattr(importlib.import_module(module_name), attr)
        columns = ["key", "type", "default", "allowed", "meaning"]
        return markdown_table({"columns": columns, "rows": list(config_rows(model))})


def docstring_as_markdown(text: str) -> str:
    """A docstring written for ``help()`` as MyST Markdown: ``literal`` becomes `literal`, and a
    paragraph ending in ``::`` introduces its indented block as a Python code block."""
    lines = inspect.cleandoc(text).splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::") and not line.strip().startswith("|"):
            out.append(re.sub(r"``([^`]+)``", r"`\1`", line.rstrip()[:-1]))
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
                block.append(lines[i])
                i += 1
            out += ["", "```python", *textwrap.dedent("\n".join(block)).strip().splitlines()]
            out += ["```", ""]
            continue
        out.append(re.sub(r"``([^`]+)``", r"`\1`", line))
        i += 1
    return "\n".join(out)


class ModuleDocstring(MarkdownDirective):
    """A module's docstring rendered as the page's body (its first line is left to the title)."""

    required_arguments = 1

    def markdown(self) -> str:
        module = importlib.import_module(self.arguments[0])
        if not module.__doc__:
            raise ValueError(f"module {self.arguments[0]} has no docstring")
        return docstring_as_markdown(module.__doc__)


def _facts() -> dict[str, Callable[[], Any]]:
    from racko_env import actions, observation, rules

    return {
        "obs_size": lambda: observation.OBS_SIZE,
        "obs_version": lambda: observation.OBS_VERSION,
        "num_actions": lambda: actions.NUM_ACTIONS,
        "min_players": lambda: rules.MIN_PLAYERS,
        "max_players": lambda: rules.MAX_PLAYERS,
    }


class FactRole(SphinxRole):
    """``{fact}`obs_size``` writes that number, read from the code, as inline text."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        facts = _facts()
        if self.text not in facts:
            message = self.inliner.reporter.error(
                f"unknown fact {self.text!r}; known facts: {sorted(facts)}", line=self.lineno
            )
            return [], [message]
        return [nodes.Text(str(facts[self.text]()))], []


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("observation-layout", ObservationLayout)
    app.add_directive("feature-columns", FeatureColumns)
    app.add_directive("action-table", ActionTable)
    app.add_directive("rules-options", RulesOptions)
    app.add_directive("config-keys", ConfigKeys)
    app.add_directive("module-docstring", ModuleDocstring)
    app.add_role("fact", FactRole())
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
