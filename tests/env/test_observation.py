"""The observation layout is data: its fields, the constants derived from it, and the docs tables."""

from __future__ import annotations

import tokenize
from pathlib import Path

import pytest

from racko_env import observation as obs

ROOT = Path(__file__).resolve().parents[2]
DOCS_WITH_THE_TABLE = ["README.md", "docs/env.md", "docs/bot-format.md"]

# Layout version 1 as shipped bot files were trained on it: changing it means a new OBS_VERSION.
V1 = [
    ("rack", 0, 10),
    ("opp_slots", 10, 30),
    ("held", 40, 1),
    ("discard_top", 41, 1),
    ("draw_top_known", 42, 1),
    ("draw_size", 43, 1),
    ("phase", 44, 3),
    ("held_from_discard", 47, 1),
    ("turn", 48, 1),
    ("own_score", 49, 1),
    ("opp_scores", 50, 3),
    ("opp_present", 53, 3),
    ("partners", 56, 1),
    ("in_discard", 57, 60),
    ("unseen", 117, 60),
]


def test_layout_v1_is_unchanged_and_contiguous() -> None:
    assert obs.OBS_VERSION == 1
    assert [(f.name, f.start, f.size) for f in obs.LAYOUT] == V1
    for before, after in zip(obs.LAYOUT, obs.LAYOUT[1:], strict=False):
        assert after.start == before.stop
    assert obs.OBS_SIZE == obs.LAYOUT[-1].stop == sum(f.size for f in obs.LAYOUT)


def test_the_named_constants_are_read_from_the_layout() -> None:
    for f in obs.LAYOUT:
        constant = getattr(obs, f.name.upper())
        assert constant == (f.index if f.size == 1 else f.slice), f.name
    assert obs.CARD_SCALED == slice(obs.RACK.start, obs.DRAW_SIZE + 1)
    with pytest.raises(ValueError, match="use .slice"):
        _ = obs.FIELDS["rack"].index


@pytest.mark.parametrize("doc", DOCS_WITH_THE_TABLE)
def test_the_docs_table_is_the_layout(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert obs.update_table(text) == text, (
        f"{doc}'s observation table differs from racko_env.observation.LAYOUT; run "
        f"python -m racko_env.observation --update {doc}"
    )
    for f in obs.LAYOUT:
        assert f"| {f.indices} " in text and f"`{f.name}`" in text and f.meaning in text


def test_update_rewrites_a_stale_table_in_place(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(f"intro\n{obs.TABLE_BEGIN}\n| old | table |\n{obs.TABLE_END}\noutro\n")
    assert obs._main(["--update", str(doc)]) == 0
    assert (
        doc.read_text()
        == f"intro\n{obs.TABLE_BEGIN}\n{obs.markdown_table()}\n{obs.TABLE_END}\noutro\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["doc.md"]  # no temp file left behind
    (tmp_path / "plain.md").write_text("no markers\n")
    assert obs._main(["--update", str(tmp_path / "plain.md")]) == 1


def test_no_code_in_the_env_or_the_bots_repeats_the_layout_sizes() -> None:
    """177, 44, 14, 57, 117 are written once (the layout, NUM_ACTIONS); code elsewhere
    in racko_env/ and agents/ names them. Comments and docstrings are not code."""
    sizes = {
        str(n) for n in (obs.OBS_SIZE, obs.PHASE.start, 14, obs.IN_DISCARD.start, obs.UNSEEN.start)
    }
    allowed = {("racko_env/actions.py", "14")}
    hits = []
    for base in ("racko_env", "agents"):
        for path in sorted((ROOT / base).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            with open(path, "rb") as f:
                for tok in tokenize.tokenize(f.readline):
                    if tok.type == tokenize.NUMBER and tok.string in sizes:
                        if (rel, tok.string) not in allowed:
                            hits.append(f"{rel}:{tok.start[0]}: {tok.line.strip()}")
    assert hits == []
