"""Every code block of README.md and the site's pages (docs/**/*.md) marked runnable runs as written.

The marker is an HTML comment (invisible on GitHub) on the line right before a fenced block:

    <!-- runnable -->                 run the block (```python or ```bash) and expect exit 0
    <!-- runnable timeout=600 -->     the same, with a longer limit than the default 300 s
    <!-- runnable file=my_bots.py --> do not run it: save it as my_bots.py for the other blocks

Each document's blocks run in a fresh temporary folder that looks like the repository root
(every top-level entry of the repository linked into it), so commands such as
``racko evaluate ...`` work as a reader types them, while whatever they write
(``out.json``, ``runs/``) lands in the temporary folder. The blocks run top to bottom, as a reader
meets them: a ``file=`` block is saved when it is reached, so a block cannot use a file that the
page defines further down. Only quick blocks are marked: no long training. A page with a block
marked for longer than the default limit (``timeout=600``: a short training) is marked ``slow``:
the quick subset (``-m "not slow"``) leaves it to the full suite.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [
    REPO / "README.md",
    *sorted(p for p in (REPO / "docs").rglob("*.md") if "_build" not in p.relative_to(REPO).parts),
]
MARKER = re.compile(r"^<!--\s*runnable(?P<options>(\s+\w+=\S+)*)\s*-->\s*$")
FENCE = re.compile(r"^```(?P<lang>\w+)?\s*$")
DEFAULT_TIMEOUT = 300  # catches a hang; a loaded machine needs minutes for a short training
LANGUAGES = ("python", "bash")


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int  # 1-based line of the marker
    lang: str
    code: str
    timeout: int
    file: str | None

    @property
    def label(self) -> str:
        name = self.doc.relative_to(REPO) if self.doc.is_relative_to(REPO) else self.doc.name
        return f"{name}:{self.line}"


def runnable_blocks(doc: Path) -> list[Block]:
    """The marked blocks of one Markdown file; a marker not followed by a fenced block is an error."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    blocks = []
    for i, line in enumerate(lines):
        match = MARKER.match(line.strip())
        if not match:
            if "<!--" in line and "runnable" in line:
                raise ValueError(f"{doc.name}:{i + 1}: malformed runnable marker {line.strip()!r}")
            continue
        options = dict(opt.split("=", 1) for opt in match.group("options").split())
        unknown = set(options) - {"timeout", "file"}
        if unknown:
            raise ValueError(f"{doc.name}:{i + 1}: unknown marker option(s) {sorted(unknown)}")
        fence = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if fence is None or fence.group("lang") not in LANGUAGES:
            raise ValueError(
                f"{doc.name}:{i + 1}: a runnable marker must be followed by ```python or ```bash"
            )
        end = next(j for j in range(i + 2, len(lines)) if lines[j].strip() == "```")
        blocks.append(
            Block(
                doc=doc,
                line=i + 1,
                lang=fence.group("lang"),
                code="\n".join(lines[i + 2 : end]) + "\n",
                timeout=int(options.get("timeout", DEFAULT_TIMEOUT)),
                file=options.get("file"),
            )
        )
    return blocks


ALL = {doc: runnable_blocks(doc) for doc in DOCS}
MARKED = [doc for doc, blocks in ALL.items() if any(b.file is None for b in blocks)]


def test_the_quick_examples_are_marked() -> None:
    """The marks cannot silently disappear: the examples a newcomer tries first are all marked."""
    run = {
        str(doc.relative_to(REPO)) for doc, blocks in ALL.items() for b in blocks if b.file is None
    }
    assert {
        "README.md",
        "docs/getting-started/first-game.md",
        "docs/getting-started/first-bot.md",
        "docs/environment/aec.md",
        "docs/bots/writing-a-bot.md",
        "docs/evaluation/evaluate.md",
        "docs/training/cleanrl.md",
    } <= run
    assert any("env.agent_iter()" in b.code for b in ALL[REPO / "README.md"])  # the AEC loop
    saved = [b.file for b in ALL[REPO / "docs" / "bots" / "writing-a-bot.md"]]
    assert "my_bots.py" in saved  # the bot class that the page's examples load


def test_markers_are_parsed_strictly(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text("<!-- runnable -->\n```python\nprint(1)\n```\n<!-- runnable file=a.py -->\n"
                   "```python\nX = 2\n```\n")  # fmt: skip
    blocks = runnable_blocks(doc)
    assert [(b.lang, b.code, b.file) for b in blocks] == [
        ("python", "print(1)\n", None),
        ("python", "X = 2\n", "a.py"),
    ]
    doc.write_text("<!-- runnable -->\nsome text\n```python\nprint(1)\n```\n")
    with pytest.raises(ValueError, match="must be followed by"):
        runnable_blocks(doc)
    doc.write_text("<!-- runnable speed=9 -->\n```bash\ntrue\n```\n")
    with pytest.raises(ValueError, match="unknown marker option"):
        runnable_blocks(doc)


def repo_like_folder(tmp_path: Path) -> Path:
    """A folder whose top-level entries link to the repository's (outputs stay in the folder)."""
    root = tmp_path / "repo"
    root.mkdir()
    for entry in REPO.iterdir():
        if entry.name.startswith(".") or entry.name in ("runs",):
            continue
        (root / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    return root


def run_block(block: Block, root: Path, env: dict[str, str]) -> None:
    if block.lang == "python":
        script = root / f"_block_{block.line}.py"
        script.write_text(block.code, encoding="utf-8")
        command = [sys.executable, str(script)]
    else:
        command = ["bash", "-euo", "pipefail", "-c", block.code]
    try:
        proc = subprocess.run(
            command,
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=block.timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.label}: still running after {block.timeout} s")
    assert proc.returncode == 0, (
        f"{block.label} ({block.lang}) exited {proc.returncode}:\n{block.code}\n"
        f"--- stdout\n{proc.stdout[-2000:]}\n--- stderr\n{proc.stderr[-3000:]}"
    )


# the quick subset (pytest -m "not slow") runs these pages, a second or two each; the full suite
# runs every page
QUICK_PAGES = {
    "docs/environment/aec.md",
    "docs/environment/gymnasium.md",
    "docs/getting-started/first-game.md",
}


def _doc_param(doc: Path):
    """A page with a block marked for more than the default limit (a short training) is slow,
    and so is every page outside ``QUICK_PAGES``."""
    slow = any(b.timeout > DEFAULT_TIMEOUT for b in ALL[doc] if b.file is None)
    slow = slow or str(doc.relative_to(REPO)) not in QUICK_PAGES
    return pytest.param(doc, marks=[pytest.mark.slow] if slow else [])


@pytest.mark.parametrize(
    "doc", [_doc_param(d) for d in MARKED], ids=lambda d: str(d.relative_to(REPO))
)
def test_runnable_blocks_run(doc: Path, tmp_path: Path) -> None:
    root = repo_like_folder(tmp_path)
    # `python` and the installed `racko` command are the ones of this interpreter; imports come
    # from the (linked) repository first.
    bindir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": os.pathsep.join([bindir, os.environ.get("PATH", "")]),
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
        "MPLBACKEND": "Agg",
    }
    for block in ALL[doc]:  # in document order, as a reader goes
        if block.file:
            (root / block.file).write_text(block.code, encoding="utf-8")
        else:
            run_block(block, root, env)


def test_blocks_run_in_document_order(tmp_path: Path) -> None:
    """A block that uses a file the page saves only further down fails (docs/agents.md did)."""
    doc = tmp_path / "page.md"
    doc.write_text("<!-- runnable -->\n```python\nimport later\n```\n"
                   "<!-- runnable file=later.py -->\n```python\nX = 1\n```\n")  # fmt: skip
    root = tmp_path / "root"
    root.mkdir()
    first, second = runnable_blocks(doc)
    with pytest.raises(AssertionError, match="No module named 'later'"):
        run_block(first, root, {**os.environ, "PYTHONPATH": str(root)})
    (root / second.file).write_text(second.code)
    run_block(first, root, {**os.environ, "PYTHONPATH": str(root)})


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """.ci/run installs the tools, requires them all, runs the README's test command as it is
    written, then reruns the tools' tests with the tools hidden (their skips stay honest)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    command = next(
        line.strip()
        for line in readme.splitlines()
        if line.startswith('pip install -e ".[dev]"') and "pytest" in line
    )
    assert "apt-get" not in command and "npm" not in command and "sudo" not in command
    assert "sphinx-build -W" in command  # the site builds with warnings as errors
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert command in ci
    assert ci.index("export RACKO_REQUIRE_ALL=1") < ci.index(command)
    # in a fresh venv, as the README says: the one place a newcomer's pip install may go
    assert ci.index("python -m venv --clear .venv") < ci.index("source .venv/bin/activate")
    assert ci.index("source .venv/bin/activate") < ci.index(command)
    assert "python -m venv .venv" in readme
    hidden = ci[-1]
    assert "env -u RACKO_REQUIRE_ALL" in hidden and "RACKO_HIDE_TOOLS=chromium" in hidden
    assert 'python="$VIRTUAL_ENV/bin/python"' in ci and 'PATH="$VIRTUAL_ENV/bin:$bin"' in hidden


def test_a_failing_block_fails_the_test(tmp_path: Path) -> None:
    env = {**os.environ}
    for lang, code in (
        ("bash", "echo about to fail; exit 3\n"),
        ("python", "raise SystemExit(4)\n"),
    ):
        block = Block(REPO / "x.md", 1, lang, code, timeout=60, file=None)
        with pytest.raises(AssertionError, match="exited"):
            run_block(block, tmp_path, env)
