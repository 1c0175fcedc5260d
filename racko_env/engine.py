"""The Rack-O rules engine: dealing, turns, the piles, Rack-O, scoring and the game to 500.

Pure Python (no numpy, gym or torch), in the spirit of OpenSpiel's ``State``: it knows the rules and
the public/private split of information, and nothing about observations or rewards. The sizes are
the config's: ``rack_size`` slots, the cards 1..``num_cards``, 1-4 players (1: solitaire). Every
source of chance is one ``random.Random`` seeded at ``new_game``, so a seed fixes the whole game.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from racko_env.actions import (
    ACTION_NAMES,
    DRAW_PILE,
    KEEP,
    NUM_ACTIONS,
    TAKE_DISCARD,
    Phase,
    as_action_id,
    legal_by_phase,
)
from racko_env.config import RulesConfig
from racko_env.rules import hand_score, is_racko

# The phases as module constants: ``Phase.DRAW`` is an attribute lookup on the enum class, which
# costs more than the rest of a comparison; these are the same members.
_DRAW, _KEEP_OR_DISCARD, _PLACE = Phase.DRAW, Phase.KEEP_OR_DISCARD, Phase.PLACE


@dataclass(frozen=True)
class TurnRecord:
    """What the whole table saw of one finished turn.

    ``taken`` is the card taken from the discard pile (0 when the player drew from the draw pile,
    which nobody else sees); ``slot`` is where a card went into the rack (None if the drawn card was
    discarded at once); ``discarded`` is the card that ended the turn face up.
    """

    player: int
    source: int  # DRAW_PILE or TAKE_DISCARD
    taken: int
    slot: int | None
    discarded: int


class RackoGame:
    """One game of Rack-O: a sequence of rounds until a player (or team) wins.

    Drive it with ``new_game(seed)`` and then ``apply(action)`` for the player on turn; when
    ``round_over`` is set and the game is not over, ``start_round()`` deals the next round with the
    deal passed to the left.
    """

    def __init__(self, config: RulesConfig | None = None, **options: object) -> None:
        if config is not None and options:
            raise ValueError("give either a RulesConfig or keyword rules options, not both")
        self.config = config if config is not None else RulesConfig.from_dict(options)
        self.num_players = self.config.num_players
        self.num_cards = self.config.num_cards
        self.rack_size = self.config.rack_size
        self._legal = legal_by_phase(self.rack_size)
        self.rng = random.Random()
        self.new_game(seed=None)

    # ----------------------------------------------------------------- game flow

    def new_game(
        self,
        seed: int | None = None,
        first_dealer: int | None = None,
        deck_order: Sequence[int] | None = None,
    ) -> None:
        """Start a game: choose the first dealer by drawing cards (highest deals) and deal round 1.

        ``first_dealer`` and ``deck_order`` (index 0 = top card) fix the first deal instead of chance,
        for tests and replays.
        """
        self.rng.seed(seed)
        n = self.num_players
        self.totals = [0] * self.config.num_teams
        self.round_number = 0
        self.game_over = False
        self.game_winner: int | None = None  # a team index (= seat without partners)
        self.last_round_points: list[int] = [0] * n
        if first_dealer is None:
            self.dealer_draw = self.rng.sample(range(1, self.num_cards + 1), n)
            self.dealer = max(range(n), key=self.dealer_draw.__getitem__)
        else:
            if not 0 <= first_dealer < n:
                raise ValueError(f"first_dealer must be a seat in 0..{n - 1}, got {first_dealer}")
            self.dealer_draw = []
            self.dealer = first_dealer
        self._deal(deck_order)

    def start_round(self, deck_order: Sequence[int] | None = None) -> None:
        """Deal the next round of a game in progress; the deal passes to the left."""
        if self.game_over:
            raise RuntimeError("the game is over; call new_game() to play again")
        if not self.round_over:
            raise RuntimeError("the current round is still being played")
        self.dealer = (self.dealer + 1) % self.num_players
        self._deal(deck_order)

    def _deal(self, deck_order: Sequence[int] | None) -> None:
        n, n_cards = self.num_players, self.num_cards
        if deck_order is None:
            deck = list(range(1, n_cards + 1))
            self.rng.shuffle(deck)
        else:
            deck = [int(c) for c in deck_order]
            if sorted(deck) != list(range(1, n_cards + 1)):
                raise ValueError(
                    f"deck_order must be a permutation of the cards 1..{n_cards}, got {deck_order!r}"
                )
        self.round_number += 1
        # One card at a time from the dealer's left, ending with the dealer; each player's first
        # card goes to the back slot and the last (the tenth of a full rack) to the front.
        size = self.rack_size
        self.racks = [[0] * size for _ in range(n)]
        for k in range(size * n):
            player = (self.dealer + 1 + k) % n
            self.racks[player][size - 1 - k // n] = deck[k]
        rest = deck[size * n :]
        self.discard = [rest[0]]  # the top of the rest is turned face up
        self.draw = rest[:0:-1]  # list end = top of the draw pile
        self.public_slots = [[0] * size for _ in range(n)]
        # Each slot's public history this round (what the whole table saw; 0 = still dealt):
        # whether its card came from the draw pile, the turn (the first is 1) it last changed,
        # and the card that last came out of it; and per seat the discard top it last passed
        # over by drawing from the draw pile.
        self.slot_drawn = [[0] * size for _ in range(n)]
        self.slot_changed = [[0] * size for _ in range(n)]
        self.slot_out = [[0] * size for _ in range(n)]
        self.declined = [0] * n
        self.current = (self.dealer + 1) % n
        self.phase = Phase.DRAW
        self.held: int | None = None
        self.held_from_discard = False
        self.turn = 0
        self.round_over = False
        self.truncated = False
        self.racko_player: int | None = None
        self.reshuffles = 0
        self.draw_known = False  # True once a flipped discard pile made the draw order public
        self.log: list[TurnRecord] = []

    # ----------------------------------------------------------------- moves

    def legal_actions(self) -> tuple[int, ...]:
        return self._legal[self.phase]

    def is_legal(self, action: int) -> bool:
        return action in self._legal[self.phase]

    def apply(self, action: int) -> None:
        """Play one decision of the player on turn; an illegal action raises ``ValueError``."""
        phase = self.phase
        if type(action) is not int:
            action = as_action_id(action)  # numpy integers; anything else raises ValueError
        if action not in self._legal[phase]:
            legal = self._legal[phase]
            name = ACTION_NAMES[action] if 0 <= action < NUM_ACTIONS else "not an action id"
            if not legal:
                raise ValueError(
                    f"illegal action {action} ({name}): the {'game' if self.game_over else 'round'}"
                    " is over and no action is legal"
                )
            raise ValueError(
                f"illegal action {action} ({name}) for player {self.current} in phase "
                f"{phase.name}; legal actions are {list(legal)} "
                f"({', '.join(ACTION_NAMES[a] for a in legal)})"
            )
        if phase == _DRAW:
            if action == DRAW_PILE:
                self.declined[self.current] = self.discard[-1] if self.discard else 0
                self.held = self.draw.pop()
                self.held_from_discard = False
                self.phase = _KEEP_OR_DISCARD
            else:
                self.held = self.discard.pop()
                self.held_from_discard = True
                self.phase = _PLACE
        elif phase == _KEEP_OR_DISCARD:
            if action == KEEP:
                self.phase = _PLACE
            else:
                card = self.held
                self.discard.append(card)
                self._end_turn(TurnRecord(self.current, DRAW_PILE, 0, None, card))
        else:  # PLACE
            rack = self.racks[self.current]
            old = rack[action]
            rack[action] = self.held
            self.public_slots[self.current][action] = self.held if self.held_from_discard else 0
            self.slot_drawn[self.current][action] = 0 if self.held_from_discard else 1
            self.slot_changed[self.current][action] = self.turn + 1  # the turn that ends now
            self.slot_out[self.current][action] = old
            self.discard.append(old)
            source = TAKE_DISCARD if self.held_from_discard else DRAW_PILE
            taken = self.held if self.held_from_discard else 0
            self._end_turn(TurnRecord(self.current, source, taken, action, old))

    def _end_turn(self, record: TurnRecord) -> None:
        self.log.append(record)
        self.held = None
        self.held_from_discard = False
        self.turn += 1
        player = self.current
        if is_racko(self.racks[player], self.config.min_run, self.rack_size):
            self.racko_player = player
            self._score_round()
            return
        if self.turn >= self.config.turn_limit:
            self.truncated = True
            self._score_round()
            return
        if not self.draw:
            self._refill_draw_pile()
        self.current = (player + 1) % self.num_players
        self.phase = _DRAW

    def _refill_draw_pile(self) -> None:
        """The discard pile except its top becomes the draw pile: shuffled, or turned over."""
        under = self.discard[:-1]
        self.discard = self.discard[-1:]
        if self.config.empty_pile == "shuffle":
            self.rng.shuffle(under)
            self.draw = under
        else:  # flip: the bottom discard becomes the top of the draw pile
            under.reverse()
            self.draw = under
            self.draw_known = True
        self.reshuffles += 1

    def _score_round(self) -> None:
        cfg = self.config
        points = [
            hand_score(rack, p == self.racko_player, cfg.bonus) for p, rack in enumerate(self.racks)
        ]
        self.last_round_points = points
        for p, pts in enumerate(points):
            self.totals[cfg.team_of(p)] += pts
        self.round_over = True
        self.phase = Phase.ROUND_OVER
        best = max(self.totals)
        if best >= cfg.target_score:
            leaders = [t for t, total in enumerate(self.totals) if total == best]
            if len(leaders) == 1:  # equal highest totals play another round
                self.game_over = True
                self.game_winner = leaders[0]
                self.phase = Phase.GAME_OVER

    # ----------------------------------------------------------------- views

    @property
    def discard_top(self) -> int:
        """The face-up card, or 0 while the pile is empty (its only card was just taken)."""
        return self.discard[-1] if self.discard else 0

    @property
    def scores(self) -> list[int]:
        """Game totals per seat (with partners, each seat shows its team's total)."""
        return [self.totals[self.config.team_of(p)] for p in range(self.num_players)]

    @property
    def round_team_points(self) -> list[int]:
        """Last round's points per seat; with partners, each seat shows its team's sum."""
        if not self.config.partners:
            return list(self.last_round_points)
        team = [0, 0]
        for p, pts in enumerate(self.last_round_points):
            team[p % 2] += pts
        return [team[p % 2] for p in range(self.num_players)]

    @property
    def round_winners(self) -> set[int]:
        """The teams that won the round just ended: the Rack-O player's, else (a round cut off
        at the turn limit) those with the most points."""
        team_of = self.config.team_of
        if self.racko_player is not None:
            return {team_of(self.racko_player)}
        points = self.round_team_points
        return {team_of(p) for p in range(self.num_players) if points[p] == max(points)}

    def clone(self) -> RackoGame:
        """An independent copy (the random state included), for search and what-if tools."""
        other = object.__new__(RackoGame)
        other.__dict__.update(self.__dict__)
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.racks = [list(r) for r in self.racks]
        other.public_slots = [list(r) for r in self.public_slots]
        other.slot_drawn = [list(r) for r in self.slot_drawn]
        other.slot_changed = [list(r) for r in self.slot_changed]
        other.slot_out = [list(r) for r in self.slot_out]
        other.declined = list(self.declined)
        other.draw = list(self.draw)
        other.discard = list(self.discard)
        other.totals = list(self.totals)
        other.log = list(self.log)
        other.last_round_points = list(self.last_round_points)
        other.dealer_draw = list(self.dealer_draw)
        return other
