"""The reference for ``racko_env.gym_env``: the single-agent view as it was before it ran on the
learner-seat core (bots seated over the AEC env ``racko_v1``), kept in the tests only, where
``tests/env/test_gym_env.py`` holds the view equal to it (same seed and actions: same observations,
masks, rewards, ends, seats and deal seeds).

Registered as ``gymnasium.make("racko/Racko-v1", num_players=2, opponents=["heuristic"])``
(observation layout version 2).
This is the view MaskablePPO trains on; it is torch-free.

- The learner's seat rotates: episode k of an env instance plays seat ``(offset + k) % n``, with
  ``offset`` drawn from the seed given to ``reset``. ``seat=`` pins it instead.
- Opponents are drawn per episode and per seat from a weighted pool: ``opponents`` is a list of
  bot names (``"heuristic"``, ``"expert"``, ``"module:Class"``, ``"bot.onnx"``: resolved by the
  installed bot provider, ``agents.load``, through ``racko_env.opponents``; this module never
  imports ``agents``) or bot objects (``reset()`` / ``act(obs_dict)``, or a batch policy with
  ``act_batch(obs, masks)``), and ``opponent_weights`` their relative weights (default: equal).
  ``set_opponent_pool`` swaps the pool during training (self-play snapshots).
- Observation: the learner's vector of layout ``observation_version`` (``racko_env.observation``;
  default the current one, ``OBS_VERSION``; the registered ids pass theirs). The game underneath is
  ``racko_v1``'s, so opponents always see the current layout, whatever the learner is shown.
  Legal actions: ``action_masks()`` (bool, ``NUM_ACTIONS``) and ``info["action_mask"]``.
  Opponents move until the learner has a decision again, so the mask is never all False.
- Reward: the learner seat's reward from the AEC env (``reward="win"|"score"``,
  ``episode="round"|"game"``), delivered on the step that ends the episode also when an opponent's
  move ended it; in game mode with score rewards each round's reward arrives on the learner step
  where that round ended. ``terminated``: Rack-O (or game over); ``truncated``: the turn limit.
- ``deal_seed``: the seed of the current episode's ``racko_v1``
  reset, to replay it there.
- Actions are integers (a Python int or a numpy integer; not a bool, float, string, None or
  array of more than one element): anything else raises ``ValueError``, nothing is rounded. An
  integer that is not legal now (any integer outside 0..13 too) ends the episode with reward -1
  and ``info["illegal_action"]`` (as PettingZoo's classic wrapper does), so random-action checkers
  never crash the env. ``step()`` before ``reset()`` raises ``RuntimeError`` saying so.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from racko_env.actions import NUM_ACTIONS, as_action_id
from racko_env.observation import OBS_VERSION, obs_size
from racko_env.opponents import resolve as resolve_bot_name
from racko_env.racko_v1 import raw_env

ILLEGAL_REWARD = -1.0


class _BatchAdapter:
    """Plays a ``BatchPolicy`` (``act_batch(obs, masks)``) as a per-game bot, one row at a time."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.name = getattr(policy, "name", type(policy).__name__)

    def reset(self) -> None:
        pass

    def act(self, observation: dict[str, np.ndarray]) -> int:
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        mask = np.asarray(observation["action_mask"], dtype=bool)[None]
        return self.policy.act_batch(obs, mask)[0]  # checked as an action by the env, not coerced


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
        self._width = obs_size(observation_version)  # ValueError naming an unknown version
        self._aec = raw_env(
            num_players=num_players,
            episode=episode,
            reward=reward,
            render_mode="ansi" if render_mode else None,
            **rules_options,
        )
        n = self._aec.config.num_players
        if seat is not None and seat not in range(n):
            raise ValueError(f"seat must be None or a seat in 0..{n - 1}, got {seat!r}")
        self.render_mode = render_mode
        self.num_players = n
        self.rules_options = self._aec.config.to_dict()
        self.fixed_seat = seat
        self.observation_space = spaces.Box(0.0, 1.0, (self._width,), dtype=np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._bot_cache: dict[str, Any] = {}
        self.set_opponent_pool(opponents, opponent_weights)
        self._offset = 0
        self._episode_index = 0
        self.learner = 0
        self._seat_bots: dict[int, Any] = {}
        self._round_number = -1
        self._done = True
        self.deal_seed: int | None = None  # None until the first reset()

    # ------------------------------------------------------------------ opponents

    def set_opponent_pool(
        self, opponents: Sequence[Any], weights: Sequence[float] | None = None
    ) -> None:
        """Replace the pool the opponents are drawn from (takes effect at the next episode)."""
        if isinstance(opponents, str | bytes) or len(opponents) == 0:
            raise ValueError(f"opponents must be a non-empty list of bot specs, got {opponents!r}")
        if weights is None:
            weights = [1.0] * len(opponents)
        if len(weights) != len(opponents):
            raise ValueError(
                f"opponent_weights has {len(weights)} entries for {len(opponents)} opponents"
            )
        w = np.asarray(weights, dtype=np.float64)
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"opponent_weights must be >= 0 with a positive sum, got {weights!r}")
        self._pool = [self._resolve(o) for o in opponents]
        self._pool_p = w / w.sum()

    def _resolve(self, spec: Any) -> Any:
        if isinstance(spec, str):
            if spec not in self._bot_cache:
                self._bot_cache[spec] = resolve_bot_name(
                    spec, num_players=self.num_players, **self._rules_without_players()
                )
            return self._bot_cache[spec]
        if hasattr(spec, "act") and hasattr(spec, "reset"):
            return spec
        if hasattr(spec, "act_batch"):
            return _BatchAdapter(spec)
        raise TypeError(
            f"opponent {spec!r} is neither a bot name nor a bot (reset/act or act_batch)"
        )

    def _rules_without_players(self) -> dict[str, Any]:
        return {k: v for k, v in self.rules_options.items() if k != "num_players"}

    # ------------------------------------------------------------------ gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._offset = int(self.np_random.integers(self.num_players))
            self._episode_index = 0
        while True:  # an opponent could end a round before the learner ever moves: deal again
            self._start_episode()
            self._advance()
            if not self._done:
                return self._obs(), self._info()

    def _start_episode(self) -> None:
        n = self.num_players
        if self.fixed_seat is not None:
            self.learner = self.fixed_seat
        else:
            self.learner = (self._offset + self._episode_index) % n
        self._episode_index += 1
        rng = self.np_random
        self._seat_bots = {
            s: self._pool[int(rng.choice(len(self._pool), p=self._pool_p))]
            for s in range(n)
            if s != self.learner
        }
        for bot in self._unique_bots():
            if hasattr(bot, "seed"):  # bots with randomness stay reproducible
                bot.seed(int(rng.integers(2**31)))
        self.deal_seed = int(rng.integers(2**63))
        self._aec.reset(seed=self.deal_seed)
        self._round_number = -1
        self._done = False
        self._pending_reward = 0.0
        self._end_info: dict[str, Any] = {}

    def _advance(self) -> None:
        """Let opponents move until the learner must decide or the episode ends."""
        aec = self._aec
        me = aec.possible_agents[self.learner]
        while True:
            if aec.terminations[me] or aec.truncations[me]:
                self._done = True
                self._end_info = dict(aec.infos[me])
                return
            if aec.game.round_number != self._round_number:
                self._round_number = aec.game.round_number
                for bot in self._unique_bots():
                    bot.reset()
            agent = aec.agent_selection
            if agent == me:
                return
            bot = self._seat_bots[aec.agent_name_mapping[agent]]
            action = bot.act(aec.observe(agent))
            try:
                aec.step(action)  # checked, not coerced: a bot's bad action is its bug to see
            except ValueError as err:
                name = getattr(bot, "name", type(bot).__name__)
                raise ValueError(f"opponent {name} ({agent}) played {action!r}: {err}") from None
            self._pending_reward += aec.rewards[me]

    def _unique_bots(self) -> list[Any]:
        seen: dict[int, Any] = {}
        for bot in self._seat_bots.values():
            seen.setdefault(id(bot), bot)
        return list(seen.values())

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """One learner decision. ``action`` must be an integer (``as_action_id``): anything else,
        None, NaN, floats, strings, bools and arrays alike, raises ``ValueError``. An integer that
        is not legal now (out of 0..13 included) ends the episode with ``ILLEGAL_REWARD``."""
        if self.deal_seed is None:
            raise RuntimeError("step() called before reset(); call reset() first")
        if self._done:
            raise RuntimeError("step() called after the episode ended; call reset() first")
        aec = self._aec
        me = aec.possible_agents[self.learner]
        action = as_action_id(action)
        if not aec.game.is_legal(action):
            self._done = True
            return self._obs(), ILLEGAL_REWARD, True, False, self._info(illegal_action=action)
        self._pending_reward = 0.0
        aec.step(action)
        self._pending_reward += aec.rewards[me]
        self._advance()
        reward = float(self._pending_reward)
        self._pending_reward = 0.0
        terminated = self._done and bool(aec.terminations[me])
        truncated = self._done and not terminated
        info = self._info(**self._end_info) if self._done else self._info()
        return self._obs(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (bool, ``NUM_ACTIONS``); all False only after the episode ended."""
        if self._done:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return self._aec.observe(self._aec.possible_agents[self.learner])["action_mask"].astype(
            bool
        )

    def _obs(self) -> np.ndarray:
        obs = self._aec.observe(self._aec.possible_agents[self.learner])["observation"]
        return obs if len(obs) == self._width else obs[: self._width].copy()

    def _info(self, **extra: Any) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "seat": self.learner, **extra}

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'.")
            return None
        text = self._aec.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # ------------------------------------------------------------------ checkpointing

    def get_state(self) -> bytes:
        """Everything that changes while playing (for exact resume of a training run)."""
        keys = (
            "_aec",
            "_offset",
            "_episode_index",
            "learner",
            "_seat_bots",
            "_round_number",
            "_done",
            "_pool",
            "_pool_p",
            "_bot_cache",
            "deal_seed",
            "_pending_reward",
            "_end_info",
        )
        state = {k: self.__dict__[k] for k in keys if k in self.__dict__}
        state["_np_random"] = self.np_random.bit_generator.state
        return pickle.dumps(state)

    def set_state(self, blob: bytes) -> None:
        state = pickle.loads(blob)
        rng_state = state.pop("_np_random")
        self.__dict__.update(state)
        self.np_random.bit_generator.state = rng_state


def make_env(**kwargs: Any) -> RackoGymEnv:
    """Entry point for ``gymnasium.make("racko/Racko-v1", ...)`` (and ``-v0``)."""
    return RackoGymEnv(**kwargs)
