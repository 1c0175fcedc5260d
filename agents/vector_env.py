"""``RackoVectorEnv``: the batched engine with its opponents inside, as a Gymnasium ``VectorEnv``.

``gymnasium.make_vec("racko/Racko-v1", num_envs=N, vectorization_mode="vector_entry_point",
opponents={"heuristic": 0.5, "expert": 0.3, "self": 0.2}, seed=0, features=True)`` returns it
(``racko_env`` registers it by a string, so it never imports ``agents``). Each game is one learner
seat's view (the core ``racko_env.learner_games.LearnerGames``, shared with SB3's
``train.sb3.vec_env.RackoVecEnv``, with this layer's vectorized bots); the other seats are played
inside the env by opponents drawn per episode and seat from the weighted mix. ``"self"`` is the
weight of the trainer's frozen snapshots, which it hands over with ``set_self_play``.

``single_observation_space`` is the observation of layout ``observation_version``, with
``features=True`` followed by the structured policy's features (``agents.features``, computed once
per observation); ``info["action_mask"]`` and ``action_masks()`` give the masks, never all False
but on an episode's last observation under ``NEXT_STEP``. ``autoreset_mode``: ``NEXT_STEP``
(Gymnasium's default, what RLlib's runners expect) or ``SAME_STEP`` (the last observation in
``info["final_obs"]``: the stream of the SB3 ``RackoVecEnv``, kept equal by
tests/agents/test_vector_env.py). Illegal actions raise ``ValueError``. The same ``seed`` gives the
same stream for the same actions. More: docs/environment/vector.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from agents.batched import group_features, load_batch
from racko_env.actions import NUM_ACTIONS
from racko_env.learner_games import LearnerGames, OpponentSpec, opponent_mix
from racko_env.observation import OBS_VERSION, layout_for, obs_size

SELF = "self"  # the opponents key of the trainer's snapshots (as in the trainers' configs)


class RackoVectorEnv(LearnerGames, VectorEnv):
    """``num_envs`` Rack-O games, one learner seat each, opponents inside (see the module docstring).

    ``opponents``: a spec, a list of specs (``opponent_weights`` their weights, default equal) or a
    mapping spec -> weight, where the spec ``"self"`` is the share of ``set_self_play`` snapshots.
    ``features``: append the structured policy's features to each observation.
    ``reward``, ``episode`` and the rules options (``turn_limit=...``) are those of ``racko_v1``.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        num_players: int = 2,
        opponents: OpponentSpec | Sequence[OpponentSpec] | Mapping[str, float] = "random",
        seed: int | None = None,
        reward: str = "win",
        episode: str = "round",
        opponent_weights: Sequence[float] | None = None,
        features: bool = False,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: None = None,
        observation_version: int = OBS_VERSION,
        **rules_options: Any,
    ) -> None:
        self.observation_version = observation_version
        self._width = obs_size(observation_version)  # ValueError naming an unknown version
        if render_mode is not None:
            raise ValueError(f"RackoVectorEnv does not render (render_mode={render_mode!r})")
        mode = AutoresetMode(autoreset_mode)
        if mode is AutoresetMode.DISABLED:
            raise ValueError("autoreset_mode must be NextStep or SameStep")
        specs, weights = opponent_mix(opponents, opponent_weights)
        self._mix = [(s, w) for s, w in zip(specs, weights, strict=True) if s != SELF]
        self._self_weight = float(sum(w for s, w in zip(specs, weights, strict=True) if s == SELF))
        if not self._mix or sum(w for _, w in self._mix) <= 0:
            raise ValueError(
                "opponents: give a bot a positive weight ('self' snapshots come from the trainer, "
                "later)"
            )
        super().__init__(
            num_envs,
            num_players,
            [s for s, _ in self._mix],
            seed,
            reward,
            episode,
            [w for _, w in self._mix],
            load_policy=load_batch,
            feature_fn=group_features,
            **rules_options,
        )
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.features = bool(features)
        config = self.games.config
        self.num_cards = config.num_cards
        self._width = layout_for(config).sizes[observation_version]  # the game's own layout
        width = self._width
        self._layout = layout_for(config)
        if self.features:  # imported here: the kernel loads numba, which plain envs do not need
            from agents.features import feature_shape

            width += feature_shape(self._layout).size  # the features of the game's own layout
        low = 0.0 if not self.features else -np.inf
        high = 1.0 if not self.features else np.inf
        self.single_observation_space = spaces.Box(low, high, (width,), dtype=np.float32)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = spaces.Box(low, high, (self.num_envs, width), dtype=np.float32)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, NUM_ACTIONS))
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._ones = np.ones(self.num_envs, dtype=bool)

    # ----------------------------------------------------------------- self-play

    def set_self_play(self, snapshots: Sequence[Any], latest_weight: float | None = None) -> None:
        """Seat the trainer's frozen snapshots (``BatchPolicy`` objects) in new episodes.

        The ``"self"`` weight of the mix is shared out over them: equally, or with
        ``latest_weight`` of it to the last (newest) one and the rest equally over the others (as
        the SB3 trainer's ``selfplay.latest_weight``). Games in progress keep their opponents.
        """
        snapshots = list(snapshots)
        specs = [s for s, _ in self._mix]
        weights = [w for _, w in self._mix]
        if snapshots and self._self_weight > 0:
            w = self._self_weight
            if latest_weight is None or len(snapshots) == 1:
                shares = [w / len(snapshots)] * len(snapshots)
            else:
                rest = w * (1.0 - latest_weight) / (len(snapshots) - 1)
                shares = [rest] * (len(snapshots) - 1) + [w * latest_weight]
            specs += snapshots
            weights += shares
        self.set_opponent_pool(specs, weights)

    # ----------------------------------------------------------------- Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal new episodes in every game; ``seed`` (an int) restarts the generators."""
        if seed is not None:
            if isinstance(seed, Sequence) and not isinstance(seed, str):
                seed = seed[0]  # one generator serves all games: the first seed fixes them
            if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
                raise ValueError(f"seed must be an int, got {seed!r}")
            self._reseed(int(seed))
        self._start(self._all)
        self._needs_reset = False
        self._autoreset[:] = False
        obs = self.games.observe(self._all, self._learner, out=self._obs)
        return self._out(obs), self._info()

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions).reshape(self.num_envs)
        b = self.num_envs
        rewards = np.zeros(b, dtype=np.float64)
        terminated = np.zeros(b, dtype=bool)
        truncated = np.zeros(b, dtype=bool)
        restart = np.flatnonzero(self._autoreset)
        live = np.flatnonzero(~self._autoreset)
        if restart.size:  # NEXT_STEP: the games that ended last step start again, action ignored
            self._start(restart)
        if live.size:  # ValueError for an illegal action
            rewards[live], terminated[live], truncated[live] = self._play(actions[live], live)
        obs = self.games.observe(self._all, self._learner, out=self._obs)
        ended = np.flatnonzero(terminated | truncated)
        self._autoreset[:] = False
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            self._autoreset[ended] = True
            return self._out(obs), rewards, terminated, truncated, self._info()
        final_obs = np.full(b, None, dtype=object)
        final_masks = np.zeros((b, NUM_ACTIONS), dtype=bool)
        if ended.size:
            last = self._out(obs[ended])
            for row, i in enumerate(ended.tolist()):
                final_obs[i] = last[row]
            final_masks[ended] = self.action_masks()[ended]
            self._start(ended)  # SAME_STEP: the next episode's first observation now
            obs[ended] = self.games.observe(ended, self._learner[ended])
        info = self._info()
        if ended.size:
            has = np.zeros(b, dtype=bool)
            has[ended] = True
            info.update(
                final_obs=final_obs,
                _final_obs=has,
                final_info={"action_mask": final_masks, "_action_mask": has},
                _final_info=has,
            )
        return self._out(obs), rewards, terminated, truncated, info

    def _out(self, obs: np.ndarray) -> np.ndarray:
        """The observations handed out: a copy in this env's layout version, with the features
        (of the whole current-layout observation) appended when asked for."""
        shown = np.array(obs[:, : self._width], dtype=np.float32)
        if not self.features:
            return shown
        lay = self._layout
        features = group_features(np.asarray(obs[:, : lay.size]), self.num_cards, lay)
        return np.concatenate([shown, features], axis=1)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks().copy(), "_action_mask": self._ones.copy()}

    def close_extras(self, **kwargs: Any) -> None:
        LearnerGames.close(self)

    def close(self, **kwargs: Any) -> None:
        VectorEnv.close(self, **kwargs)
