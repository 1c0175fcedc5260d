"""``LearnerGames``: games on the batched engine seen from one learner seat each, the opponents
played inside: the one core of the training envs.

The adapters hand out its steps in their library's API: ``racko_env.gym_env.RackoGymEnv`` (one
game), ``racko_env.vector_env.RackoVectorEnv`` (Gymnasium's ``VectorEnv``, which RLlib's runners step)
and ``train.sb3.vec_env.RackoVecEnv`` (SB3). Three hooks let an adapter say what only it knows:
``load_policy`` (a spec to a batch policy; default ``resolve_batch``, through the ``racko.bots``
entry point), ``feature_fn`` (the features of all feature-reading snapshots in one call) and
``draw`` (seats and opponents of new episodes).

The learner's seat rotates across episodes (episode k of game i sits in seat
``(offset_i + k) % num_players``, offsets seeded); opponents are sampled per episode and seat from
a weighted pool and move for all games at once until the learner is on turn everywhere, so its
mask is never all False. Rewards are the learner seat's AEC rewards; those earned before its first
decision are paid with its first step. ``get_state()`` / ``set_state()`` hold everything that
changes as data (no pickle), so a checkpoint resumes the games exactly.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from racko_env.opponents import BotBatch, resolve
from racko_env.vector.chance import ChanceSource
from racko_env.vector.env import VectorRacko

OpponentSpec = Any  # a bot spec for agents.load, or a BatchPolicy object
PolicyLoader = Callable[..., Any]  # (spec, num_players, *, seed, **rules) -> a batch policy
Features = Callable[[np.ndarray, int], np.ndarray]  # (observations, num_cards) -> features
Draw = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]  # idx -> (learner seats, opponents)

# Opponent policy objects whose state a checkpoint can hold, by a stable name: each class has
# ``to_arrays() -> dict[str, np.ndarray]``, a classmethod ``from_arrays(arrays, name)`` and a
# ``name``. Add a class with ``register_state_policy`` (the name is data; no code is looked up
# from a file). The trainers register their snapshot classes (``train.sb3.vec_env``).
STATE_POLICIES: dict[str, type] = {}


def register_state_policy(kind: str, cls: type) -> None:
    """Let ``get_state``/``set_state`` save and rebuild opponents of class ``cls``."""
    if not (
        callable(getattr(cls, "to_arrays", None)) and callable(getattr(cls, "from_arrays", None))
    ):
        raise TypeError(f"{cls!r} needs to_arrays() and from_arrays(arrays, name)")
    STATE_POLICIES[kind] = cls


class LearnerGames:
    """``num_envs`` games of Rack-O seen from one learner seat each (see the module docstring).

    ``opponents``: a bot spec or ``BatchPolicy`` object, a list of them (``opponent_weights`` their
    weights) or a mapping spec -> weight. ``seed`` fixes deals, seats, opponent draws and random
    opponents; ``reward``, ``episode`` and the rules options are ``racko_v1``'s.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        opponents: OpponentSpec | Sequence[OpponentSpec] | Mapping[str, float] = "random",
        seed: int | None = None,
        reward: str = "win",
        episode: str = "round",
        opponent_weights: Sequence[float] | None = None,
        chance: ChanceSource | None = None,
        load_policy: PolicyLoader | None = None,
        feature_fn: Features | None = None,
        draw: Draw | None = None,
        **rules_options: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        self.render_mode = None
        self._loader = load_policy or resolve_batch
        self._features = feature_fn
        self._draw = draw or self._draw_seats
        self._rules = dict(rules_options)
        self.num_players = num_players
        self.reward_mode = reward
        self.episode = episode
        self._seed(seed)
        self.games = VectorRacko(
            num_envs,
            num_players,
            episode=episode,
            reward=reward,
            seed=None if chance is not None else int(self._seq.generate_state(1)[0]),
            chance=chance,
            **rules_options,
        )
        self.num_envs = int(num_envs)
        b, n = self.num_envs, num_players
        self._all = np.arange(b)
        self._obs = np.zeros((b, self.games.encoder.size), dtype=np.float32)
        self._learner = np.zeros(b, dtype=np.intp)
        self._episodes = np.zeros(b, dtype=np.int64)
        self._offset = self._rng.integers(0, n, size=b)
        self._opp = np.full((b, n), -1, dtype=np.intp)
        self._ep_return = np.zeros(b, dtype=np.float64)
        self._ep_len = np.zeros(b, dtype=np.int64)
        self._pending = np.zeros(b, dtype=np.float64)
        self._round = np.zeros(b, dtype=np.intp)  # the round each game's opponents were reset for
        self._policies: dict[int, Any] = {}
        self._sources: dict[int, tuple[str, int] | None] = {}
        self._next_key = 0
        self._actions: np.ndarray | None = None
        self.t_start = time.time()
        self.discarded_episodes = 0  # episodes that ended before the learner's first decision
        self.set_opponent_pool(*opponent_mix(opponents, opponent_weights))
        self._needs_reset = True

    # ----------------------------------------------------------------- seeding and opponents

    def _seed(self, seed: int | None) -> None:
        self._seq = np.random.SeedSequence(seed)
        self._rng = np.random.default_rng(self._seq.spawn(1)[0])

    def set_opponent_pool(
        self, policies: Sequence[OpponentSpec], weights: Sequence[float] | None = None
    ) -> None:
        """Replace the opponents sampled for new episodes (games in progress keep theirs).

        ``policies``: specs (``_load_policy``) or ``BatchPolicy`` objects; ``weights``:
        non-negative sampling weights (default: equal), one per policy.
        """
        policies = list(policies)
        w = pool_weights(len(policies), weights)
        keys = []
        for spec in policies:
            child = int(self._seq.spawn(1)[0].generate_state(1)[0])
            policy = self._load_policy(spec, child)
            self._policies[self._next_key] = policy
            # how to rebuild this policy from data: a spec string and its seed, or the object
            self._sources[self._next_key] = (spec, child) if isinstance(spec, str) else None
            keys.append(self._next_key)
            self._next_key += 1
        self._pool = np.array(keys, dtype=np.intp)
        self._pool_p = w / w.sum()
        self._pool_cdf = np.cumsum(self._pool_p)
        self._forget_unused()

    def _load_policy(self, spec: OpponentSpec, seed: int) -> Any:
        return self._loader(spec, self.num_players, seed=seed, **self._rules)

    @property
    def opponent_pool(self) -> list[Any]:
        """The batch policies new episodes sample from (in pool order)."""
        return [self._policies[int(k)] for k in self._pool]

    def _forget_unused(self) -> None:
        """Drop policies neither in the pool nor still playing a game (no growth over a run)."""
        if len(self._policies) == len(self._pool):
            return
        keep = set(self._pool.tolist()) | set(np.unique(self._opp).tolist())
        for key in [k for k in self._policies if k not in keep]:
            del self._policies[key]
            self._sources.pop(key, None)

    # ----------------------------------------------------------------- episodes

    def _start(self, idx: np.ndarray) -> None:
        """New episodes in games ``idx``: deal, seat the learner, draw opponents, play to its turn."""
        while idx.size:
            self._deal(idx)
            self._round[idx] = -1  # their opponents are reset before they first move
            self._ep_return[idx] = 0.0
            self._ep_len[idx] = 0
            self._pending[idx] = 0.0
            rewards, done, _ = self._advance(idx)
            self._pending[idx] = rewards
            # An episode that ends before the learner's first decision is dealt again.
            idx = idx[done]
            self.discarded_episodes += idx.size
        self._forget_unused()

    def _deal(self, idx: np.ndarray) -> None:
        """Deal new episodes in games ``idx``, seat the learner, draw the opponents per seat."""
        learner, opp = self._draw(idx)
        self._learner[idx] = learner
        self._opp[idx] = opp
        self._episodes[idx] += 1
        self.games.reset(idx)

    def _draw_seats(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The learner's seats (rotated per game) and the opponents' policy keys (-1 at the
        learner's seat) of new episodes in games ``idx``, from the core's generator."""
        learner = (self._offset[idx] + self._episodes[idx]) % self.num_players
        u = self._rng.random((idx.size, self.num_players))
        draw = np.minimum(np.searchsorted(self._pool_cdf, u, side="right"), len(self._pool) - 1)
        opp = self._pool[draw]
        opp[np.arange(idx.size), learner] = -1
        return learner, opp

    def _new_rounds(self, g: np.ndarray) -> None:
        """Per-game bots (``BotBatch``) hear ``reset()`` when a round of a game they play begins,
        before they move in it (the ``Bot`` contract; batch policies keep no round state)."""
        started = g[self.games.game.round_number[g] != self._round[g]]
        if not started.size:
            return
        self._round[started] = self.games.game.round_number[started]
        seen: dict[int, Any] = {}
        for key in self._opp[started].ravel().tolist():
            if key >= 0:
                seen.setdefault(id(self._policies[key]), self._policies[key])
        for policy in seen.values():
            if isinstance(policy, BotBatch):
                policy.reset()

    def _act(self, g: np.ndarray, seat: np.ndarray, key: np.ndarray) -> np.ndarray:
        """The opponents' moves in games ``g`` (seat ``seat[i]`` on turn, played by policy
        ``key[i]``): one ``act_batch`` call per policy, and with ``feature_fn`` one ``act_group``
        call per class of the feature-reading policies."""
        actions = np.empty(g.size, dtype=np.intp)
        keys = np.unique(key).tolist()
        grouped = []
        if self._features is not None:
            grouped = [k for k in keys if getattr(self._policies[k], "takes_features", False)]
        if grouped:  # all games where a feature-reading policy sits: one call
            sel = np.isin(key, grouped)
            actions[sel] = self._act_grouped(g[sel], seat[sel], key[sel], grouped)
            keys = [k for k in keys if k not in grouped]
        for k in keys:
            sel = key == k
            rows, seats = g[sel], seat[sel]
            obs = self.games.observe(rows, seats)
            masks = self.games.action_masks(rows, seats)
            policy = self._policies[k]
            try:
                actions[sel] = policy.act_batch(obs, masks)
            except ValueError as err:
                name = getattr(policy, "name", type(policy).__name__)
                raise ValueError(f"opponent {name} (player_{int(seats[0])}) {err}") from None
        return actions

    def _act_grouped(
        self, rows: np.ndarray, seats: np.ndarray, key: np.ndarray, grouped: list[int]
    ) -> np.ndarray:
        """Moves of feature-reading policies (``takes_features``: ``num_cards``, a static
        ``act_group(policies, owner, features, masks)``): the features of all their games come
        from one ``feature_fn`` call and go to one ``act_group`` call per policy class."""
        obs = self.games.observe(rows, seats)
        masks = self.games.action_masks(rows, seats)
        policies = [self._policies[k] for k in grouped]
        feats = self._features(obs, policies[0].num_cards)
        owner = np.searchsorted(np.asarray(grouped), key)
        actions = np.empty(rows.size, dtype=np.intp)
        for cls in {type(p) for p in policies}:
            mine = np.array([type(p) is cls for p in policies])
            sel = mine[owner]
            index = np.cumsum(mine) - 1  # owner -> position among this class's policies
            members = [p for p, m in zip(policies, mine, strict=True) if m]
            actions[sel] = cls.act_group(members, index[owner[sel]], feats[sel], masks[sel])
        return actions

    def _advance(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Opponents move in games ``idx`` until the learner is on turn or the episode ends.

        Returns the learner's reward collected meanwhile, and per game done and truncated flags.
        """
        games, eng = self.games, self.games.game
        reward = np.zeros(idx.size, dtype=np.float64)
        done = np.zeros(idx.size, dtype=bool)
        truncated = np.zeros(idx.size, dtype=bool)
        self._new_rounds(idx)
        active = np.flatnonzero(eng.current[idx] != self._learner[idx])
        while active.size:
            g = idx[active]
            seat = eng.current[g]
            result = games.step(self._act(g, seat, self._opp[g, seat]), g)
            reward[active] += result.rewards[np.arange(g.size), self._learner[g]]
            ended = result.done
            done[active[ended]] = True
            truncated[active[ended]] = result.truncated[ended]
            self._new_rounds(g[~ended])
            active = active[~ended & (eng.current[g] != self._learner[g])]
        return reward, done, truncated

    def _play(self, actions: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, ...]:
        """The learner's moves in games ``idx`` (ValueError for an illegal one), then the
        opponents' until it is on turn again: its rewards (those held in ``_pending`` included),
        terminated and truncated, per game."""
        result = self.games.step(actions, idx)
        reward = result.rewards[np.arange(idx.size), self._learner[idx]] + self._pending[idx]
        self._pending[idx] = 0.0
        done, truncated = result.done.copy(), result.truncated.copy()
        cont = np.flatnonzero(~done)
        more, done[cont], truncated[cont] = self._advance(idx[cont])
        reward[cont] += more
        self._ep_return[idx] += reward
        self._ep_len[idx] += 1
        return reward, done & ~truncated, truncated

    def _reseed(self, seed: int) -> None:
        """``seed()`` then ``reset()``: the same run as constructing with that seed."""
        pool = [self._policies[int(k)] for k in self._pool]
        weights = self._pool_p.copy()
        self._seed(seed)
        eng_seed = int(self._seq.generate_state(1)[0])
        self.games.game.chance.rng = np.random.default_rng(eng_seed)
        self._offset = self._rng.integers(0, self.num_players, size=self.num_envs)
        self._episodes[:] = 0
        for policy in pool:  # re-seed random opponents from the new seed sequence
            child = int(self._seq.spawn(1)[0].generate_state(1)[0])
            if callable(getattr(policy, "seed", None)):
                policy.seed(child)
        self._pool_p = weights

    def action_masks(self) -> np.ndarray:
        """bool [num_envs, 14]: the learner's legal actions in every game (never all False)."""
        return self.games.game.legal[self.games.game.phase]

    _ARRAYS = (
        "_learner",
        "_episodes",
        "_offset",
        "_opp",
        "_ep_return",
        "_ep_len",
        "_pending",
        "_round",
        "_pool",
        "_pool_p",
        "_pool_cdf",
    )

    def get_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Everything that changes while playing, as data: a JSON-able dict and numpy arrays.

        Opponents are stored as the spec string they were built from (rebuilt with the same seed)
        or, for ``SnapshotPolicy`` objects, as their weights; a random generator inside a policy
        (``policy.rng``) is stored too. Other policy objects cannot be saved (ValueError).
        """
        arrays = {f"env/{k}": np.array(self.__dict__[k]) for k in self._ARRAYS}  # copies
        for name, value in self.games.game.__dict__.items():
            if isinstance(value, np.ndarray) and not name.startswith("_"):
                arrays[f"engine/{name}"] = value.copy()
        arrays["games/episode_over"] = self.games.episode_over.copy()
        policies = []
        for key, policy in self._policies.items():
            entry: dict[str, Any] = {"key": key}
            source = self._sources.get(key)
            if source is not None:
                entry["spec"], entry["seed"] = source
            elif (kind := state_kind(policy)) is not None:
                entry["type"], entry["snapshot"] = kind, str(policy.name)
                for k, v in policy.to_arrays().items():
                    arrays[f"policy{key}/{k}"] = v
            else:
                raise ValueError(
                    f"cannot save the state of opponent {policy!r}: give opponents as specs or "
                    f"objects of a class in STATE_POLICIES ({sorted(STATE_POLICIES)}) to checkpoint "
                    f"a {type(self).__name__}"
                )
            rng = getattr(policy, "rng", None)
            if isinstance(rng, np.random.Generator | random.Random):
                entry["rng"] = _rng_state(rng)
            policies.append(entry)
        meta = {
            "num_envs": self.num_envs,
            "num_players": self.num_players,
            "next_key": self._next_key,
            "needs_reset": self._needs_reset,
            "discarded_episodes": self.discarded_episodes,
            "seq": _seed_sequence_state(self._seq),
            "rng": self._rng.bit_generator.state,
            "chance_rng": self.games.game.chance.get_state(),
            "policies": policies,
        }
        return meta, arrays

    def set_state(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        """Restore a ``get_state()`` pair into an env built with the same arguments."""
        if (meta.get("num_envs"), meta.get("num_players")) != (self.num_envs, self.num_players):
            raise ValueError(
                f"state is for {meta.get('num_envs')} games of {meta.get('num_players')} players, "
                f"this env has {self.num_envs} games of {self.num_players}"
            )
        game = self.games.game
        for name, value in arrays.items():
            group, _, attr = name.partition("/")
            if group == "engine":
                old = game.__dict__.get(attr)
                if not isinstance(old, np.ndarray) or old.shape != value.shape:
                    raise ValueError(f"env state: engine array {attr!r} does not fit this env")
                game.__dict__[attr] = value.astype(old.dtype, copy=True)
            elif group == "env":
                if attr not in self._ARRAYS:
                    raise ValueError(f"env state: unknown array {attr!r}")
                self.__dict__[attr] = value.copy()
        self.games.episode_over = arrays["games/episode_over"].astype(bool, copy=True)
        policies: dict[int, Any] = {}
        sources: dict[int, tuple[str, int] | None] = {}
        for entry in meta["policies"]:
            key = int(entry["key"])
            if "spec" in entry:
                spec, seed = str(entry["spec"]), int(entry["seed"])
                policy = self._load_policy(spec, seed)
                sources[key] = (spec, seed)
            else:
                prefix = f"policy{key}/"
                own = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
                cls = STATE_POLICIES.get(str(entry.get("type")))
                if cls is None:
                    raise ValueError(f"env state: unknown opponent type {entry.get('type')!r}")
                policy = cls.from_arrays(own, str(entry["snapshot"]))
                sources[key] = None
            if "rng" in entry:
                _set_rng_state(policy.rng, entry["rng"])
            policies[key] = policy
        self._policies, self._sources = policies, sources
        self._next_key = int(meta["next_key"])
        self._needs_reset = bool(meta["needs_reset"])
        self.discarded_episodes = int(meta["discarded_episodes"])
        self._seq = _seed_sequence_from(meta["seq"])
        self._rng = np.random.default_rng()
        self._rng.bit_generator.state = meta["rng"]
        game.chance.set_state(meta["chance_rng"])

    def close(self) -> None:
        # also on an object whose __init__ failed (Gymnasium's VectorEnv closes in __del__)
        getattr(self, "_policies", {}).clear()


def resolve_batch(
    spec: OpponentSpec, num_players: int, *, seed: int | None = None, **rules_options: Any
) -> Any:
    """A batch policy from a spec, without the layer above: a ``BatchPolicy`` as is, a name through
    the ``racko.bots`` entry point (``racko_env.opponents``), a per-game bot (``act(obs_dict)``)
    row by row (``BotBatch``)."""
    if callable(getattr(spec, "act_batch", None)):
        return spec
    if isinstance(spec, str):
        spec = resolve(spec, num_players=num_players, **rules_options)
        if callable(getattr(spec, "seed", None)):
            spec.seed(seed)
        if callable(getattr(spec, "act_batch", None)):
            return spec
    return BotBatch(spec)


def opponent_mix(
    opponents: OpponentSpec | Sequence[OpponentSpec] | Mapping[str, float],
    weights: Sequence[float] | None = None,
) -> tuple[list[Any], list[float]]:
    """(specs, weights) of an ``opponents`` argument: one spec, a list of specs with ``weights``
    (default: equal) or a mapping spec -> weight."""
    if isinstance(opponents, Mapping):
        if weights is not None:
            raise ValueError("give weights either in the opponents mapping or as opponent_weights")
        return list(opponents), [float(w) for w in opponents.values()]
    if isinstance(opponents, str) or not isinstance(opponents, Sequence):
        opponents = [opponents]
    specs = list(opponents)
    return specs, pool_weights(len(specs), weights).tolist()


def pool_weights(count: int, weights: Sequence[float] | None) -> np.ndarray:
    """The sampling weights of ``count`` opponents (default: equal), checked; one-line errors."""
    if count == 0:
        raise ValueError(
            "opponents must be a non-empty list of bot specs: the pool needs at least one policy"
        )
    if weights is None:
        return np.ones(count)
    w = np.asarray(list(weights), dtype=np.float64)
    if w.shape != (count,):
        raise ValueError(
            f"need one weight per opponent policy: opponent_weights has {w.size} entries for "
            f"{count} opponents"
        )
    if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"opponent_weights must be >= 0 with a positive sum, got {w.tolist()}")
    return w


def state_kind(policy: Any) -> str | None:
    """The ``STATE_POLICIES`` name of ``policy``'s exact class (None where it is not registered)."""
    for kind, cls in STATE_POLICIES.items():
        if type(policy) is cls:
            return kind
    return None


def _rng_state(rng: np.random.Generator | random.Random) -> Any:
    """A generator's state as JSON-able data (numpy's or the standard library's)."""
    if isinstance(rng, random.Random):
        version, internal, gauss = rng.getstate()
        return {"random": [version, list(internal), gauss]}
    return rng.bit_generator.state


def _set_rng_state(rng: np.random.Generator | random.Random, state: Any) -> None:
    if isinstance(rng, random.Random):
        version, internal, gauss = state["random"]
        rng.setstate((version, tuple(internal), gauss))
    else:
        rng.bit_generator.state = state


def _seed_sequence_state(seq: np.random.SeedSequence) -> dict[str, Any]:
    entropy = seq.entropy
    return {
        "entropy": [int(e) for e in entropy] if isinstance(entropy, list | tuple) else int(entropy),
        "spawn_key": [int(k) for k in seq.spawn_key],
        "pool_size": int(seq.pool_size),
        "n_children_spawned": int(seq.n_children_spawned),
    }


def _seed_sequence_from(state: dict[str, Any]) -> np.random.SeedSequence:
    return np.random.SeedSequence(
        state["entropy"],
        spawn_key=tuple(state["spawn_key"]),
        pool_size=int(state["pool_size"]),
        n_children_spawned=int(state["n_children_spawned"]),
    )
