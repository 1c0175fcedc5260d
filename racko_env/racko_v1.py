"""Rack-O as a PettingZoo AEC environment (``racko_v1``).

Rack-O is a card game for 2-4 players: each player holds a rack of 10 cards that they may never
rearrange, and tries to be first to get all 10 in ascending order by replacing one card a turn.

| Import             | ``from racko_env import racko_v1``                       |
|--------------------|----------------------------------------------------------|
| Actions            | Discrete($num_actions)                                   |
| Parallel API       | No                                                       |
| Agents             | ``agents = ['player_0', ..., 'player_{n-1}']``           |
| Agents count       | 2-4                                                      |
| Observation shape  | ($obs_size,) float32 in [0, 1], plus a ($num_actions,) int8 action mask |
| Registered id      | ``pettingzoo.make("aec", "racko/racko-v1")``             |

Usage::

    from racko_env import racko_v1
    env = racko_v1.env(num_players=2)
    env.reset(seed=42)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        if termination or truncation:
            action = None
        else:
            action = env.action_space(agent).sample(obs["action_mask"])
        env.step(action)

**Turn structure.** A turn is one to three steps by the same agent: a draw decision, then a
keep-or-discard decision after a draw-pile card, then a slot decision after keeping or after taking
the discard. ``agent_selection`` stays on the player until the turn ends.

**Actions** (``racko_env.actions``):

| id   | meaning                                        | legal when                          |
|------|------------------------------------------------|-------------------------------------|
| 0-9  | put the held card into slot i (0 = front, "5") | after keeping, or after taking the  |
|      | and discard the card that was there            | discard                             |
| 10   | draw the top card of the draw pile (private)   | start of the turn                   |
| 11   | take the top card of the discard pile (public) | start of the turn                   |
| 12   | keep the drawn card                            | after drawing from the draw pile    |
| 13   | discard the drawn card (ends the turn)         | after drawing from the draw pile    |

**Observations** are dicts ``{"observation": Box(0, 1, ($obs_size,), float32), "action_mask":
Box(0, 1, ($num_actions,), int8)}`` seen from the observing seat; the mask is all zeros for an agent not on
turn. The layout is version 2 of ``racko_env.observation`` (``raw_env.obs_version``); it holds
only what that seat may know under "What is public" in the rules: the racks and piles as that seat
sees them and, for every opponent slot, whether its card came from the draw pile, the turn it last
changed and the card that last came out of it, and per opponent the discard it last passed over.
Bots written for layout version 1 (bot files exported before version 2) read its first $obs_size_v1 entries
(``racko_env.observation.view(obs, 1)``): ``agents`` does so for them.

**Rewards.** ``reward="win"`` (default): zero-sum, given once when the episode ends. The winners
(the player who went Rack-O; if the turn limit cut the round off, the best round score; in game
mode the game winner; with partners, whole teams) gain what the others lose: with one winner among n
players the winner gets +1 and every other player -1/(n-1); k tied winners get
(n-k)/(k(n-1)) each; a tie of everyone gives 0. With partners the winning team gets +1 each and
the other -1 each. ``reward="score"``: at the end of every round each agent gets its round points
divided by 75 (the Rack-O score), so Rack-O is +1.0 and a rack ascending for its first 3 slots
(15 points) is +0.2; with partners each agent gets its team's points. Example (2 players, ``reward="score"``): player_0 goes
Rack-O with no bonus, player_1's rack ascends for 3 cards: rewards 1.0 and 0.2.
``reward="turns"``: -1 to the mover on every step that ends its turn (a discard or a
placement), 0 otherwise: the fewest-turns objective of solitaire (``num_players=1``), whose
return is minus the turns to Rack-O, as ``racko/RackoSolitaire-v0`` gives it.
Every agent, the loser included, receives its reward through ``last()`` after the episode ends.

**Episode end.** ``episode="round"`` (default): one round; terminated when someone goes Rack-O,
truncated when ``turn_limit`` turns pass without one. ``episode="game"``: rounds (the deal passing
left) until a player or team reaches ``target_score``; terminated then.

**Illegal actions.** An action is a Python int or a numpy integer (a 0-d integer array too); nothing
is coerced: ``True``, ``10.0``, ``"10"`` or NaN raise ``ValueError`` naming the value. An integer
that is not legal now makes ``raw_env.step`` raise ``ValueError`` naming the action and the legal
ones; ``env()`` wraps it in PettingZoo's ``TerminateIllegalWrapper`` (the offender gets -1, the
episode ends), after ``AssertOutOfBoundsWrapper`` has refused anything outside ``Discrete($num_actions)``.
An agent that is done steps with None (PettingZoo's convention). ``step()`` before ``reset()``, or
once every agent is done, raises ``RuntimeError`` saying so.

**Arguments.**
``num_players`` (2-4; 1 is solitaire), ``episode`` ("round"/"game"), ``reward`` ("win"/"score"),
``render_mode`` (None/"ansi"/"human"), ``viewer`` (whose rack render shows: None = the player on
turn, a seat index, or "all"), and the rules options of ``racko_env.RulesConfig``:
``empty_pile`` ("shuffle"/"flip"), ``turn_limit`` (400), ``min_run`` (0 or 3+, 2 players),
``bonus`` (False), ``partners`` (False, 4 players), ``target_score`` (500), ``rack_size`` (10;
3-10 slots) and ``deck_size`` (0: the players' deck). With ``num_players=1`` (solitaire) or a
smaller rack the observation is ``racko_env.observation.layout_for(config)``'s, sized to the game.

**Read-only accessors for tools and tests** (not for agents, which must use observations):
``env.unwrapped.rack(agent)``, ``env.unwrapped.discard_top``, ``env.unwrapped.held_card``,
``env.unwrapped.scores``, and ``env.unwrapped.game`` (the rules engine).

**Reset options.** ``reset(seed, options={"first_dealer": 1, "deck_order": [...]})`` fixes the
first deal (``deck_order[0]`` is the top card, dealt first); later rounds and refills still follow
the seed.
"""

from __future__ import annotations

import random
from string import Template
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from racko_env.actions import NUM_ACTIONS, Phase, as_action_id
from racko_env.config import RulesConfig
from racko_env.engine import RackoGame
from racko_env.observation import OBS_SIZES, OBS_VERSION, OFF_TURN_MASK, layout_for, phase_masks
from racko_env.render import render_in, render_table
from racko_env.rules import racko_score
from racko_env.seat_views import SeatViews
from racko_env.wrappers import wrap_classic

# The docstring is the env's page: its sizes come from the code, so they cannot go stale.
__doc__ = Template(__doc__).substitute(
    obs_size=OBS_SIZES[OBS_VERSION], obs_size_v1=OBS_SIZES[1], num_actions=NUM_ACTIONS
)
EPISODE_MODES = ("round", "game")
REWARD_MODES = ("win", "score", "turns")


def env(**kwargs: Any) -> AECEnv:
    """The environment wrapped as PettingZoo classic envs are (illegal moves end the episode)."""
    return wrap_classic(raw_env(**kwargs), illegal_reward=-1.0)


class ActionSpace(spaces.Discrete):
    """``Discrete(NUM_ACTIONS)`` with a fast membership test for plain ints (checked on every wrapped step)."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(NUM_ACTIONS, seed=seed)

    def contains(self, x: Any) -> bool:
        """Integers 0..13 only (``as_action_id``): not ``True``, not ``10.0``."""
        if type(x) is int:  # the common case, without the call
            return 0 <= x < NUM_ACTIONS
        try:
            return 0 <= as_action_id(x) < NUM_ACTIONS
        except ValueError:
            return False


def win_rewards(team_of: list[int], winners: set[int]) -> list[float]:
    """Zero-sum win/loss signal per seat given the winning teams (see the module docstring)."""
    n_teams = max(team_of) + 1
    k = len(winners)
    if k == 0 or k == n_teams:
        return [0.0] * len(team_of)
    if n_teams == 2:
        win, lose = 1.0, -1.0
    else:
        win, lose = (n_teams - k) / (k * (n_teams - 1)), -1.0 / (n_teams - 1)
    return [win if t in winners else lose for t in team_of]


class raw_env(AECEnv):
    """``racko_v1``'s bare env (see the module docstring)."""

    obs_version = 2  # the observation layout version this env gives
    metadata = {
        "name": "racko_v1",
        "render_modes": ["human", "ansi"],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        num_players: int = 2,
        episode: str = "round",
        reward: str = "win",
        render_mode: str | None = None,
        viewer: int | str | None = None,
        **rules_options: Any,
    ) -> None:
        super().__init__()
        self.config = RulesConfig.from_dict({"num_players": num_players, **rules_options})
        if episode not in EPISODE_MODES:
            raise ValueError(f"episode must be one of {EPISODE_MODES}, got {episode!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )
        n = self.config.num_players
        if viewer is not None and viewer != "all" and viewer not in range(n):
            raise ValueError(f"viewer must be None, 'all' or a seat in 0..{n - 1}, got {viewer!r}")
        self.episode = episode
        self.reward_mode = reward
        self.render_mode = render_mode
        self.viewer = viewer
        self._obs_width = layout_for(self.config).sizes[self.obs_version]
        self._phase_masks = phase_masks(self.config.rack_size)
        self.game = RackoGame(self.config)
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self._team_of = [self.config.team_of(p) for p in range(n)]
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self._obs_width,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: ActionSpace() for a in self.possible_agents}
        self._seeder = random.Random()
        self._views: SeatViews | None = None  # made at the first reset
        self.agents: list[str] = []
        self._has_reset = False

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ----------------------------------------------------------------- API

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start an episode. ``options`` may fix the first deal for tests and replays:
        ``{"first_dealer": seat, "deck_order": [...]}`` (deck_order[0] is the top card)."""
        options = options or {}  # other keys are ignored, as PettingZoo's api_test expects
        if seed is not None:
            self._seeder.seed(seed)
        self.game.new_game(
            seed=self._seeder.getrandbits(64),
            first_dealer=options.get("first_dealer"),
            deck_order=options.get("deck_order"),
        )
        if self._views is None:
            self._views = SeatViews(self.game, self.episode == "game")
        else:  # the same game object, dealt anew: re-encode every seat into the same rows
            self._views.resync()
        self._rewards_given = False
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current]
        self._has_reset = True

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Fresh arrays on every call: the seat's row of ``SeatViews`` (the current layout), cut
        to this env's ``obs_version``, and ``action_mask``."""
        player = self.agent_name_mapping[agent]
        game = self.game
        return {
            "observation": self._views.row_views[player][: self._obs_width].copy(),
            "action_mask": (
                self._phase_masks[game.phase] if game.current == player else OFF_TURN_MASK
            ).copy(),  # = observation.action_mask(game, player), inlined
        }

    def step(self, action: int | None) -> None:
        """Play ``action`` for ``agent_selection``: an integer action id (``as_action_id``), or
        None for an agent that is done (PettingZoo's dead step). Raises ``ValueError`` for a
        non-integer or illegal action and ``RuntimeError`` before ``reset()`` or once every agent
        is done."""
        if not self._has_reset:
            raise RuntimeError("step() called before reset(); call reset() first")
        agents = self.agents
        if not agents:
            raise RuntimeError(
                "step() called after the episode ended (every agent is done); call reset() first"
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(
                f"action None for {agent}, who is on turn and not done; legal actions are "
                f"{list(self.game.legal_actions())}"
            )
        game = self.game
        turn = game.turn
        game.apply(action)  # raises ValueError for a non-integer or illegal action, naming it
        self._cumulative_rewards[agent] = 0.0
        # Rewards are nonzero only on a step that ends a round (or, with reward="turns", a turn):
        # the step after one sets them back to 0.0, and only such a step adds them up (adding
        # zeros changes nothing).
        if self._rewards_given:
            rewards = self.rewards
            for a in agents:
                rewards[a] = 0.0
            self._rewards_given = False
        if self.reward_mode == "turns" and game.turn != turn:
            self.rewards[agent] = -1.0
            self._rewards_given = True
        ended = game.round_over and self._finish_round()  # may deal the next round
        self._views.update()
        next_player = game.current  # the next player, or the first of a newly dealt round
        if ended:
            # Everyone sees the end through last(), in seat order after the mover.
            next_player = (next_player + 1) % game.num_players
        self.agent_selection = self.possible_agents[next_player]
        if self._rewards_given:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _finish_round(self) -> bool:
        """Hand out round-end rewards; deal the next round or end the episode (returns True)."""
        self._rewards_given = True
        game = self.game
        n = game.num_players
        if self.reward_mode == "score":
            points = game.round_team_points
            for p in range(n):
                self.rewards[self.possible_agents[p]] = points[p] / racko_score(game.rack_size)
        for p in range(n):
            self.infos[self.possible_agents[p]] = {
                "round_points": game.last_round_points[p],
                "went_racko": game.racko_player == p,
            }
        if self.episode == "round":
            if self.reward_mode == "win":
                self._set_win_rewards(game.round_winners)
            done = self.truncations if game.truncated else self.terminations
            for a in self.agents:
                done[a] = True
        elif game.game_over:
            if self.reward_mode == "win":
                self._set_win_rewards({game.game_winner})
            for a in self.agents:
                self.terminations[a] = True
        else:
            game.start_round()
            return False
        return True

    def _set_win_rewards(self, winners: set[int]) -> None:
        for p, r in enumerate(win_rewards(self._team_of, winners)):
            self.rewards[self.possible_agents[p]] = r

    def render(self) -> str | None:
        return render_in(
            self.render_mode, lambda: render_table(self.game, self.possible_agents, self.viewer)
        )

    def close(self) -> None:
        pass

    # ----------------------------------------------------------------- accessors for tools/tests

    def rack(self, agent: str) -> tuple[int, ...]:
        """The agent's rack, slot 0 (front) first. For tools and tests, not for agents."""
        return tuple(self.game.racks[self.agent_name_mapping[agent]])

    @property
    def discard_top(self) -> int:
        return self.game.discard_top

    @property
    def held_card(self) -> int | None:
        """The card the player on turn holds (drawn or taken), if any."""
        return self.game.held

    @property
    def scores(self) -> dict[str, int]:
        """Game totals per agent (team totals with partners)."""
        return dict(zip(self.possible_agents, self.game.scores, strict=True))

    @property
    def phase(self) -> Phase:
        return self.game.phase
