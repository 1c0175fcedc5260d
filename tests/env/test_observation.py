"""The observation layout is data: its fields, the constants derived from it, and the docs tables."""

from __future__ import annotations

import tokenize
from pathlib import Path

import numpy as np
import pytest

from racko_env import observation as obs

ROOT = Path(__file__).resolve().parents[2]
# the site renders the table from the layout at build time (docs/_ext/racko_tables.py)
PAGES_WITH_THE_TABLE = ["docs/environment/observation.md", "docs/bot-format.md"]

# Layout version 1 as older bot files were trained on it: changing it means a new OBS_VERSION.
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

# Layout version 2: version 1 in place, then the opponents' slot histories appended.
V2 = V1 + [
    ("opp_slot_drawn", 177, 30),
    ("opp_slot_changed", 207, 30),
    ("opp_slot_out", 237, 30),
    ("opp_declined", 267, 3),
]


def test_layouts_v1_and_v2_are_unchanged_and_contiguous() -> None:
    assert obs.OBS_VERSION == 2
    assert [(f.name, f.start, f.size) for f in obs.LAYOUT] == V2
    assert [(f.name, f.start, f.size) for f in obs.LAYOUTS[1]] == V1
    assert obs.LAYOUTS[2] == obs.LAYOUT
    for before, after in zip(obs.LAYOUT, obs.LAYOUT[1:], strict=False):
        assert after.start == before.stop
    assert obs.OBS_SIZE == obs.LAYOUT[-1].stop == sum(f.size for f in obs.LAYOUT)
    assert obs.OBS_SIZES == {1: 177, 2: 270}


def test_an_older_version_is_a_prefix_view() -> None:
    vec = np.arange(obs.OBS_SIZE, dtype=np.float32)
    for version, size in obs.OBS_SIZES.items():
        assert obs.obs_size(version) == size
        assert obs.version_of_size(size) == version
        np.testing.assert_array_equal(obs.view(vec, version), vec[:size])
        assert np.shares_memory(obs.view(vec, version), vec)  # a view, not a copy
    np.testing.assert_array_equal(obs.view(vec[None], 1)[0], vec[: obs.OBS_SIZES[1]])
    with pytest.raises(ValueError, match="unknown observation layout version 3"):
        obs.obs_size(3)
    with pytest.raises(ValueError, match="of no layout version"):
        obs.version_of_size(178)
    with pytest.raises(ValueError, match="no version-2 view"):
        obs.view(vec[: obs.OBS_SIZES[1]], 2)


def test_the_named_constants_are_read_from_the_layout() -> None:
    for f in obs.LAYOUT:
        constant = getattr(obs, f.name.upper())
        assert constant == (f.index if f.size == 1 else f.slice), f.name
    assert obs.CARD_SCALED == slice(obs.RACK.start, obs.DRAW_SIZE + 1)
    with pytest.raises(ValueError, match="use .slice"):
        _ = obs.FIELDS["rack"].index


@pytest.mark.parametrize("doc", PAGES_WITH_THE_TABLE)
def test_the_docs_pages_render_the_layout(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert "```{observation-layout}" in text, f"{doc} no longer renders the observation layout"
    table = obs.markdown_table()
    for f in obs.LAYOUT:
        assert f"| {f.indices} " in table and f"`{f.name}`" in table and f.meaning in table


def test_no_code_in_the_env_or_the_bots_repeats_the_layout_sizes() -> None:
    """270, 177, 44, 14, 57, 117, 207, 237, 267 are written once (the layout, NUM_ACTIONS); code
    elsewhere in racko_env/ and agents/ names them. Comments and docstrings are not code."""
    starts = (obs.PHASE, obs.IN_DISCARD, obs.UNSEEN, obs.OPP_SLOT_CHANGED, obs.OPP_SLOT_OUT)
    sizes = {str(n) for n in (*obs.OBS_SIZES.values(), 14, *(f.start for f in starts))}
    sizes.add(str(obs.OPP_DECLINED.start))
    # NUM_ACTIONS; the ONNX schema's protobuf field numbers (TensorProto.external_data is 13,
    # its data_location 14), which the bot file check reads by number
    allowed = {("racko_env/actions.py", "14"), ("agents/onnx_checks.py", "14")}
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


def test_the_public_fact_inventory_places_every_field() -> None:
    """The observation page's inventory of public facts says where each field of the layout comes
    in, and the rules page's "What each player knows" names the facts version 2 added."""
    page = (ROOT / "docs" / "environment" / "observation.md").read_text(encoding="utf-8")
    inventory = page.split("## Every public fact at the table", 1)[1].split("\n## ", 1)[0]
    for f in obs.LAYOUT:
        assert f"`{f.name}`" in inventory, f"the observation page never places `{f.name}`"
    rules_md = " ".join((ROOT / "docs" / "rules.md").read_text(encoding="utf-8").split())
    knows = rules_md.split("### What each player knows", 1)[1].split("## ", 1)[0]
    for fact in ("from the draw pile", "came out of which slot", "passed over", "after a refill"):
        assert fact in knows, fact
