"""The documentation site builds with warnings as errors, and the README stays a front page.

The build is the one CI runs (README's test command): a broken link, a missing reference, a page
left out of every table of contents or a directive that fails on the code fails it. The pages say
what is true now: no page refers to an issue by number or holds a History section (what changed
between versions is in CHANGELOG.md).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
README = REPO / "README.md"
MAX_README_LINES = 150
AEC_LOOP_BEFORE_LINE = 50
ISSUE = re.compile(r"\b(issues?|PR|pull request)\s*#?\d+|(^|\s)#\d+\b", re.IGNORECASE)
HISTORY = re.compile(r"^#{1,6}\s.*\bhistory\b", re.IGNORECASE | re.MULTILINE)


def pages() -> list[Path]:
    """README and every Markdown page of the site (not the build's output)."""
    found = [p for p in DOCS.rglob("*.md") if "_build" not in p.relative_to(DOCS).parts]
    return [README, *sorted(found)]


@pytest.mark.slow
def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    out = tmp_path / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E", "-b", "html"]
    proc = subprocess.run(
        [*command, str(DOCS), str(out), "-d", str(tmp_path / "doctrees")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, (
        f"sphinx-build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    )
    for page in ("index", "environment/observation", "training/config", "api/racko_env"):
        assert (out / f"{page}.html").is_file(), page
    observation = (out / "environment" / "observation.html").read_text(encoding="utf-8")
    assert "opp_declined" in observation  # the layout table was generated into the page


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"
    loop = next(i for i, line in enumerate(lines, 1) if "env.agent_iter()" in line)
    start = max(i for i, line in enumerate(lines[:loop], 1) if line.startswith("```python"))
    assert start < AEC_LOOP_BEFORE_LINE, f"the AEC loop starts at line {start}"
    assert lines[start - 2].strip() == "<!-- runnable -->"  # and it stays tested
    end = next(i for i, line in enumerate(lines[start:], start + 1) if line.strip() == "```")
    assert end - start - 1 <= 15, "the AEC loop is longer than 15 lines"


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_page_tells_history(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    issues = [m.group(0).strip() for m in ISSUE.finditer(text)]
    assert issues == [], f"{page.name} refers to issues by number: {issues}"
    headings = HISTORY.findall(text)
    assert not HISTORY.search(text), f"{page.name} has a History heading: {headings}"


def test_the_checks_catch_what_they_look_for() -> None:
    assert ISSUE.search("as measured in issue 26") and ISSUE.search("see #12 for that")
    assert not ISSUE.search("the 2 issues of a config") and not ISSUE.search("a C# front end")
    assert HISTORY.search("text\n## History: what came before\n")
    assert not HISTORY.search("**Version history.** v1: ...")


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_headline_results_are_rendered_from_their_files() -> None:
    """The three headline results come from docs/results/*.json, never typed: the block is what
    ``python -m racko_eval.results --update README.md`` writes, and each links to its page."""
    from racko_eval.results import HEADLINE_END, HEADLINE_START, update_readme

    assert not update_readme(README, check=True), "python -m racko_eval.results --update README.md"
    text = README.read_text(encoding="utf-8")
    block = text[text.index(HEADLINE_START) : text.index(HEADLINE_END)]
    pages = LINK.findall(block)
    assert pages == ["docs/results/training.md", "docs/results/bots.md", "docs/results/speed.md"]


def test_the_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    targets = [t for t in LINK.findall(text) if "://" not in t]
    missing = [t for t in targets if not (REPO / t).exists()]
    assert targets and missing == [], f"README.md links to missing files: {missing}"


def test_the_readme_gives_one_racko_line_for_each_main_command() -> None:
    """Train, evaluate, play in the terminal, play in the browser: one line each, every one a
    ``racko`` subcommand that exists."""
    from racko_apps.cli import SUBCOMMANDS

    text = README.read_text(encoding="utf-8")
    section = text.split("## One command each", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split()[1] for line in section.strip().splitlines()]
    assert commands == ["train", "evaluate", "play", "web"]
    assert all(line.startswith("racko ") for line in section.strip().splitlines())
    assert set(commands) <= set(SUBCOMMANDS)


def test_no_page_types_the_observation_size() -> None:
    """The observation's sizes derive from its layout: pages write them with the ``fact`` role
    (or the tutorial prints them, or the env's docstring, its page, fills them in), so no page goes
    stale when the layout grows."""
    from racko_env.observation import OBS_SIZES

    sizes = re.compile(r"(?<![\w.,])(" + "|".join(map(str, OBS_SIZES.values())) + r")(?![\w.,])")
    tutorial, env_page = DOCS / "tutorial.py", REPO / "racko_env" / "racko_v1.py"
    found = [
        f"{page.relative_to(REPO)}: {m.group(0)}"
        for page in [*pages(), tutorial, env_page]
        for m in sizes.finditer(page.read_text(encoding="utf-8"))
    ]
    assert found == [], f"observation sizes typed by hand: {found}"
