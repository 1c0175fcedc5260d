"""Episodes and rewards for many games at once, exactly as the AEC env ``racko_v1`` gives them.

``VectorRacko`` wraps a ``VectorGame`` with the env arguments ``episode`` ("round"/"game") and
``reward`` ("win"/"score"/"turns"). ``step`` returns, per game, every seat's reward of that step (what
``raw_env.rewards`` holds after the same move) and whether the episode ended (terminated or
truncated). In game mode a finished round that does not end the game deals the next one at once,
as ``raw_env`` does. Ended episodes stay ended until ``reset(games)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from racko_env.config import RulesConfig
from racko_env.racko_v1 import EPISODE_MODES, REWARD_MODES, win_rewards
from racko_env.rules import racko_score
from racko_env.vector.chance import ChanceSource
from racko_env.vector.encode import Encoder
from racko_env.vector.engine import VectorGame


class StepResult(NamedTuple):
    """Per game of the step: rewards [k, P] (float64), terminated [k], truncated [k]."""

    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated


class VectorRacko:
    """B Rack-O episodes with the AEC env's rules, rewards and episode ends, in numpy."""

    def __init__(
        self,
        num_games: int,
        num_players: int = 2,
        episode: str = "round",
        reward: str = "win",
        seed: int | None = None,
        chance: ChanceSource | None = None,
        **rules_options: object,
    ) -> None:
        if episode not in EPISODE_MODES:
            raise ValueError(f"episode must be one of {EPISODE_MODES}, got {episode!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.config = RulesConfig.from_dict({"num_players": num_players, **rules_options})
        self.episode = episode
        self.reward_mode = reward
        self.include_scores = episode == "game"
        self.game = VectorGame(num_games, self.config, chance=chance, seed=seed)
        self.encoder = Encoder(self.game)
        self.num_games = self.game.num_games
        self.num_players = self.game.num_players
        self.episode_over = np.zeros(self.num_games, dtype=bool)
        n_teams = self.config.num_teams
        # A winner's and a loser's reward by the number of winning teams (racko_v1.win_rewards).
        self._win, self._lose = np.zeros(n_teams + 1), np.zeros(n_teams + 1)
        for k in range(1, n_teams):
            rewards = win_rewards(list(range(n_teams)), set(range(k)))
            self._win[k], self._lose[k] = rewards[0], rewards[-1]
        self._team_onehot = self.game.team_of[:, None] == np.arange(n_teams)[None, :]  # [P, T]

    def reset(
        self,
        games: np.ndarray | list[int] | None = None,
        first_dealer: np.ndarray | list[int] | int | None = None,
        deck_orders: np.ndarray | None = None,
    ) -> None:
        """Start new episodes (new games) in ``games`` (default: all)."""
        g = self.game._games(games, distinct=True)
        self.game.new_game(g, first_dealer=first_dealer, deck_orders=deck_orders)
        self.episode_over[g] = False

    def step(self, actions: np.ndarray, games: np.ndarray | list[int] | None = None) -> StepResult:
        """Apply one decision per game (the player on turn) and hand out the AEC rewards."""
        game = self.game
        g = game._games(games, distinct=True)
        if self.episode_over[g].any():
            bad = g[self.episode_over[g]].tolist()
            raise ValueError(f"the episodes of games {bad} are over; reset them first")
        mover, turn = game.current[g].copy(), game.turn[g].copy()
        game.step(actions, g)
        k = len(g)
        rewards = np.zeros((k, self.num_players), dtype=np.float64)
        if self.reward_mode == "turns":  # -1 to the mover for each turn it ends
            rewards[np.arange(k), mover] = np.where(game.turn[g] != turn, -1.0, 0.0)
        terminated = np.zeros(k, dtype=bool)
        truncated = np.zeros(k, dtype=bool)
        ended = game.round_over[g]
        if ended.any():
            rows = np.flatnonzero(ended)
            s = g[rows]
            if self.reward_mode == "score":
                rewards[rows] = game.round_team_points(s) / racko_score(game.rack_size)
            if self.episode == "round":
                if self.reward_mode == "win":
                    rewards[rows] = self._win_rewards(game.round_winners(s))
                trunc = game.truncated[s]
                truncated[rows] = trunc
                terminated[rows] = ~trunc
                self.episode_over[s] = True
            else:
                over = game.game_over[s]
                if over.any():
                    o = s[over]
                    if self.reward_mode == "win":
                        winners = game.team_of[None, :] == game.game_winner[o][:, None]
                        rewards[rows[over]] = self._win_rewards(winners)
                    terminated[rows[over]] = True
                    self.episode_over[o] = True
                if not over.all():
                    game.start_round(s[~over])
        return StepResult(rewards, terminated, truncated)

    def _win_rewards(self, winners: np.ndarray) -> np.ndarray:
        """Zero-sum rewards [k, P] from the winning seats (whole teams win together)."""
        team_wins = (winners[:, :, None] & self._team_onehot[None]).any(axis=1)  # [k, T]
        count = team_wins.sum(axis=1)
        return np.where(winners, self._win[count][:, None], self._lose[count][:, None])

    # ----------------------------------------------------------------- views

    def observe(
        self,
        games: np.ndarray,
        seats: np.ndarray,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """Observation vectors (float32 [k, OBS_SIZE]: the current layout) of ``seats[i]`` in
        ``games[i]``."""
        return self.encoder.observe(games, seats, self.include_scores, out)

    def action_masks(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Legal-action masks (bool [k, 14]) of ``seats[i]`` in ``games[i]``."""
        return self.encoder.masks(games, seats)
