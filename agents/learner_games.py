"""``LearnerGames``: the learner-seat core (``racko_env.learner_games``) with this layer's bots.

The core resolves a bot name into a per-game bot played row by row; here ``"random"``,
``"heuristic"`` and ``"expert"`` become their vectorized twins (``agents.batched.load_batch``), and
the feature-reading snapshots (``takes_features``) of all games where they sit get their features
from one call of the compiled kernel (``agents.features``). The Gymnasium ``VectorEnv``
(``agents.vector_env.RackoVectorEnv``) and the stable-baselines3 ``VecEnv``
(``train.sb3.vec_env.RackoVecEnv``) are built on this class.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.batched import load_batch
from racko_env import learner_games
from racko_env.learner_games import OpponentSpec


class LearnerGames(learner_games.LearnerGames):
    """The core with vectorized bots and grouped snapshots (see the module docstring)."""

    def _load_policy(self, spec: OpponentSpec, seed: int) -> Any:
        return load_batch(spec, self.num_players, seed=seed, **self._rules)

    def _act(self, g: np.ndarray, seat: np.ndarray, key: np.ndarray) -> np.ndarray:
        keys = np.unique(key).tolist()
        grouped = [k for k in keys if getattr(self._policies[k], "takes_features", False)]
        if not grouped:
            return super()._act(g, seat, key)
        actions = np.empty(g.size, dtype=np.intp)
        sel = np.isin(key, grouped)  # all games where a feature-reading policy sits: one call
        actions[sel] = self._act_grouped(g[sel], seat[sel], key[sel], grouped)
        if not sel.all():
            actions[~sel] = super()._act(g[~sel], seat[~sel], key[~sel])
        return actions

    def _act_grouped(
        self, rows: np.ndarray, seats: np.ndarray, key: np.ndarray, grouped: list[int]
    ) -> np.ndarray:
        """Moves of feature-reading policies (``takes_features``: ``num_cards``, a static
        ``act_group(policies, owner, features, masks)``): the features of all their games come
        from one kernel call and go to one ``act_group`` call per policy class."""
        from agents.features import flat_features, rack_features

        obs = self.games.observe(rows, seats)
        masks = self.games.action_masks(rows, seats)
        policies = [self._policies[k] for k in grouped]
        feats = flat_features(*rack_features(obs, policies[0].num_cards))
        owner = np.searchsorted(np.asarray(grouped), key)
        actions = np.empty(rows.size, dtype=np.intp)
        for cls in {type(p) for p in policies}:
            mine = np.array([type(p) is cls for p in policies])
            sel = mine[owner]
            index = np.cumsum(mine) - 1  # owner -> position among this class's policies
            members = [p for p, m in zip(policies, mine, strict=True) if m]
            actions[sel] = cls.act_group(members, index[owner[sel]], feats[sel], masks[sel])
        return actions
