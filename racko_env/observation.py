"""What one seat may know, as a flat vector: the observation layout (version ``OBS_VERSION``).

The layout is data: ``LAYOUT`` is the ordered tuple of named fields (name, start, size, meaning),
as OpenSpiel's observers name the pieces of their tensors. ``OBS_SIZE``, the slice and index
constants below (``RACK``, ``HELD``, ``UNSEEN``, ...), the encoders, the decoders in
``agents.obs`` and the tables in the docs are all derived from it; ``python -m racko_env.observation``
prints the docs table (``tests/env/test_observation.py`` checks the docs hold exactly that).

Versions: a layout version only ever appends fields, so the view of an older version is a prefix
of the vector. ``LAYOUTS[v]`` is version v's tuple of fields, ``obs_size(v)`` its width and
``view(obs, v)`` the version-v view of a newer vector (its first ``obs_size(v)`` entries). Version 1
(177 entries) is what older bot files were trained on; version 2
appends each opponent slot's public history (where its card came from, when it changed, which card
last came out of it) and the discard each opponent last passed over. ``docs/env.md`` lists every
public fact at the table and whether (and why not) the observation holds it.

The layout is the same size for 2, 3 and 4 players so that tools and bot files need one schema.
Cards are scaled by the deck size N (40/50/60), so a card c reads c/N and 0 means "none/unknown".
Opponents are listed by seat relative to the observer: the first is the next player to act
after the observer (to the left), then the one after, and so on. Scores in partners mode are team
totals. The observer's own private information is only its rack and its held card; nothing about
other racks beyond what the whole table saw is ever encoded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from racko_env.actions import LEGAL_BY_PHASE, NUM_ACTIONS, Phase
from racko_env.engine import RackoGame
from racko_env.rules import MAX_PLAYERS, MIN_PLAYERS, RACK_SIZE, deck_size

OBS_VERSION = 2
MAX_OPPONENTS = MAX_PLAYERS - 1
MAX_CARDS = deck_size(MAX_PLAYERS)
DECISION_PHASES = int(Phase.PLACE) + 1  # draw, keep-or-discard, place: the phases that ask a seat


@dataclass(frozen=True)
class Field:
    """One named piece of the observation vector: entries ``start`` .. ``start + size - 1``."""

    name: str
    start: int
    size: int
    meaning: str

    @property
    def stop(self) -> int:
        return self.start + self.size

    @property
    def slice(self) -> slice:
        return slice(self.start, self.stop)

    @property
    def index(self) -> int:
        """The position of a one-entry field (a ``ValueError`` for wider ones)."""
        if self.size != 1:
            raise ValueError(f"field {self.name!r} has {self.size} entries; use .slice")
        return self.start

    @property
    def indices(self) -> str:
        """``"40"`` or ``"57-116"``, as the docs table writes them."""
        return str(self.start) if self.size == 1 else f"{self.start}-{self.stop - 1}"


def _lay_out(pieces: list[tuple[str, int, str]]) -> tuple[Field, ...]:
    """Fields placed one after another; ``{before}`` in a meaning is the field's start - 1 (so
    that card c sits at ``before + c``)."""
    fields, start = [], 0
    for name, size, meaning in pieces:
        fields.append(Field(name, start, size, meaning.format(before=start - 1)))
        start += size
    return tuple(fields)


LAYOUT: tuple[Field, ...] = _lay_out(
    [
        ("rack", RACK_SIZE, 'own rack, slot 0 (front, "5") to slot 9 (back, "50"), card / N'),
        (
            "opp_slots",
            MAX_OPPONENTS * RACK_SIZE,
            f"per opponent ({MAX_OPPONENTS} blocks of {RACK_SIZE}, unused blocks 0): the card / N "
            "seen going into that slot from the discard pile and still there, else 0",
        ),
        ("held", 1, "card the observer holds / N (0 when none)"),
        (
            "discard_top",
            1,
            "top of the discard pile / N (0 while empty: its only card was just taken)",
        ),
        (
            "draw_top_known",
            1,
            "top of the draw pile / N when its order is public (`empty_pile: flip` after the "
            "first refill), else 0",
        ),
        ("draw_size", 1, "cards left in the draw pile / N"),
        (
            "phase",
            DECISION_PHASES,
            "decision asked of the observer: draw, keep-or-discard, place (one-hot; all 0 when it "
            "is not the observer's turn)",
        ),
        (
            "held_from_discard",
            1,
            "1 if the held card came from the discard pile (it must go into the rack)",
        ),
        ("turn", 1, "turns played this round / turn limit"),
        ("own_score", 1, "own game score / target score, capped at 1 (game mode only, else 0)"),
        (
            "opp_scores",
            MAX_OPPONENTS,
            "each opponent's game score / target score, capped at 1 (game mode only, else 0)",
        ),
        ("opp_present", MAX_OPPONENTS, "1 for each opponent seat that exists"),
        ("partners", 1, "1 when playing partners (the second opponent is the partner)"),
        ("in_discard", MAX_CARDS, "card c (index {before} + c) is in the discard pile now"),
        (
            "unseen",
            MAX_CARDS,
            "card c (index {before} + c) is unseen: not in own rack, the discard pile, an "
            "opponent's known slot, nor held in public view",
        ),
        # ---- version 2: appended, so that version 1 is the first 177 entries
        (
            "opp_slot_drawn",
            MAX_OPPONENTS * RACK_SIZE,
            "per opponent slot (blocks as `opp_slots`): 1 if its card came from the draw pile "
            "(drawn and kept), else 0 (taken from the discard pile, or still its dealt card)",
        ),
        (
            "opp_slot_changed",
            MAX_OPPONENTS * RACK_SIZE,
            "per opponent slot: the turn of the round (the first is 1) when its card last "
            "changed / turn limit; 0 while it holds its dealt card",
        ),
        (
            "opp_slot_out",
            MAX_OPPONENTS * RACK_SIZE,
            "per opponent slot: the card / N that last came out of it (onto the discard pile); "
            "0 while it holds its dealt card",
        ),
        (
            "opp_declined",
            MAX_OPPONENTS,
            "per opponent: the discard-pile top / N it last passed over by drawing from the draw "
            "pile this round, else 0",
        ),
    ]
)
FIELDS: dict[str, Field] = {f.name: f for f in LAYOUT}
OBS_SIZE = LAYOUT[-1].stop

# Each version's fields: a version appends to the one before, so an older view is a prefix.
LAYOUTS: dict[int, tuple[Field, ...]] = {
    1: LAYOUT[: [f.name for f in LAYOUT].index("opp_slot_drawn")],
    2: LAYOUT,
}
OBS_SIZES: dict[int, int] = {v: fields[-1].stop for v, fields in LAYOUTS.items()}


def obs_size(version: int) -> int:
    """The width of layout ``version``; a ``ValueError`` naming it for an unknown one."""
    try:
        return OBS_SIZES[version]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown observation layout version {version!r}; known: {sorted(OBS_SIZES)}"
        ) from None


def version_of_size(width: int) -> int:
    """The layout version whose vectors are ``width`` entries wide (a ``ValueError`` otherwise)."""
    for version, size in OBS_SIZES.items():
        if size == width:
            return version
    raise ValueError(
        f"an observation of {width} entries is of no layout version (widths: "
        f"{', '.join(f'v{v}: {s}' for v, s in OBS_SIZES.items())})"
    )


def view(obs: np.ndarray, version: int) -> np.ndarray:
    """The version-``version`` view of observations of that version or a newer one (last axis).

    A view, not a copy: a prefix of the vector, since versions only append fields."""
    size = obs_size(version)
    if obs.shape[-1] < size:
        raise ValueError(
            f"an observation of {obs.shape[-1]} entries has no version-{version} view "
            f"({size} entries)"
        )
    return obs[..., :size]


RACK = FIELDS["rack"].slice
OPP_SLOTS = FIELDS["opp_slots"].slice
HELD = FIELDS["held"].index
DISCARD_TOP = FIELDS["discard_top"].index
DRAW_TOP_KNOWN = FIELDS["draw_top_known"].index
DRAW_SIZE = FIELDS["draw_size"].index
CARD_SCALED = slice(RACK.start, DRAW_SIZE + 1)  # every entry here is a card (or a count) / N
PHASE = FIELDS["phase"].slice
HELD_FROM_DISCARD = FIELDS["held_from_discard"].index
TURN = FIELDS["turn"].index
OWN_SCORE = FIELDS["own_score"].index
OPP_SCORES = FIELDS["opp_scores"].slice
OPP_PRESENT = FIELDS["opp_present"].slice
PARTNERS = FIELDS["partners"].index
IN_DISCARD = FIELDS["in_discard"].slice
UNSEEN = FIELDS["unseen"].slice
OPP_SLOT_DRAWN = FIELDS["opp_slot_drawn"].slice
OPP_SLOT_CHANGED = FIELDS["opp_slot_changed"].slice
OPP_SLOT_OUT = FIELDS["opp_slot_out"].slice
OPP_DECLINED = FIELDS["opp_declined"].slice
HISTORY_CARDS = slice(OPP_SLOT_OUT.start, OPP_DECLINED.stop)  # cards / N, gathered as one


def _since(field: Field) -> int:
    """The first layout version holding ``field``."""
    return min(v for v, fields in LAYOUTS.items() if field in fields)


def markdown_table() -> str:
    """The layout as the docs show it (README.md, docs/env.md, docs/bot-format.md): a line
    naming the version and its older views, then one row per field with the version it came in."""
    rows = [("index", "size", "version", "name", "meaning")]
    rows += [(f.indices, str(f.size), str(_since(f)), f"`{f.name}`", f.meaning) for f in LAYOUT]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]

    def line(r: tuple[str, ...]) -> str:
        cells = [c.ljust(w) for c, w in zip(r, widths, strict=False)] + [r[4]]
        return "| " + " | ".join(cells) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|" + "-" * 9 + "|"
    older = "; ".join(
        f"version {v} is its first {size} entries (indices 0-{size - 1})"
        for v, size in OBS_SIZES.items()
        if v != OBS_VERSION
    )
    intro = (
        f"Layout version {OBS_VERSION}: {OBS_SIZE} float32 entries; {older} "
        "(`racko_env.observation.view(obs, version)`)."
    )
    return "\n".join([intro, "", line(rows[0]), rule, *map(line, rows[1:])])


__doc__ = f"{__doc__}\n{markdown_table()}\n"  # help(racko_env.observation) shows the table too


_SEEN = 2

# Card c scaled by the deck size N is float32(c / N), correctly rounded; every encoder (this one, the
# step-by-step SeatViews, the batched engine) reads it from this table so they agree to the bit.
CARD_VALUES: dict[int, np.ndarray] = {
    n: (np.arange(MAX_CARDS + 1, dtype=np.float64) / n).astype(np.float32)
    for n in sorted({deck_size(p) for p in range(MIN_PLAYERS, MAX_PLAYERS + 1)})
}


def encode(game: RackoGame, player: int, include_scores: bool = False) -> np.ndarray:
    """The observation vector of ``player`` (float32, shape ``(OBS_SIZE,)``).

    Written for speed (it runs once per env step): card-valued entries are gathered into one list
    and scaled in one operation, and card membership is built in a bytearray.
    """
    cfg = game.config
    n = game.num_players
    n_cards = game.num_cards
    rack = game.racks[player]
    discard = game.discard
    draw = game.draw
    held = game.held
    on_turn = game.current == player and game.phase <= Phase.PLACE

    cards = list(rack)
    # where[c]: 0 = unseen by this player, 1 = in the discard pile, 2 = seen elsewhere / not in play
    where = bytearray(MAX_CARDS + 1)
    where[n_cards + 1 :] = b"\x02" * (MAX_CARDS - n_cards)
    for c in rack:
        where[c] = _SEEN
    for k in range(1, n):
        public = game.public_slots[(player + k) % n]
        cards += public
        for c in public:
            where[c] = _SEEN
    if n < MAX_PLAYERS:  # unused opponent blocks read 0
        cards += [0] * (RACK_SIZE * (MAX_PLAYERS - n))
    mine = held if on_turn and held is not None else 0
    cards.append(mine)
    cards.append(discard[-1] if discard else 0)
    cards.append(draw[-1] if game.draw_known and draw else 0)
    cards.append(len(draw))
    for c in discard:
        where[c] = 1
    if held is not None and (on_turn or game.held_from_discard):
        where[held] = _SEEN
    where[0] = _SEEN

    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    obs[CARD_SCALED] = CARD_VALUES[n_cards][cards]
    if on_turn:
        obs[PHASE.start + game.phase] = 1.0
        if game.held_from_discard:
            obs[HELD_FROM_DISCARD] = 1.0
    obs[TURN] = game.turn / cfg.turn_limit
    if include_scores:
        totals = game.totals
        inv_t = 1.0 / cfg.target_score
        obs[OWN_SCORE] = min(totals[cfg.team_of(player)] * inv_t, 1.0)
        for k in range(1, n):
            obs[OPP_SCORES.start + k - 1] = min(totals[cfg.team_of((player + k) % n)] * inv_t, 1.0)
    obs[OPP_PRESENT.start : OPP_PRESENT.start + n - 1] = 1.0
    if cfg.partners:
        obs[PARTNERS] = 1.0
    status = np.frombuffer(where, dtype=np.uint8)[1:]
    obs[IN_DISCARD] = status == 1
    obs[UNSEEN] = status == 0
    # Version 2: each opponent slot's public history, and the discard each opponent passed over.
    drawn, changed, outs, declined = [], [], [], []
    for k in range(1, n):
        q = (player + k) % n
        drawn += game.slot_drawn[q]
        changed += game.slot_changed[q]
        outs += game.slot_out[q]
        declined.append(game.declined[q])
    unused = MAX_PLAYERS - n
    outs += [0] * (RACK_SIZE * unused)
    declined += [0] * unused
    width = len(drawn)
    obs[OPP_SLOT_DRAWN.start : OPP_SLOT_DRAWN.start + width] = drawn
    limit = cfg.turn_limit
    obs[OPP_SLOT_CHANGED.start : OPP_SLOT_CHANGED.start + width] = [t / limit for t in changed]
    obs[HISTORY_CARDS] = CARD_VALUES[n_cards][outs + declined]
    return obs


# The mask of the player on turn in each phase (indexed by the phase), and of everyone else.
PHASE_MASKS: tuple[np.ndarray, ...] = tuple(np.zeros(NUM_ACTIONS, dtype=np.int8) for _ in Phase)
for _phase, _mask in zip(Phase, PHASE_MASKS, strict=True):
    _mask[list(LEGAL_BY_PHASE[_phase])] = 1
    _mask.flags.writeable = False
OFF_TURN_MASK = np.zeros(NUM_ACTIONS, dtype=np.int8)
OFF_TURN_MASK.flags.writeable = False


def action_mask(game: RackoGame, player: int) -> np.ndarray:
    """int8 mask over the ``NUM_ACTIONS`` actions: the legal ones for ``player`` now (all 0 off turn)."""
    return (PHASE_MASKS[game.phase] if game.current == player else OFF_TURN_MASK).copy()


TABLE_BEGIN = (
    "<!-- observation-layout: generated by `python -m racko_env.observation --update FILE` -->"
)
TABLE_END = "<!-- /observation-layout -->"


def update_table(text: str) -> str:
    """``text`` with the table between ``TABLE_BEGIN`` and ``TABLE_END`` regenerated."""
    if text.count(TABLE_BEGIN) != 1 or text.count(TABLE_END) != 1:
        raise ValueError(f"expected one {TABLE_BEGIN!r} ... {TABLE_END!r} block")
    head, rest = text.split(TABLE_BEGIN)
    _, tail = rest.split(TABLE_END)
    return f"{head}{TABLE_BEGIN}\n{markdown_table()}\n{TABLE_END}{tail}"


def _main(argv: list[str] | None = None) -> int:
    """Print the docs table, or (``--update FILE...``) rewrite it in place in those files."""
    import argparse
    import sys
    from pathlib import Path

    from racko_env.files import write_text_atomic

    parser = argparse.ArgumentParser(
        prog="python -m racko_env.observation", description=_main.__doc__
    )
    parser.add_argument("--update", nargs="+", metavar="FILE", help="markdown files to update")
    args = parser.parse_args(argv)
    if not args.update:
        print(markdown_table())
        return 0
    for name in args.update:
        path = Path(name)
        try:
            new = update_table(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            print(f"error: {path}: {err}", file=sys.stderr)
            return 1
        write_text_atomic(path, new)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
