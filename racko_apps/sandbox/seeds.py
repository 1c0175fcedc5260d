"""What a sandboxed bot is told of a deal's seed: a seed of its own, never one it can turn back
into the deal.

Before each deal the referee seeds every bot (``racko_eval.tournament``) with a number mixed from
the deal's seed, the seating and the seat, so that a random bot replays: an affine mix, which a
bot could invert to the deal's seed, and then replay the deal, every card it is yet to draw
included. A deal's seed is drawn from the run's seed, which in a graded run or a league is the
teacher's secret. So every seed on its way into a sandbox is replaced by a one-way digest of it
(``told_seed``), in one place: the line the sandbox writes to its child (``told``). The same seed
still gives the same seed (same seed, same game), and nothing a bot computes from what it is
told leads back to the deal.
"""

from __future__ import annotations

import hashlib
from typing import Any

SEED_BITS = 63  # a told seed's size, as the deals' seeds (racko_eval.tournament.deal_seeds)


def told_seed(seed: int | None) -> int | None:
    """The seed a sandboxed bot is told for ``seed``: the first 63 bits of its SHA-256 digest
    (None stays None: the bot seeds itself)."""
    if seed is None:
        return None
    digest = hashlib.sha256(b"racko bot seed:" + str(int(seed)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def told(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` as the child is sent it: its seed and its tables' seeds each ``told_seed``."""
    out = dict(request)
    if out.get("seed") is not None:
        out["seed"] = told_seed(out["seed"])
    if isinstance(out.get("items"), list):
        out["items"] = [told(item) for item in out["items"]]
    return out
