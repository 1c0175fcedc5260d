"""Rack-O as an OpenSpiel game: ``import racko_env.openspiel`` registers ``racko`` with pyspiel.

Usage::

    import pyspiel
    import racko_env.openspiel  # registers "racko"

    game = pyspiel.load_game("racko", {"players": 3, "empty_pile": "flip"})
    state = game.new_initial_state()
    while not state.is_terminal():
        ...  # chance nodes: state.chance_outcomes(); decisions: state.legal_actions()

``players`` (1-4, OpenSpiel's name for ``num_players``; 1 is solitaire, whose returns are always
0), ``episode`` (``"round"``, the default, or ``"game"``) and every other field of
``racko_env.RulesConfig`` under its own name are the parameters, read from ``RulesConfig``. The
rules are ``racko_env.engine.RackoGame``'s; this module decides where chance comes in: every
chance outcome is a card (its number), uniform over the cards still possible, for the
first-dealer draw, the deal (one card at a time in the engine's order) and every card drawn from a
face-down pile whose order nobody knows. So a state is a function of its history, and fed the env's
own chance outcomes the game plays the env's game move for move (``tests/env/test_openspiel.py``).
Rewards are ``racko_v1``'s win reward, at the end. A game to ``target_score`` stops
``MAX_TIE_ROUNDS`` rounds after every total must have reached it, the tied leaders sharing the win
(OpenSpiel needs a finite ``max_game_length``).

Both tensors are the env's observation (``racko_env.openspiel_views``); the information-state
string adds the pile orders a player with memory knows. ``resample_from_infostate`` deals the
unseen cards at random (``racko_env.worlds.sample_worlds``). OpenSpiel deserialises a Python
game's state by unpickling it: ``history_string`` / ``state_from_history`` store parameters and
actions only, for files from anyone. The overview: docs/environment/openspiel.md.
"""

from __future__ import annotations

import json
import math
from dataclasses import fields
from typing import Any

import numpy as np

try:
    import pyspiel
except ModuleNotFoundError as _err:  # only pyspiel itself missing is this extra's business
    if _err.name is None or _err.name.split(".")[0] != "pyspiel":
        raise
    raise ImportError(
        "racko_env.openspiel needs OpenSpiel (pyspiel), which is not installed (the 'openspiel' "
        'extra): pip install "racko[openspiel]" (in a checkout: pip install -e ".[openspiel]")'
    ) from None

from racko_env.actions import ACTION_NAMES, DRAW_PILE, NUM_ACTIONS, Phase
from racko_env.config import RulesConfig
from racko_env.engine import RackoGame
from racko_env.observation import encode, layout_for
from racko_env.openspiel_views import RackoObserver, observation_text, state_tensor, state_text
from racko_env.racko_v1 import EPISODE_MODES, win_rewards
from racko_env.rules import CARD_POINTS, MAX_PLAYERS, SOLITAIRE
from racko_env.worlds import Worlds, sample_worlds

__all__ = [
    "GAME_NAME",
    "MAX_TIE_ROUNDS",
    "RackoObserver",
    "RackoOpenSpielGame",
    "RackoState",
    "history_string",
    "max_rounds",
    "observation_text",
    "rules_from_params",
    "state_from_history",
    "state_from_observation",
]

GAME_NAME = "racko"
MAX_TIE_ROUNDS = 20

# The game parameters: OpenSpiel's "players" for num_players, then every rules option by its name.
_RULES_PARAM = {"num_players": "players"}
DEFAULT_PARAMS: dict[str, Any] = {
    _RULES_PARAM.get(f.name, f.name): f.default for f in fields(RulesConfig)
}
DEFAULT_PARAMS["episode"] = EPISODE_MODES[0]

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Rack-O",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=SOLITAIRE,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMS,
)

# The stages of a state: who moves next and what the chance outcomes are.
_DEALER_DRAW, _DEAL, _PLAY, _DRAW_CARD, _OVER = range(5)


def rules_from_params(params: dict[str, Any]) -> tuple[RulesConfig, str]:
    """The rules and the episode mode of a parameter dict (defaults filled in), checked: unknown
    names and bad values raise ``ValueError`` / ``TypeError`` naming them."""
    unknown = sorted(set(params) - set(DEFAULT_PARAMS))
    if unknown:
        raise ValueError(
            f"unknown racko parameter(s) {unknown}; known parameters are {sorted(DEFAULT_PARAMS)}"
        )
    merged = {**DEFAULT_PARAMS, **params}
    players = merged["players"]
    if isinstance(players, int) and not SOLITAIRE <= players <= MAX_PLAYERS:
        raise ValueError(
            f"racko parameter 'players' must be between {SOLITAIRE} and {MAX_PLAYERS}, "
            f"got {players}"
        )
    episode = merged.pop("episode")
    if episode not in EPISODE_MODES:
        raise ValueError(
            f"racko parameter 'episode' must be one of {EPISODE_MODES}, got {episode!r}"
        )
    options = {f.name: merged[_RULES_PARAM.get(f.name, f.name)] for f in fields(RulesConfig)}
    return RulesConfig.from_dict(options), episode


def max_rounds(config: RulesConfig, episode: str) -> int:
    """Rounds after which a game stops: every rack scores at least ``CARD_POINTS``, then
    ``MAX_TIE_ROUNDS`` of ties."""
    if episode == "round":
        return 1
    return math.ceil(config.target_score / CARD_POINTS) + MAX_TIE_ROUNDS


class RackoOpenSpielGame(pyspiel.Game):
    """The ``racko`` game of one parameter set (``pyspiel.load_game("racko", {...})``)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.rules, self.episode = rules_from_params(dict(params or {}))
        n = self.rules.num_players
        self.rounds_cap = max_rounds(self.rules, self.episode)
        self.blank = RackoGame(self.rules)  # cloned into every new state (OpenSpiel makes many)
        self.blank.new_game(seed=0, first_dealer=0)
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=self.blank.num_cards + 1,  # outcome = card number; 0 never occurs
            num_players=n,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=3 * self.rules.turn_limit * self.rounds_cap,
        )
        full = {**DEFAULT_PARAMS, **(params or {})}
        super().__init__(_GAME_TYPE, info, full)

    def new_initial_state(self) -> RackoState:
        return RackoState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> RackoObserver:
        if params:
            raise ValueError(f"the racko observer takes no parameters, got {params}")
        perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return RackoObserver(perfect_recall, layout_for(self.rules))


class _Table:
    """The Python side of a state, in one object so that OpenSpiel's clone (a deepcopy of the
    state's attributes) costs one ``RackoGame.clone`` instead of a generic deepcopy of it."""

    def __init__(self, game: RackoOpenSpielGame) -> None:
        self.rules = game.rules
        self.episode = game.episode
        self.include_scores = game.episode == "game"  # as the env: scores are seen in game mode
        self.rounds_cap = game.rounds_cap
        self.engine = game.blank.clone()
        self.stage = _DEALER_DRAW
        self.dealer_draw: list[int] = []
        self.dealt: list[int] = []
        self.started = False  # round 1 has been dealt into the engine

    @property
    def dealing(self) -> bool:
        """Cards are being drawn for the first deal or dealt: a chance node that asks nobody."""
        return self.stage in (_DEALER_DRAW, _DEAL)

    def dealing_text(self) -> str:
        """What everyone sees while ``dealing``."""
        if self.stage == _DEALER_DRAW:
            return f"dealer draw: {' '.join(map(str, self.dealer_draw))}"
        return f"dealing round {self.engine.round_number + 1 if self.started else 1}"

    def __deepcopy__(self, memo: dict) -> _Table:
        other = object.__new__(_Table)
        other.__dict__.update(self.__dict__)
        other.engine = self.engine.clone()
        other.dealer_draw = list(self.dealer_draw)
        other.dealt = list(self.dealt)
        return other


class RackoState(pyspiel.State):
    """A Rack-O state: the engine's table plus the stage of dealing or drawing it is in."""

    def __init__(self, game: RackoOpenSpielGame) -> None:
        super().__init__(game)
        self._t = _Table(game)

    def racko_game(self) -> RackoGame:
        """The engine holding this state's whole table (every rack): for evaluators, tools and
        tests. A player's bot must read only its observation; do not change the engine."""
        return self._t.engine

    # ----------------------------------------------------------------- OpenSpiel's API

    def current_player(self) -> int:
        t = self._t
        if t.stage == _PLAY:
            return t.engine.current
        if t.stage == _OVER:
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(self._t.engine.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        t = self._t
        n_cards = t.engine.num_cards
        if t.stage == _DEALER_DRAW:
            cards = sorted(set(range(1, n_cards + 1)) - set(t.dealer_draw))
        elif t.stage == _DEAL:
            cards = sorted(set(range(1, n_cards + 1)) - set(t.dealt))
        elif t.stage == _DRAW_CARD:
            cards = sorted(t.engine.draw)
        else:
            raise ValueError("chance_outcomes() called at a state that is not a chance node")
        p = 1.0 / len(cards)
        return [(c, p) for c in cards]

    def _apply_action(self, action: int) -> None:
        t = self._t
        game = t.engine
        if t.stage == _PLAY:
            if action == DRAW_PILE and not game.draw_known:
                t.stage = _DRAW_CARD  # which card: a chance node
                return
            game.apply(action)
            self._after_move()
        elif t.stage == _OVER:
            raise ValueError(f"the game is over: no action ({action}) applies")
        elif action not in {card for card, _ in self.chance_outcomes()}:
            raise ValueError(
                f"{action} is not a chance outcome here ({self._action_to_string(-1, action)}): "
                f"the outcomes are the cards still possible, {self._possible_text()}"
            )
        elif t.stage == _DRAW_CARD:
            game.draw.remove(action)
            game.draw.append(action)  # the chance outcome is the top card
            game.apply(DRAW_PILE)
            t.stage = _PLAY
        elif t.stage == _DEALER_DRAW:
            t.dealer_draw.append(action)
            if len(t.dealer_draw) == game.num_players:
                t.stage = _DEAL
        else:  # _DEAL
            t.dealt.append(action)
            if len(t.dealt) == game.rack_size * game.num_players + 1:
                self._finish_deal()

    def _possible_text(self) -> str:
        t = self._t
        if t.stage == _DRAW_CARD:
            return "the cards of the draw pile"
        return f"1..{t.engine.num_cards} not yet {'drawn' if t.stage == _DEALER_DRAW else 'dealt'}"

    def _finish_deal(self) -> None:
        t = self._t
        game = t.engine
        rest = sorted(set(range(1, game.num_cards + 1)) - set(t.dealt))
        deck = t.dealt + rest  # the draw pile's order does not matter: draws are chance nodes
        if not t.started:
            draw = t.dealer_draw
            dealer = max(range(game.num_players), key=draw.__getitem__)
            game.new_game(seed=0, first_dealer=dealer, deck_order=deck)
            game.dealer_draw = list(draw)
            t.started = True
        else:
            game.start_round(deck_order=deck)
        t.dealt = []
        t.stage = _PLAY

    def _after_move(self) -> None:
        t = self._t
        game = t.engine
        if not game.round_over:
            return
        if t.rounds_cap == 1 or game.game_over or game.round_number >= t.rounds_cap:
            t.stage = _OVER
        else:
            t.stage = _DEAL  # the next round, dealt by the next player to the left

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            what = {_DEALER_DRAW: "dealer draw", _DEAL: "deal", _DRAW_CARD: "draw"}
            return f"{what.get(self._t.stage, 'chance')} {action}"
        return ACTION_NAMES[action] if 0 <= action < NUM_ACTIONS else f"action {action}"

    def is_terminal(self) -> bool:
        return self._t.stage == _OVER

    def returns(self) -> list[float]:
        t = self._t
        game = t.engine
        n = game.num_players
        if t.stage != _OVER:
            return [0.0] * n
        cfg = game.config
        team_of = [cfg.team_of(p) for p in range(n)]
        if t.episode == "round":
            winners = game.round_winners
        elif game.game_over:
            winners = {game.game_winner}
        else:  # the round cap: the tied leaders share the win
            winners = {t_ for t_, s in enumerate(game.totals) if s == max(game.totals)}
        return win_rewards(team_of, winners)

    def __str__(self) -> str:
        t = self._t
        game = t.engine
        if t.stage == _DEALER_DRAW:
            return t.dealing_text()
        if t.stage == _DEAL:
            return f"{t.dealing_text()}: {' '.join(map(str, t.dealt))}"
        lines = [
            f"round {game.round_number}, dealer {game.dealer}, turn {game.turn}, "
            f"player {game.current} {Phase(game.phase).name.lower()}"
            + (" (drawing)" if t.stage == _DRAW_CARD else ""),
            f"totals {' '.join(map(str, game.totals))}",
        ]
        for p in range(game.num_players):
            public = " ".join(str(c) if c else "." for c in game.public_slots[p])
            lines.append(f"rack {p}: {' '.join(map(str, game.racks[p]))} (public: {public})")
        lines.append(f"discard (bottom..top): {' '.join(map(str, game.discard))}")
        if game.draw_known:
            lines.append(f"draw (bottom..top): {' '.join(map(str, game.draw))}")
        else:
            lines.append(f"draw (unordered): {' '.join(map(str, sorted(game.draw)))}")
        if game.held is not None:
            source = "discard" if game.held_from_discard else "draw"
            lines.append(f"held: {game.held} (from the {source} pile)")
        return "\n".join(lines)

    # ----------------------------------------------------------------- observations, from Python
    # pyspiel's own path asks the observer for a new initial state's tensor (its shape) on every
    # call; these give the same values (the observer's functions) without it, for Python callers
    # (rl_environment, ISMCTS). C++ callers (random_sim_test) take the observer's path.

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        return state_tensor(self._t, self._player(player)).tolist()

    def observation_tensor(self, player: int | None = None) -> list[float]:
        return state_tensor(self._t, self._player(player)).tolist()

    def information_state_string(self, player: int | None = None) -> str:
        return state_text(self._t, self._player(player), True)

    def observation_string(self, player: int | None = None) -> str:
        return state_text(self._t, self._player(player), False)

    def _player(self, player: int | None) -> int:
        p = self.current_player() if player is None else int(player)
        if not 0 <= p < self._t.engine.num_players:
            raise ValueError(f"player must be a seat 0..{self._t.engine.num_players - 1}, got {p}")
        return p

    # ----------------------------------------------------------------- resampling

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> RackoState:
        """A state ``player_id`` cannot tell from this one (see the module docstring).

        ``probability_sampler()`` (e.g. ``pyspiel.UniformProbabilitySampler``) gives the seed, so a
        seeded sampler makes the resample reproducible.
        """
        t = self._t
        game = t.engine
        if t.stage != _PLAY or player_id != game.current:
            raise ValueError(
                f"resample_from_infostate is for the player on turn at a decision (player "
                f"{self.current_player()}), got player {player_id}"
            )
        seed = int(float(probability_sampler()) * 2**53)
        worlds = sample_worlds(
            encode(game, player_id, t.include_scores),
            1,
            seed,
            config=game.config,
            discard_orders=[list(game.discard)],
            draw_orders=[list(game.draw) if game.draw_known else None],
        )
        other = self.clone()
        engine = other._t.engine
        n = game.num_players
        for k in range(1, n):  # world seat k is the k-th player after the observer
            engine.racks[(player_id + k) % n] = [int(c) for c in worlds.racks[0, k]]
        engine.draw = [int(c) for c in worlds.draw[0, : worlds.draw_len[0]]]
        return other


def _game_from_world(config: RulesConfig, worlds: Worlds, w: int) -> RackoGame:
    """World ``w`` as an engine mid-round (no turn log, the dealer draw forgotten)."""
    game = RackoGame(config)
    game.new_game(seed=0, first_dealer=int(worlds.dealer[w]))
    names = "racks public_slots current turn reshuffles totals slot_drawn slot_changed slot_out"
    for name in [*names.split(), "declined"]:
        setattr(game, name, getattr(worlds, name)[w].astype(int).tolist())
    game.draw = worlds.draw[w, : worlds.draw_len[w]].astype(int).tolist()
    game.discard = worlds.discard[w, : worlds.discard_len[w]].astype(int).tolist()
    game.held = int(worlds.held[w]) or None
    game.held_from_discard = bool(worlds.held_from_discard[w])
    game.phase = Phase(int(worlds.phase[w]))
    game.draw_known = bool(worlds.draw_known[w])
    return game


def state_from_observation(
    game: RackoOpenSpielGame, observation: np.ndarray, seed: int | None = None
) -> RackoState:
    """A state of ``game`` for the seat whose observation this is (it sits at seat 0), with the
    unseen cards dealt at random (``racko_env.worlds``): for playing an OpenSpiel bot through the
    env, where a bot sees only its observation. Its history is empty: a state to search from, not
    to replay."""
    worlds = sample_worlds(observation, 1, seed, config=game.rules)
    state = game.new_initial_state()
    t = state._t
    t.engine = _game_from_world(game.rules, worlds, 0)
    t.started = True
    t.stage = _PLAY
    return state


# ----------------------------------------------------------------------------- safe files


def history_string(state: pyspiel.State) -> str:
    """The state as JSON: the game's parameters and its action history (numbers only)."""
    game = state.get_game()
    params = {k: game.get_parameters()[k] for k in DEFAULT_PARAMS}
    return json.dumps({"game": GAME_NAME, "params": params, "history": state.history()})


def state_from_history(text: str) -> pyspiel.State:
    """The state of ``history_string`` replayed move by move (every move checked legal): no code
    runs from the text, unlike OpenSpiel's pickle-based deserialisation of Python games."""
    try:
        data = json.loads(text)
        params, history = data["params"], data["history"]
        if data.get("game") != GAME_NAME or not isinstance(params, dict):
            raise ValueError
        if not isinstance(history, list):
            raise ValueError
    except (ValueError, TypeError, KeyError, AttributeError):
        raise ValueError(
            'not a racko history: expected JSON {"game": "racko", "params": {...}, '
            '"history": [actions]}'
        ) from None
    try:
        state = pyspiel.load_game(GAME_NAME, params).new_initial_state()
    except (pyspiel.SpielError, ValueError, TypeError) as err:
        raise ValueError(f"bad racko parameters in the history: {err}") from None
    for i, action in enumerate(history):
        if (
            isinstance(action, bool)
            or not isinstance(action, int)
            or action not in state.legal_actions()
        ):
            raise ValueError(f"history entry {i} ({action!r}) is not a legal move there")
        state.apply_action(action)
    return state


if GAME_NAME not in pyspiel.registered_names():
    pyspiel.register_game(_GAME_TYPE, RackoOpenSpielGame)
