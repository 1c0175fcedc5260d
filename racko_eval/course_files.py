"""The two file formats a course's hands touch, each read or written in one place: YAML that a
teacher (rubrics, Gradescope's metadata) or a user (training configs) writes, and CSV that a
teacher opens in a spreadsheet.

* ``load_yaml`` is the only YAML reader: PyYAML's safe loader, which builds plain data only, so
  a ``!!python/object`` tag (a constructor call) is an error, never an object. Optionally it
  refuses a mapping with the same key twice (YAML keeps the last silently).
* ``csv_cell`` is the only way a value becomes a CSV cell (``write_csv``): text that begins with
  ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, which a spreadsheet would run as a
  formula (OWASP's "CSV Injection"), gets a leading apostrophe and shows as text. Bot names,
  students' names and crash texts are text; numbers the report computed stay numbers. A
  carriage return in a cell becomes a line break: the csv module quotes a cell holding its line
  terminator (``\n``) but not one holding a lone ``\r``, which a reader takes for a row's end.

The module lives in ``racko_eval`` so that ``train`` and ``racko_apps`` both read through it;
PyYAML comes with the ``eval`` extra and is imported only when YAML is read.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from racko_env.files import write_text_atomic

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP's list of a formula's first characters


def load_yaml(text: str, *, unique_keys: bool = False) -> Any:
    """The plain data of a YAML text (safe loader only: no tag builds an object); with
    ``unique_keys``, a mapping with a key twice is an error naming it and its line. Raises
    ``yaml.YAMLError`` (each caller words it for its file)."""
    import yaml

    class Loader(yaml.SafeLoader):
        """The safe loader, refusing a repeated key where asked."""

        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: set[Any] = set()
            for key_node, _ in node.value if unique_keys else ():
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    line = key_node.start_mark.line + 1
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (line {line})", key_node.start_mark
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return yaml.load(text, Loader=Loader)  # noqa: S506 (a SafeLoader subclass)


def csv_cell(value: Any) -> str:
    """``value`` as a CSV cell a spreadsheet shows as it is: a number (not a bool) as written,
    any other text with a leading apostrophe where it begins like a formula, its carriage
    returns as line breaks; None is empty."""
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    text = str(value)
    text = "'" + text if text.startswith(FORMULA_STARTS) else text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def write_csv(path: str | Path, header: list[str], rows: Iterable[Iterable[Any]]) -> Path:
    """A CSV file (atomically), every cell through ``csv_cell``; the csv module quotes commas,
    quotes and line breaks."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([csv_cell(h) for h in header])
    writer.writerows([csv_cell(v) for v in row] for row in rows)
    return write_text_atomic(path, buf.getvalue())
