"""What one seat may know, as a flat vector: the observation layout (version ``OBS_VERSION``).

The layout is data: ``LAYOUT`` is the ordered tuple of named fields (name, start, size, meaning),
as OpenSpiel's observers name the pieces of their tensors. ``OBS_SIZE``, the slice and index
constants below (``RACK``, ``HELD``, ``UNSEEN``, ...), the encoders, the decoders in ``agents.obs``
and the docs' tables are all derived from it.

A layout version only ever appends fields, so ``view(obs, v)``, the version-v view of a newer
vector, is a prefix (``LAYOUTS[v]`` its fields, ``obs_size(v)`` its width). Version 1 is what older
bot files were trained on; version 2 appends each opponent slot's public history and the discard
each opponent last passed over. ``docs/environment/observation.md`` lists every public fact at the
table and whether (and why not) the observation holds it.

The layout is the same size for 2, 3 and 4 players, so tools and bot files need one schema; games
of other sizes get the same fields sized to the game (``layout_for``). Cards are scaled by the deck
size N, so card c reads c/N and 0 means "none/unknown". Opponents are listed from the observer's
left (the next to act first); scores with partners are team totals. Of other racks, only what the
whole table saw is encoded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from racko_env.actions import NUM_ACTIONS, Phase, legal_by_phase
from racko_env.config import RulesConfig
from racko_env.engine import RackoGame
from racko_env.rules import MAX_CARDS, MAX_PLAYERS, MIN_PLAYERS, RACK_SIZE

OBS_VERSION = 2
MAX_OPPONENTS = MAX_PLAYERS - 1
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
        """``"40"`` or ``"57-116"``, as the docs table writes them (``"-"`` for none)."""
        if self.size == 0:
            return "-"
        return str(self.start) if self.size == 1 else f"{self.start}-{self.stop - 1}"


def _lay_out(pieces: list[tuple[str, int, str]]) -> tuple[Field, ...]:
    """Fields placed one after another; ``{before}`` in a meaning is the field's start - 1 (so
    that card c sits at ``before + c``)."""
    fields, start = [], 0
    for name, size, meaning in pieces:
        fields.append(Field(name, start, size, meaning.format(before=start - 1)))
        start += size
    return tuple(fields)


def _pieces(k: int, opponents: int, cards: int) -> list[tuple[str, int, str]]:
    """The fields of a layout for racks of ``k`` slots, ``opponents`` opponent blocks and the
    cards 1..``cards``, in order: the one definition every layout is made from."""
    return [
        ("rack", k, f'own rack, slot 0 (front, "5") to slot {k - 1} (back, "50"), card / N'),
        (
            "opp_slots",
            opponents * k,
            f"per opponent ({opponents} blocks of {k}, unused blocks 0): the card / N "
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
            opponents,
            "each opponent's game score / target score, capped at 1 (game mode only, else 0)",
        ),
        ("opp_present", opponents, "1 for each opponent seat that exists"),
        ("partners", 1, "1 when playing partners (the second opponent is the partner)"),
        ("in_discard", cards, "card c (index {before} + c) is in the discard pile now"),
        (
            "unseen",
            cards,
            "card c (index {before} + c) is unseen: not in own rack, the discard pile, an "
            "opponent's known slot, nor held in public view",
        ),
        # ---- version 2: appended, so that version 1 is a prefix
        (
            "opp_slot_drawn",
            opponents * k,
            "per opponent slot (blocks as `opp_slots`): 1 if its card came from the draw pile "
            "(drawn and kept), else 0 (taken from the discard pile, or still its dealt card)",
        ),
        (
            "opp_slot_changed",
            opponents * k,
            "per opponent slot: the turn of the round (the first is 1) when its card last "
            "changed / turn limit; 0 while it holds its dealt card",
        ),
        (
            "opp_slot_out",
            opponents * k,
            "per opponent slot: the card / N that last came out of it (onto the discard pile); "
            "0 while it holds its dealt card",
        ),
        (
            "opp_declined",
            opponents,
            "per opponent: the discard-pile top / N it last passed over by drawing from the draw "
            "pile this round, else 0",
        ),
    ]


class Layout:
    """One observation layout (version ``OBS_VERSION``): its fields for racks of ``rack_size``
    slots, ``opponents`` opponent blocks and the cards 1..``cards``, with the slice and index of
    each field under the module constants' names (``layout.RACK``, ``layout.HELD``, ...), so an
    encoder written for one layout reads any other.

    ``DEFAULT`` (10 slots, 3 opponent blocks, 60 cards) is every 10-slot game of 2-4 players;
    ``layout_for(config)`` gives a smaller rack or solitaire one sized to it.
    """

    def __init__(self, rack_size: int, opponents: int, cards: int) -> None:
        self.rack_size, self.opponents, self.cards = rack_size, opponents, cards
        self.fields: tuple[Field, ...] = _lay_out(_pieces(rack_size, opponents, cards))
        self.by_name: dict[str, Field] = {f.name: f for f in self.fields}
        self.size = self.fields[-1].stop
        first_v2 = [f.name for f in self.fields].index("opp_slot_drawn")
        self.versions: dict[int, tuple[Field, ...]] = {1: self.fields[:first_v2], 2: self.fields}
        self.sizes: dict[int, int] = {v: f[-1].stop for v, f in self.versions.items()}
        f = self.by_name
        self.RACK, self.OPP_SLOTS = f["rack"].slice, f["opp_slots"].slice
        self.HELD, self.DISCARD_TOP = f["held"].index, f["discard_top"].index
        self.DRAW_TOP_KNOWN, self.DRAW_SIZE = f["draw_top_known"].index, f["draw_size"].index
        self.PHASE, self.HELD_FROM_DISCARD = f["phase"].slice, f["held_from_discard"].index
        self.TURN, self.OWN_SCORE = f["turn"].index, f["own_score"].index
        self.OPP_SCORES, self.OPP_PRESENT = f["opp_scores"].slice, f["opp_present"].slice
        self.PARTNERS = f["partners"].index
        self.IN_DISCARD, self.UNSEEN = f["in_discard"].slice, f["unseen"].slice
        self.OPP_SLOT_DRAWN = f["opp_slot_drawn"].slice
        self.OPP_SLOT_CHANGED = f["opp_slot_changed"].slice
        self.OPP_SLOT_OUT = f["opp_slot_out"].slice
        self.OPP_DECLINED = f["opp_declined"].slice
        self.CARD_SCALED = slice(self.RACK.start, self.DRAW_SIZE + 1)
        self.HISTORY_CARDS = slice(self.OPP_SLOT_OUT.start, self.OPP_DECLINED.stop)

    def __repr__(self) -> str:
        return f"Layout(rack_size={self.rack_size}, opponents={self.opponents}, cards={self.cards})"


DEFAULT = Layout(RACK_SIZE, MAX_OPPONENTS, MAX_CARDS)
LAYOUT: tuple[Field, ...] = DEFAULT.fields
_LAYOUTS_BY_SIZE: dict[tuple[int, int, int], Layout] = {}


def layout_for(config: RulesConfig) -> Layout:
    """The layout of a game under ``config``: ``DEFAULT`` (version 2, 270 entries) for every
    10-slot game of 2-4 players, whatever its deck; else one sized to the game, with a rack of
    ``rack_size`` slots, one block per opponent (none in solitaire) and ``num_cards`` cards."""
    if config.rack_size == RACK_SIZE and config.num_players >= MIN_PLAYERS:
        return DEFAULT
    key = (config.rack_size, config.num_players - 1, config.num_cards)
    if key not in _LAYOUTS_BY_SIZE:
        _LAYOUTS_BY_SIZE[key] = Layout(*key)
    return _LAYOUTS_BY_SIZE[key]


FIELDS: dict[str, Field] = DEFAULT.by_name
OBS_SIZE = DEFAULT.size

# Each version's fields: a version appends to the one before, so an older view is a prefix.
LAYOUTS: dict[int, tuple[Field, ...]] = DEFAULT.versions
OBS_SIZES: dict[int, int] = DEFAULT.sizes


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
    """The layout as the docs show it: a line naming the version and its older views, then one
    row per field with the version it came in."""
    older = "; ".join(
        f"version {v} is its first {size} entries (indices 0-{size - 1})"
        for v, size in OBS_SIZES.items()
        if v != OBS_VERSION
    )
    intro = (
        f"Layout version {OBS_VERSION}: {OBS_SIZE} float32 entries; {older} "
        "(`racko_env.observation.view(obs, version)`)."
    )
    head = ["| index | size | version | name | meaning |", "|---|---|---|---|---|"]
    rows = [f"| {f.indices} | {f.size} | {_since(f)} | `{f.name}` | {f.meaning} |" for f in LAYOUT]
    return "\n".join([intro, "", *head, *rows])


__doc__ = f"{__doc__}\n{markdown_table()}\n"  # help(racko_env.observation) shows the table too


_SEEN = 2

# Card c scaled by the deck size N is float32(c / N), correctly rounded; every encoder (this one, the
# step-by-step SeatViews, the batched engine) reads it from this table so they agree to the bit.
CARD_VALUES: dict[int, np.ndarray] = {
    n: (np.arange(MAX_CARDS + 1, dtype=np.float64) / n).astype(np.float32)
    for n in range(1, MAX_CARDS + 1)
}


def encode(game: RackoGame, player: int, include_scores: bool = False) -> np.ndarray:
    """The observation vector of ``player`` (float32, shape ``(layout.size,)``, of the game's
    layout ``layout_for(game.config)``: ``(OBS_SIZE,)`` for the rule book's racks).

    Written for speed (it runs once per env step): card-valued entries are gathered into one list
    and scaled in one operation, and card membership is built in a bytearray.
    """
    cfg = game.config
    lay = layout_for(cfg)
    n = game.num_players
    n_cards = game.num_cards
    k = lay.rack_size
    rack = game.racks[player]
    discard = game.discard
    draw = game.draw
    held = game.held
    on_turn = game.current == player and game.phase <= Phase.PLACE

    cards = list(rack)
    # where[c]: 0 = unseen by this player, 1 = in the discard pile, 2 = seen elsewhere / not in play
    where = bytearray(lay.cards + 1)
    where[n_cards + 1 :] = b"\x02" * (lay.cards - n_cards)
    for c in rack:
        where[c] = _SEEN
    for q in range(1, n):
        public = game.public_slots[(player + q) % n]
        cards += public
        for c in public:
            where[c] = _SEEN
    unused = lay.opponents - (n - 1)  # unused opponent blocks read 0
    if unused:
        cards += [0] * (k * unused)
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

    obs = np.zeros(lay.size, dtype=np.float32)
    values = CARD_VALUES[n_cards]
    obs[lay.CARD_SCALED] = values[cards]
    if on_turn:
        obs[lay.PHASE.start + game.phase] = 1.0
        if game.held_from_discard:
            obs[lay.HELD_FROM_DISCARD] = 1.0
    obs[lay.TURN] = game.turn / cfg.turn_limit
    if include_scores:
        totals = game.totals
        inv_t = 1.0 / cfg.target_score
        obs[lay.OWN_SCORE] = min(totals[cfg.team_of(player)] * inv_t, 1.0)
        for q in range(1, n):
            score = min(totals[cfg.team_of((player + q) % n)] * inv_t, 1.0)
            obs[lay.OPP_SCORES.start + q - 1] = score
    obs[lay.OPP_PRESENT.start : lay.OPP_PRESENT.start + n - 1] = 1.0
    if cfg.partners:
        obs[lay.PARTNERS] = 1.0
    status = np.frombuffer(where, dtype=np.uint8)[1:]
    obs[lay.IN_DISCARD] = status == 1
    obs[lay.UNSEEN] = status == 0
    # Version 2: each opponent slot's public history, and the discard each opponent passed over.
    drawn, changed, outs, declined = [], [], [], []
    for q in range(1, n):
        seat = (player + q) % n
        drawn += game.slot_drawn[seat]
        changed += game.slot_changed[seat]
        outs += game.slot_out[seat]
        declined.append(game.declined[seat])
    outs += [0] * (k * unused)
    declined += [0] * unused
    width = len(drawn)
    start = lay.OPP_SLOT_DRAWN.start
    obs[start : start + width] = drawn
    limit = cfg.turn_limit
    start = lay.OPP_SLOT_CHANGED.start
    obs[start : start + width] = [t / limit for t in changed]
    obs[lay.HISTORY_CARDS] = values[outs + declined]
    return obs


def phase_masks(rack_size: int = RACK_SIZE) -> tuple[np.ndarray, ...]:
    """The read-only action mask of the player on turn in each phase (indexed by the phase), for
    racks of ``rack_size`` slots."""
    masks = tuple(np.zeros(NUM_ACTIONS, dtype=np.int8) for _ in Phase)
    for phase, mask in zip(Phase, masks, strict=True):
        mask[list(legal_by_phase(rack_size)[phase])] = 1
        mask.flags.writeable = False
    return masks


# The mask of the player on turn in each phase (indexed by the phase), and of everyone else.
PHASE_MASKS: tuple[np.ndarray, ...] = phase_masks()
OFF_TURN_MASK = np.zeros(NUM_ACTIONS, dtype=np.int8)
OFF_TURN_MASK.flags.writeable = False


def action_mask(game: RackoGame, player: int) -> np.ndarray:
    """int8 mask over the ``NUM_ACTIONS`` actions: the legal ones for ``player`` now (all 0 off turn)."""
    if game.current != player:
        return OFF_TURN_MASK.copy()
    masks = PHASE_MASKS if game.rack_size == RACK_SIZE else phase_masks(game.rack_size)
    return masks[game.phase].copy()
