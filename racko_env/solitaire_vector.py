"""Tabular solitaire as a Gymnasium VectorEnv: many games side by side on the state tables.

Twin of ``racko_env.solitaire_env.RackoSolitaireEnv`` with ``tabular=True`` (the reference:
the rules engine): the same observations, actions, masks, rewards and episode ends, played on the
transition tables of ``racko_env.solitaire_space`` in numpy, thousands of games per call, which is
what tabular learners need (``tests/env/test_solitaire_env.py`` keeps the twins equal)::

    envs = gymnasium.make_vec("racko/RackoSolitaire-v0", num_envs=1024,
                              vectorization_mode="vector_entry_point",
                              rack_size=3, deck_size=8, tabular=True)

- ``observations``: int64 tabular states; ``infos["action_mask"]``: int8 (num_envs, 14).
- rewards -1 on the steps that end a turn; ``terminations`` at Rack-O; ``truncations`` after
  ``turn_limit`` turns.
- Autoreset in the same step (``AutoresetMode.SAME_STEP``): a game that ended is dealt again at
  once; its last observation is in ``infos["final_obs"]`` where ``infos["_final_obs"]`` is set.
- Actions must be legal (the masks): an illegal one raises ``ValueError`` naming it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from racko_env.actions import NUM_ACTIONS
from racko_env.config import DEFAULT_TURN_LIMIT
from racko_env.solitaire_space import SolitaireSpace, check_size, space


class SolitaireVectorEnv(VectorEnv):
    """``num_envs`` tabular solitaire games (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        rack_size: int = 10,
        deck_size: int = 0,
        tabular: bool = False,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        **unused: Any,
    ) -> None:
        if not tabular:
            raise ValueError(
                "the vector form of racko/RackoSolitaire-v0 plays tabular=True only; "
                "gymnasium.make_vec(..., vectorization_mode='sync') plays the other"
            )
        if unused:
            raise ValueError(f"unknown option(s) {sorted(unused)} for the solitaire vector env")
        deck_size = deck_size or 40
        check_size(rack_size, deck_size)
        if isinstance(turn_limit, bool) or not isinstance(turn_limit, int) or turn_limit < 1:
            raise ValueError(f"turn_limit must be a positive int, got {turn_limit!r}")
        self.space: SolitaireSpace = space(rack_size, deck_size)
        self.num_envs, self.turn_limit = int(num_envs), turn_limit
        self.single_observation_space = spaces.Discrete(self.space.num_observations)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = spaces.MultiDiscrete(
            np.full(self.num_envs, self.space.num_observations)
        )
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, NUM_ACTIONS))
        self._masks = self.space.legal.astype(np.int8)
        self._obs = np.zeros(self.num_envs, dtype=np.int64)
        self._turns = np.zeros(self.num_envs, dtype=np.int64)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._obs = self._deal(self.num_envs)
        self._turns[:] = 0
        return self._obs.copy(), {"action_mask": self.action_masks()}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)
        phase = self._obs // self.space.num_states
        ok = (actions >= 0) & (actions < NUM_ACTIONS)
        ok[ok] = self.space.legal[phase[ok], actions[ok]]
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise ValueError(
                f"illegal action {int(actions[i])} in game {i} at {self.space.decode(self._obs[i])}"
            )
        nxt, ended, racko = self.space.step_batch(self._obs, actions, self.np_random)
        self._turns += ended
        truncated = ~racko & (self._turns >= self.turn_limit)
        done = racko | truncated
        infos: dict[str, Any] = {}
        if done.any():
            infos["final_obs"], infos["_final_obs"] = nxt.copy(), done
            nxt[done] = self._deal(int(done.sum()))
            self._turns[done] = 0
        self._obs = nxt
        infos["action_mask"] = self.action_masks()
        return nxt.copy(), np.where(ended, -1.0, 0.0), racko, truncated, infos

    def action_masks(self) -> np.ndarray:
        """The legal actions of every game now (int8, num_envs x 14)."""
        return self._masks[self._obs // self.space.num_states]

    def _deal(self, count: int) -> np.ndarray:
        rows = self.np_random.integers(self.space.num_rows, size=count)
        return self.space.row_state(rows, self.space.masks - 1)
