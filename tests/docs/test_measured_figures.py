"""No page states a measured figure of its own: speeds, wall times and win rates with their
intervals live in docs/results/*.json, written by the command that measures them, and pages
render them (the ``results-table`` directive, the ``result`` role, the README's generated
headline block). A figure typed by hand goes stale the day the code changes.

Scanned: README.md, every markdown page under docs/ (not the build) and the markdown cells of
docs/tutorial.py. Not scanned: fenced code blocks and inline code (commands and their flags),
the README's generated blocks. Rules facts (75 points, 10 slots, 400 turns, 40 cards) are not
measurements and are not flagged. A line that states a setting the linter mistakes for a
measurement (a timeout, a budget) can end with ``<!-- not measured -->``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ALLOW = "<!-- not measured -->"
NUMBER = r"(?<![\w.])\d[\d,]*(?:\.\d+)?"
PATTERNS = {
    # 12,345 steps/s, 3.4k env steps per second, 900 rounds a second
    "speed": re.compile(
        NUMBER + r"\s*[kKM]?(?:\s+[A-Za-z][\w-]*){0,3}?\s*(?:/\s?s\b|/sec\b|per second|a second)"
    ),
    # 12x PettingZoo's, 3.5 times faster
    "speed ratio": re.compile(
        NUMBER + r"\s*(?:x|×|times)\s+(?:faster|slower|(?:as fast|quicker)|PettingZoo)"
    ),
    # 114 s, 2.5 min, 17 min 42 s, 40 ms, 1.5 hours
    "wall time": re.compile(
        NUMBER + r"\s*(?:ms|s|secs?|seconds?|min|mins|minutes?|h|hrs?|hours?)(?![\w-])"
    ),
    # 52.3% ± 2.1, ±3, +- 0.4 (not a formula: mu ± 1.96 sigma)
    "interval": re.compile(r"(?:±|\+/?-)\s*\d[\d.]*(?![\d.]|\s*(?:sigma|σ|standard))"),
    # 84.5% (83.3-85.6), 84.5% (95% CI 83.3-85.6)
    "win rate with CI": re.compile(
        NUMBER + r"\s*%\s*\((?:95%\s*CI\s*)?\d+(?:\.\d+)?\s*%?\s*[-–]\s*\d+(?:\.\d+)?\s*%?\)"
    ),
    # 52.3% (a measured rate: the rules and configs state no decimal percentages)
    "measured rate": re.compile(r"(?<![\w.])\d+\.\d+\s*%"),
}
# a table column of measured values: its header says so
MEASURED_HEADER = re.compile(
    r"steps/s|/s\b|per second|wall time|win rate|\bCI\b|minutes|seconds|\((?:s|min)\)", re.I
)
GENERATED = re.compile(r"<!-- ([\w-]+)(?::[^>]*)? -->(.*?)<!-- /\1 -->", re.S)
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`]*`")


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text) of the lines a reader reads as prose: fenced code and generated
    blocks (their text replaced by nothing, line numbers kept) and inline code left out."""
    text = GENERATED.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    lines, fenced = [], None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if match and fenced is None:
            fenced = match.group(1)
            continue
        if fenced is not None:
            if line.strip().startswith(fenced):
                fenced = None
            continue
        if line.rstrip().endswith(ALLOW):
            continue
        lines.append((number, INLINE_CODE.sub("", line)))
    return lines


def _table_figures(lines: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """Numbers in table columns whose header names a measure (steps/s, win rate, wall time)."""
    found, measured = [], set()
    for i, (number, line) in enumerate(lines):
        if not line.lstrip().startswith("|"):
            measured = set()
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if i + 1 < len(lines) and re.fullmatch(r"\|?[\s:|-]+\|?", lines[i + 1][1].strip() or "x"):
            measured = {j for j, c in enumerate(cells) if MEASURED_HEADER.search(c)}
            continue
        for j in measured:
            if j < len(cells) and re.search(r"\d", cells[j]) and not set(cells[j]) <= set("-:"):
                found.append((number, "table column", cells[j]))
    return found


SETTING = re.compile(r"\bdefaults?(?: to| is)?\s*$")  # "(default ±3 rating points)": a setting


def measured_figures(text: str) -> list[tuple[int, str, str]]:
    """(line, kind, text) of every measured figure a page states outside a rendered block."""
    lines = _prose_lines(text)
    found = []
    for number, line in lines:
        for kind, pattern in PATTERNS.items():
            found += [
                (number, kind, m.group(0).strip())
                for m in pattern.finditer(line)
                if not SETTING.search(line[: m.start()])
            ]
    found += _table_figures(lines)
    return sorted(set(found))


def _tutorial_markdown(path: Path) -> str:
    """The markdown cells of a jupytext percent script, as markdown (other lines blanked)."""
    out, in_markdown = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            in_markdown = "[markdown]" in line
            out.append("")
        elif in_markdown and line.startswith("#"):
            out.append(line[2:] if line.startswith("# ") else "")
        else:
            out.append("")
    return "\n".join(out)


def pages() -> list[Path]:
    docs = REPO / "docs"
    found = [REPO / "README.md"]
    found += [p for p in sorted(docs.rglob("*.md")) if "_build" not in p.relative_to(docs).parts]
    return found


# ----------------------------------------------------------------------------- the linter itself


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("The env plays 12,345 steps/s on one core.", "speed"),
        ("about 3.4k env steps per second", "speed"),
        ("It evaluates 900 rounds a second.", "speed"),
        ("12x PettingZoo's connect_four", "speed ratio"),
        ("and 3.5 times faster than before", "speed ratio"),
        ("The tutorial ran in 114 s from a fresh clone.", "wall time"),
        ("a run of 2.5 min", "wall time"),
        ("1,221 passed in 17 min 42 s", "wall time"),
        ("each call takes 40 ms", "wall time"),
        ("It won 52.3% ± 2.1 of its rounds.", "interval"),
        ("widest ±3", "interval"),
        ("they end at 50.2% +- 0.4 against expert", "interval"),
        ("84.5% (83.3-85.6) vs heuristic", "win rate with CI"),
        ("wins 49.1% (95% CI 46.9-51.3)", "win rate with CI"),
        ("it won 10.9% overall", "measured rate"),
        ("| bot | win rate |\n|---|---|\n| expert | 84 of 100 |", "table column"),
    ],
)
def test_the_linter_flags_measured_figures(text: str, kind: str) -> None:
    assert kind in {k for _, k, _ in measured_figures(text)}, measured_figures(text)


@pytest.mark.parametrize(
    "text",
    [
        "Rack-O ends the round: 75 points; everyone else scores 5 points per card.",
        "The deck is 1-40 for 2 players, 1-50 for 3, 1-60 for 4; each rack has 10 slots.",
        "The game goes on until someone reaches 500 points; the turn limit is 400 turns.",
        "`expert` beats `heuristic` in most rounds; `zone` ties it at exactly 50%.",
        "Win rates come with 95% Wilson intervals.",
        "Run `racko league --budget 60` for a league of an hour.",
        "```bash\npython -m benchmarks.env_speed --seconds 5\n```",
        "Set `timeout: 30 s` in the rubric.",
        "Python 3.11 minimum; 2-4 players; slots 0-9.",
        "a league stops after its budget of 60 minutes <!-- not measured -->",
        "<!-- results: headline -->\n- plays 12,345 steps/s\n<!-- /results -->",
        "| id | meaning |\n|---|---|\n| 10 | draw the top card |",
        "the opponents' weights: heuristic 50%, expert 30%, self 20%",
        "in five minutes, a few seconds",
        "wider than `--target` (default ±3 rating points) gets one more pairing",
        "shown as mu with its 95% interval (mu ± 1.96 sigma)",
        "a per-move limit that defaults to 5 s",
    ],
)
def test_the_linter_leaves_rules_facts_and_rendered_blocks_alone(text: str) -> None:
    assert measured_figures(text) == []


def test_line_numbers_point_at_the_figure() -> None:
    text = "# Title\n\n```\n1 s\n```\n\nIt took 3 s.\n"
    assert measured_figures(text) == [(7, "wall time", "3 s")]


# ----------------------------------------------------------------------------- the pages


def test_no_page_states_a_measured_figure() -> None:
    problems = []
    for path in pages():
        for line, kind, figure in measured_figures(path.read_text(encoding="utf-8")):
            problems.append(f"{path.relative_to(REPO)}:{line}: {kind}: {figure!r}")
    tutorial = REPO / "docs" / "tutorial.py"
    for line, kind, figure in measured_figures(_tutorial_markdown(tutorial)):
        problems.append(f"docs/tutorial.py:{line}: {kind}: {figure!r}")
    assert not problems, (
        f"{len(problems)} measured figures typed into pages (render them from docs/results/ "
        "instead):\n" + "\n".join(problems[:60])
    )
