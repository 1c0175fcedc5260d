"""Rack-O as a single-agent Gymnasium env: the learner takes one seat, bots play the others.

``gymnasium.make("racko/Racko-v1", num_players=2, opponents=["heuristic"])`` makes it; it is the
view MaskablePPO trains on, torch-free, and one game of the learner-seat core
(``racko_env.learner_games.LearnerGames``). It draws seats, opponents and deals from its own
Gymnasium generator, and deals exactly the games ``racko_v1`` deals from ``deal_seed``.

- The learner's seat rotates: episode k plays seat ``(offset + k) % n``, ``offset`` drawn from the
  seed given to ``reset``; ``seat=`` pins it.
- Opponents are drawn per episode and seat from a weighted pool: ``opponents`` lists bot specs
  (resolved by the installed bot provider through ``racko_env.opponents``; this module never
  imports ``agents``) or bot objects (``reset()`` / ``act(obs_dict)``, or ``act_batch(obs,
  masks)``), ``opponent_weights`` their weights (default: equal); ``set_opponent_pool`` swaps the
  pool (self-play). Per-game bots hear ``reset()`` at each round's start, ``seed()`` at each
  episode's.
- Observation: the learner's vector of layout ``observation_version`` (default ``OBS_VERSION``);
  opponents always see the current layout. Legal actions: ``action_masks()`` and
  ``info["action_mask"]``, never all False while the episode runs.
- Reward: the learner seat's AEC reward (``reward="win"|"score"|"turns"``,
  ``episode="round"|"game"``), on the step that ends the episode also when an opponent's move
  ended it (in game mode with score rewards, each round's on the learner step where it ended;
  with ``"turns"``, -1 on each learner step that ends its turn). ``terminated``: Rack-O (or
  game over); ``truncated``: the turn limit. The last step's info holds the learner's
  ``round_points`` and ``went_racko``; ``deal_seed`` replays the episode in ``racko_v1``.
- An action that is not an integer raises ``ValueError``; an integer that is not legal now ends
  the episode with reward -1 and ``info["illegal_action"]``, as PettingZoo's classic wrapper does.
  ``step()`` before ``reset()`` raises ``RuntimeError``.
- ``get_state()`` / ``set_state(state)``: everything that changes, as data (no pickle), for
  opponents given by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from racko_env.actions import NUM_ACTIONS, as_action_id
from racko_env.learner_games import LearnerGames, OpponentSpec, pool_weights, resolve_batch
from racko_env.observation import OBS_VERSION, layout_for, obs_size
from racko_env.opponents import BotBatch
from racko_env.render import render_in, render_table
from racko_env.vector.chance import GameSeeds

ILLEGAL_REWARD = -1.0
_GAME = np.zeros(1, dtype=np.intp)  # the one game of the core


class RackoGymEnv(gymnasium.Env):
    """The single-agent view of ``racko_v1`` (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(
        self,
        num_players: int = 2,
        opponents: Sequence[Any] = ("heuristic",),
        opponent_weights: Sequence[float] | None = None,
        reward: str = "win",
        episode: str = "round",
        seat: int | None = None,
        render_mode: str | None = None,
        observation_version: int = OBS_VERSION,
        **rules_options: Any,
    ) -> None:
        self.observation_version = observation_version
        obs_size(observation_version)  # ValueError naming an unknown version
        weights = _checked_pool(opponents, opponent_weights)
        self.fixed_seat = seat
        self._bot_cache: dict[str, Any] = {}
        self._core = LearnerGames(
            1,
            num_players=num_players,
            opponents=list(opponents),
            seed=0,
            reward=reward,
            episode=episode,
            opponent_weights=weights,
            chance=GameSeeds(1),
            load_policy=self._load_policy,
            draw=self._draw,
            **rules_options,
        )
        n = self._core.num_players
        if seat is not None and seat not in range(n):
            raise ValueError(f"seat must be None or a seat in 0..{n - 1}, got {seat!r}")
        self.render_mode = render_mode
        self.num_players = n
        self.rules_options = self._core.games.config.to_dict()
        self._width = layout_for(self._core.games.config).sizes[observation_version]
        self.observation_space = spaces.Box(0.0, 1.0, (self._width,), dtype=np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._offset = 0
        self._episode_index = 0
        self._done = True
        self._end_info: dict[str, Any] = {}
        self.deal_seed: int | None = None  # None until the first reset()

    def _load_policy(self, spec: OpponentSpec, num_players: int, **kwargs: Any) -> Any:
        """The core's policy from an opponent: one bot per name, a bot row by row (``BotBatch``),
        a batch policy as is."""
        if isinstance(spec, str):
            if spec not in self._bot_cache:
                self._bot_cache[spec] = resolve_batch(spec, num_players, **kwargs)
            return self._bot_cache[spec]
        if hasattr(spec, "act") and hasattr(spec, "reset"):
            return BotBatch(spec)
        if hasattr(spec, "act_batch"):
            return spec
        raise TypeError(
            f"opponent {spec!r} is neither a bot name nor a bot (reset/act or act_batch)"
        )

    def _draw(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The core's draw of a new episode, from this view's generator: the learner's seat
        (pinned or rotated), an opponent per other seat, the bots' seeds and the deal's seed."""
        core, n, rng = self._core, self.num_players, self.np_random
        seat = self.fixed_seat
        learner = seat if seat is not None else (self._offset + self._episode_index) % n
        self._episode_index += 1
        opp = np.full(n, -1, dtype=np.intp)
        for s in range(n):
            if s != learner:
                opp[s] = core._pool[int(rng.choice(len(core._pool), p=core._pool_p))]
        bots: dict[int, Any] = {}
        for key in opp[opp >= 0].tolist():
            policy = core._policies[key]
            bots.setdefault(id(getattr(policy, "bot", policy)), policy)
        for policy in bots.values():  # bots with randomness stay reproducible
            if isinstance(policy, BotBatch) and hasattr(policy.bot, "seed"):
                policy.bot.seed(int(rng.integers(2**31)))
        self.deal_seed = int(rng.integers(2**63))
        core.games.game.chance.seed(0, self.deal_seed)
        return np.array([learner], dtype=np.intp), opp[None]

    @property
    def learner(self) -> int:
        """The learner's seat in the current episode."""
        return int(self._core._learner[0])

    @property
    def opponent_pool(self) -> list[Any]:
        """The bots new episodes draw opponents from (in pool order): bot objects as given or
        resolved from their names, batch policies as given."""
        return [getattr(p, "bot", p) for p in self._core.opponent_pool]

    def set_opponent_pool(
        self, opponents: Sequence[Any], weights: Sequence[float] | None = None
    ) -> None:
        """Replace the pool the opponents are drawn from (takes effect at the next episode)."""
        self._core.set_opponent_pool(list(opponents), _checked_pool(opponents, weights))

    # ------------------------------------------------------------------ gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._offset = int(self.np_random.integers(self.num_players))
            self._episode_index = 0
        # an episode the opponents end before the learner moves is dealt again
        self._core._start(_GAME)
        self._done = False
        self._end_info = {}
        return self._obs(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """One learner decision: an integer (``as_action_id``; anything else raises ``ValueError``),
        and one that is not legal now ends the episode with ``ILLEGAL_REWARD``."""
        if self.deal_seed is None:
            raise RuntimeError("step() called before reset(); call reset() first")
        if self._done:
            raise RuntimeError("step() called after the episode ended; call reset() first")
        action = as_action_id(action)
        if not (0 <= action < NUM_ACTIONS and self.action_masks()[action]):
            self._done = True
            return self._obs(), ILLEGAL_REWARD, True, False, self._info(illegal_action=action)
        reward, terminated, truncated = self._core._play(np.array([action]), _GAME)
        self._done = bool(terminated[0] or truncated[0])
        if self._done:
            eng, me = self._core.games.game, self.learner
            self._end_info = {
                "round_points": int(eng.last_round_points[0, me]),
                "went_racko": bool(eng.racko_player[0] == me),
            }
        info = self._info(**self._end_info) if self._done else self._info()
        return self._obs(), float(reward[0]), bool(terminated[0]), bool(truncated[0]), info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (bool, ``NUM_ACTIONS``); all False only after the episode ended."""
        if self._done:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return self._core.games.action_masks(_GAME, self._core._learner[:1])[0].copy()

    def _obs(self) -> np.ndarray:
        obs = self._core.games.observe(_GAME, self._core._learner[:1])
        return np.array(obs[0, : self._width], dtype=np.float32)

    def _info(self, **extra: Any) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "seat": self.learner, **extra}

    def render(self) -> str | None:
        names = [f"player_{p}" for p in range(self.num_players)]
        return render_in(self.render_mode, lambda: render_table(self._table(), names))

    def _table(self) -> Any:
        """The game as ``render_table`` reads a ``RackoGame``."""
        eng = self._core.games.game
        discard = eng.discard_pile(0)
        return SimpleNamespace(
            num_players=self.num_players,
            config=self._core.games.config,
            round_number=int(eng.round_number[0]),
            turn=int(eng.turn[0]),
            dealer=int(eng.dealer[0]),
            current=int(eng.current[0]),
            phase=int(eng.phase[0]),
            discard_top=discard[-1] if discard else 0,
            draw=eng.draw_pile(0),
            held=int(eng.held[0]) or None,
            held_from_discard=bool(eng.held_from_discard[0]),
            racks=eng.racks[0].tolist(),
            scores=eng.scores(_GAME)[0].tolist(),
        )

    # ------------------------------------------------------------------ checkpointing

    def get_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Everything that changes while playing, as data (for exact resume): the core's JSON-able
        dict and numpy arrays, with this view's generator and episode counters. Opponents given as
        objects rather than names cannot be saved (``ValueError``)."""
        meta, arrays = self._core.get_state()
        meta["view"] = {
            "np_random": self.np_random.bit_generator.state,
            "offset": self._offset,
            "episode_index": self._episode_index,
            "deal_seed": self.deal_seed,
            "done": self._done,
            "end_info": self._end_info,
        }
        return meta, arrays

    def set_state(self, state: tuple[dict[str, Any], dict[str, np.ndarray]]) -> None:
        """Restore a ``get_state()`` into an env built with the same number of players."""
        meta, arrays = state
        self._bot_cache.clear()
        self._core.set_state(meta, arrays)
        view = meta["view"]
        self.np_random.bit_generator.state = view["np_random"]
        self._offset, self._episode_index = int(view["offset"]), int(view["episode_index"])
        self.deal_seed, self._done = view["deal_seed"], bool(view["done"])
        self._end_info = dict(view["end_info"])


def _checked_pool(opponents: Sequence[Any], weights: Sequence[float] | None) -> list[float]:
    """The pool's weights (default: equal): a list of opponents, not one name."""
    if isinstance(opponents, str | bytes):
        raise ValueError(f"opponents must be a non-empty list of bot specs, got {opponents!r}")
    return pool_weights(len(opponents), weights).tolist()
