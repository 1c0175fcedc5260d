"""Solitaire Rack-O as a Gymnasium env: one player, Rack-O in as few turns as possible.

``gymnasium.make("racko/RackoSolitaire-v0", rack_size=3, deck_size=8, tabular=True)``

The rules engine with one player (``RulesConfig(num_players=1, rack_size=k, deck_size=N)``,
``empty_pile="shuffle"``): the deal puts k cards of 1..N into the rack, turns one card face up
and leaves the rest as the draw pile. Each turn the player takes the discard top or draws,
keeps or discards a drawn card, and puts a kept card into a slot; the round ends when the rack
reads ascending at the end of a turn (a rack dealt ascending still takes one turn).

- **Actions**: the full game's action ids and masks (``racko_env.actions``): 0..k-1 put the held
  card into a slot, 10 draw, 11 take the discard top, 12 keep, 13 discard. The legal ones are
  ``info["action_mask"]`` (int8, 14) and ``action_masks()``, as in ``racko/Racko-v1``. An
  illegal action ends the episode (``terminated``) with reward ``-turn_limit``, the most a
  round can cost, and ``info["illegal_action"]``.
- **Reward**: -1 on each step that ends a turn (a discard or a placement), 0 on the others: an
  episode's return is minus the turns it took.
- **Episode end**: ``terminated`` at Rack-O; ``truncated`` after ``turn_limit`` turns.
- **Observation**: the full game's observation vector for one player (``racko_env.observation``,
  a ``Box``), or, with ``tabular=True``, a ``Discrete`` number of the state the player can tell
  apart (rack, discard top or held card, the draw pile's cards; see
  ``racko_env.solitaire_space``). ``tabular_index(game)`` computes it and
  ``space.decode(observation)`` inverts it (a ``SolitaireState``); the tabular form is for sizes
  whose tables fit (``racko_env.solitaire_space.MAX_STATES``). ``info["state"]`` is the tabular
  number in both forms where the size allows it.
- ``racko_env.solitaire.solve(k, N)`` gives the exact optimal values of every tabular state and
  ``evaluate(policy, k, N)`` any policy's exact expected turns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from racko_env.actions import DISCARD, DRAW_PILE, NUM_ACTIONS, TAKE_DISCARD, Phase, as_action_id
from racko_env.config import DEFAULT_TURN_LIMIT, RulesConfig
from racko_env.engine import RackoGame
from racko_env.observation import CARD_VALUES, action_mask, encode, layout_for
from racko_env.solitaire_space import SolitaireSpace, check_size, space

SOLITAIRE_DECK = 40  # the deck of solitaire when ``deck_size`` is not given: cards 1-40


class RackoSolitaireEnv(gymnasium.Env):
    """Solitaire Rack-O (see the module docstring)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        rack_size: int = 10,
        deck_size: int = 0,
        tabular: bool = False,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        render_mode: str | None = None,
    ) -> None:
        deck_size = deck_size or SOLITAIRE_DECK
        self.rules = RulesConfig(
            num_players=1, rack_size=rack_size, deck_size=deck_size, turn_limit=turn_limit
        )
        self.game = RackoGame(self.rules)
        self.tabular = bool(tabular)
        self.space: SolitaireSpace | None = None
        if self.tabular:
            self.space = solitaire_space(rack_size, deck_size)
            self.observation_space = spaces.Discrete(self.space.num_observations)
        else:
            width = len(encode(self.game, 0))
            self.observation_space = spaces.Box(0.0, 1.0, (width,), dtype=np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        self._started = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Deal a new round (from the env's generator, seeded by ``seed``): the first observation
        and the info (``action_mask``, ``turn``, ``state``)."""
        super().reset(seed=seed)
        self.game.new_game(seed=int(self.np_random.integers(2**63)))
        self._started = True
        return self._obs(), self._info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Play one decision: observation, reward (-1 if it ended a turn), terminated (Rack-O),
        truncated (the turn limit), info; an illegal action ends the episode."""
        if not self._started:
            raise RuntimeError("the episode is over or has not started: call reset()")
        action = as_action_id(action)
        game = self.game
        if game.round_over:
            raise RuntimeError("the episode is over: call reset()")
        if not game.is_legal(action):
            self._started = False
            info = self._info(illegal_action=action)
            return self._obs(), -float(self.rules.turn_limit), True, False, info
        turn = game.turn
        game.apply(action)
        reward = -float(game.turn - turn)
        terminated = game.racko_player is not None
        truncated = game.truncated
        return self._obs(), reward, terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """The legal actions now (int8 over the 14 action ids), as ``info["action_mask"]``."""
        return action_mask(self.game, 0)

    def _obs(self) -> Any:
        if self.tabular:
            return tabular_index(self.game, self.space)
        return encode(self.game, 0)

    def _info(self, **extra: Any) -> dict[str, Any]:
        info = {"action_mask": self.action_masks(), "turn": self.game.turn, **extra}
        if self.space is not None and self.game.phase <= Phase.PLACE:
            info["state"] = tabular_index(self.game, self.space)
        return info

    def render(self) -> str | None:
        """With ``render_mode="ansi"``, one line: the turn, the rack, the piles, the held card."""
        game = self.game
        held = f" | holding {game.held}" if game.held is not None else ""
        text = (
            f"turn {game.turn} | rack {game.racks[0]} | discard top {game.discard_top} | "
            f"draw pile {len(game.draw)} cards{held}"
        )
        if self.render_mode == "ansi":
            return text
        return None


def play_turns(
    bot: Any,
    seeds: Any,
    rack_size: int = 10,
    deck_size: int = SOLITAIRE_DECK,
    turn_limit: int = DEFAULT_TURN_LIMIT,
) -> np.ndarray:
    """The turns ``bot`` (``act(observation)`` and ``reset()``, as ``agents.Bot``) takes on the
    deal of each env seed in ``seeds``, every round cut at the turn limit: the played yardstick
    of sizes no solve reaches, the same deals for every bot. ValueError naming an illegal
    action."""
    env = RackoSolitaireEnv(rack_size=rack_size, deck_size=deck_size, turn_limit=turn_limit)
    turns = []
    for seed in seeds:
        obs, info = env.reset(seed=int(seed))
        bot.reset()
        done = False
        while not done:
            action = bot.act({"observation": obs, "action_mask": info["action_mask"]})
            obs, _, terminated, truncated, info = env.step(action)
            if "illegal_action" in info:
                raise ValueError(
                    f"illegal action {info['illegal_action']} on the deal of seed {seed}"
                )
            done = terminated or truncated
        turns.append(env.game.turn)
    return np.asarray(turns, dtype=np.int64)


def mean_ci95(turns: Any) -> tuple[float, float, float]:
    """The mean of ``play_turns``'s turns and its 95% interval (normal approximation)."""
    turns = np.asarray(turns, dtype=np.float64)
    mean = float(turns.mean())
    half = 1.96 * float(turns.std(ddof=1)) / len(turns) ** 0.5 if len(turns) > 1 else 0.0
    return mean, mean - half, mean + half


def solitaire_space(rack_size: int, deck_size: int) -> SolitaireSpace:
    """The (cached) state numbering of one size; shared with ``racko_env.solitaire``."""
    check_size(rack_size, deck_size)
    return space(rack_size, deck_size)


def tabular_index(game: RackoGame, space: SolitaireSpace) -> int:
    """The tabular observation of a one-player game at a decision (``space.index``): a draw pile
    emptied by this turn's draw counts as refilled with every other card outside the rack."""
    rack = game.racks[0]
    phase = int(game.phase)
    if phase > Phase.PLACE:  # the round is over: the rack's state as the next turn would see it
        phase = int(Phase.DRAW)
    card = game.discard_top if phase == Phase.DRAW else game.held
    draw = set(game.draw)
    if not draw:
        draw = set(range(1, space.deck_size + 1)) - set(rack) - {card}
    return space.index(phase, tuple(rack), card, frozenset(draw))


def observation_index(observation: Any, rack_size: int, deck_size: int) -> int:
    """The tabular state of one of the env's observations: the vector, or the dict bots get
    (``{"observation": ..., "action_mask": ...}``), at a decision. What a table-driven bot
    calls to look its action up (``racko new-bot NAME --solitaire``)."""
    if isinstance(observation, Mapping):
        observation = observation["observation"]
    vec = np.asarray(observation, dtype=np.float64)
    rules = RulesConfig(num_players=1, rack_size=rack_size, deck_size=deck_size)
    lay = layout_for(rules)
    if vec.shape != (lay.size,):
        raise ValueError(
            f"a solitaire observation with rack_size={rack_size}, deck_size={deck_size} has "
            f"{lay.size} entries, got shape {vec.shape}"
        )
    phase = vec[lay.PHASE]
    if phase.max() != 1.0:
        raise ValueError("the observation asks for no decision (the round is over)")
    phase = int(phase.argmax())

    def card(x: float) -> int:
        return int(round(x * deck_size))

    rack = tuple(card(x) for x in vec[lay.RACK])
    held = card(vec[lay.DISCARD_TOP] if phase == Phase.DRAW else vec[lay.HELD])
    draw = {c + 1 for c in np.flatnonzero(vec[lay.UNSEEN][:deck_size])}
    if not draw:  # emptied by this turn's draw: refilled at the end of the turn
        draw = set(range(1, deck_size + 1)) - set(rack) - {held}
    return solitaire_space(rack_size, deck_size).index(phase, rack, held, frozenset(draw))


def state_game(space: SolitaireSpace, observation: int, from_discard: bool = False) -> RackoGame:
    """A one-player game standing at the decision a tabular observation numbers: the rack, the
    discard pile (the cards outside the rack and not in the draw pile, in ascending order under
    its top), the draw pile (ascending from its top) and the held card. ``from_discard`` says a
    held card at ``Phase.PLACE`` came from the discard pile. The history is that of a fresh deal
    (turn 0), which is all a table-driven bot is told."""
    state = space.decode(observation)
    rules = RulesConfig(num_players=1, rack_size=space.rack_size, deck_size=space.deck_size)
    game = RackoGame(rules)
    outside = set(range(1, space.deck_size + 1)) - set(state.rack)
    under = sorted(outside - {state.card} - state.draw)
    refill = state.draw == outside - {state.card}
    game.racks[0] = list(state.rack)
    game.draw = sorted(state.draw, reverse=True)
    game.phase = Phase(state.phase)
    game.held = None
    game.held_from_discard = False
    if state.phase == Phase.DRAW:
        game.discard = under + [state.card]
        return game
    game.held = state.card
    if state.phase == Phase.PLACE and from_discard:
        game.held_from_discard = True
        game.discard = under
    elif refill:  # the draw took the pile's last card: it is refilled at the end of the turn
        game.discard, game.draw = sorted(outside - {state.card}), []
    else:
        game.discard = under
    return game


def bot_table(bot: Any, rack_size: int, deck_size: int) -> np.ndarray:
    """A bot's action at every tabular state it can reach from the deal, as a policy table (the
    states it cannot reach hold any legal action). The bot is asked once per state, reset
    before each question, with the observation of ``state_game``; at a placement reached both
    from the discard pile and from a kept draw it is asked as the first route found puts it."""
    sp = solitaire_space(rack_size, deck_size)
    n = sp.num_states
    table = np.full(sp.num_observations, -1, dtype=np.int64)
    table[:n], table[n : 2 * n], table[2 * n :] = DRAW_PILE, DISCARD, 0
    asked = np.zeros(sp.num_observations, dtype=bool)

    def ask(observation: int, from_discard: bool = False) -> int:
        if not asked[observation]:
            game = state_game(sp, observation, from_discard)
            obs = {"observation": encode(game, 0), "action_mask": action_mask(game, 0)}
            bot.reset()
            action = as_action_id(bot.act(obs))
            if not game.is_legal(action):
                raise ValueError(
                    f"the bot played illegal action {action} at {sp.decode(observation)}"
                )
            table[observation], asked[observation] = action, True
        return int(table[observation])

    frontier = sp.deal_rows().tolist()
    seen = set(frontier)
    while frontier:
        nxt: list[int] = []
        for s in frontier:
            for t in _turn_successors(sp, s, ask):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return table


def _turn_successors(sp: SolitaireSpace, s: int, ask: Any) -> list[int]:
    """The DRAW states one turn from DRAW state ``s`` under the policy ``ask`` answers (Rack-O
    leaves none)."""
    n, per = sp.num_states, sp.masks - 1
    row, mask = divmod(s, per)
    mask += 1

    def placed(r: int, m: int, from_discard: bool) -> int | None:
        t = int(sp.row_state(r, m))
        slot = ask(2 * n + t, from_discard)
        moved = int(sp.place_next[r, slot])
        return None if sp.ascending[moved // sp.free] else int(sp.row_state(moved, m))

    if ask(s) == TAKE_DISCARD:
        out = placed(row, mask, True)
        return [] if out is None else [out]
    rid, j = divmod(row, sp.free)
    result = []
    for b in range(sp.bits):
        if not mask >> b & 1:
            continue
        jc = b if b < j else b + 1
        r_c, m_c = rid * sp.free + jc, int(sp.draw_mask[j, jc, mask])
        t = int(sp.row_state(r_c, m_c))
        if ask(n + t) == DISCARD:  # the rack is unchanged
            out = None if sp.ascending[rid] else t
        else:
            out = placed(r_c, m_c, False)
        if out is not None:
            result.append(out)
    return result


def state_observations(sp: SolitaireSpace, observations: np.ndarray) -> tuple[np.ndarray, ...]:
    """The observation vectors (float32 [B, width]) and action masks (bool [B, 14]) of many
    tabular observations at once: row i equals ``encode(state_game(sp, observations[i]), 0)``
    (a placement's held card counted as drawn and kept), built in numpy, which is what asking
    a batched bot at every state of a large size needs (``batch_table``)."""
    o = np.asarray(observations, dtype=np.int64)
    n_cards, free = sp.deck_size, sp.free
    phase, state = np.divmod(o, sp.num_states)
    row, mask = np.divmod(state, sp.masks - 1)
    mask += 1
    rid, j = np.divmod(row, free)
    rack, outside = sp.racks[rid], sp.outside[rid]
    rows = np.arange(len(o))
    card = outside[rows, j]
    q = np.arange(free)
    bit = np.where(q[None, :] < j[:, None], q[None, :], q[None, :] - 1)  # [B, free]
    in_draw = ((mask[:, None] >> np.maximum(bit, 0)) & 1).astype(bool) & (q[None, :] != j[:, None])
    # A held card whose draw set is every other outside card: the draw took the pile's last card,
    # and the others wait in the discard pile for the refill at the end of the turn.
    refill = (phase > 0) & (mask == sp.masks - 1)
    in_draw &= ~refill[:, None]
    not_held = (phase == 0)[:, None] | (q[None, :] != j[:, None])
    in_discard = ~in_draw & not_held
    lay = layout_for(RulesConfig(num_players=1, rack_size=sp.rack_size, deck_size=n_cards))
    values = CARD_VALUES[n_cards]
    vec = np.zeros((len(o), lay.size), dtype=np.float32)
    vec[:, lay.RACK] = values[rack]
    vec[:, lay.HELD] = np.where(phase > 0, values[card], 0.0)
    top = np.where(in_discard, outside, 0).max(axis=1)  # the discard pile is kept ascending
    vec[:, lay.DISCARD_TOP] = values[np.where(phase == 0, card, top)]
    vec[:, lay.DRAW_SIZE] = values[in_draw.sum(axis=1)]
    vec[rows, lay.PHASE.start + phase] = 1.0
    discard_cols = lay.IN_DISCARD.start + outside - 1
    unseen_cols = lay.UNSEEN.start + outside - 1
    vec[rows[:, None], discard_cols] = in_discard
    vec[rows[:, None], unseen_cols] = in_draw
    return vec, sp.legal[phase]


def batch_table(policy: Any, rack_size: int, deck_size: int, chunk: int = 50_000) -> np.ndarray:
    """A batched bot's action at every tabular observation, as a policy table: ``policy`` has
    ``act_batch(obs, masks)`` (``agents.batched``), asked on ``chunk`` rows of
    ``state_observations`` at a time. The per-game twin asks a bot only at the states it
    reaches (``bot_table``), one at a time: too slow past a hundred thousand states, where
    this takes seconds per million."""
    sp = solitaire_space(rack_size, deck_size)
    table = np.empty(sp.num_observations, dtype=np.int64)
    for start in range(0, sp.num_observations, chunk):
        ids = np.arange(start, min(start + chunk, sp.num_observations))
        obs, masks = state_observations(sp, ids)
        actions = np.asarray(policy.act_batch(obs, masks), dtype=np.int64).reshape(len(ids))
        bad = np.flatnonzero(~masks[np.arange(len(ids)), np.clip(actions, 0, NUM_ACTIONS - 1)])
        bad = np.union1d(bad, np.flatnonzero((actions < 0) | (actions >= NUM_ACTIONS)))
        if len(bad):
            first = int(ids[bad[0]])
            raise ValueError(
                f"the bot played illegal action {int(actions[bad[0]])} at {sp.decode(first)}"
            )
        table[ids] = actions
    return table
