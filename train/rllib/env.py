"""The PettingZoo env ``racko_v1`` as an RLlib ``MultiAgentEnv``, with the league set up per
episode.

RLlib maps agent ids to RLModules without telling the env which module plays which seat, and its
own self-play example picks seats with ``hash(episode.id_)``, not reproducible across processes.
Here the env draws, from its own seeded generator at every reset, the learner's seat and who sits
across (the learner itself, a frozen league snapshot, or a baseline bot played inside the env),
and writes it into the agent ids, ``"<module>@<role>"`` (role 0: the learner's seat). When the
episode ends every RLlib agent that played gets its final observation and its reward, so the
loser's reward reaches its module too (RLlib's ``PettingZooEnv`` does not promise that)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

import agents
from agents.features import GLOBAL_FEATURES, RACK_SIZE, SLOT_FEATURES, rack_features
from racko_env import racko_v1
from racko_env.actions import NUM_ACTIONS
from racko_env.observation import OBS_SIZE
from racko_env.rules import deck_size

MAIN = "main"
FEATURES_SIZE = RACK_SIZE * SLOT_FEATURES + GLOBAL_FEATURES


def league_module(slot: int) -> str:
    """The module id of league snapshot slot ``slot``."""
    return f"league_{slot}"


def agent_id(module: str, role: int) -> str:
    return f"{module}@{role}"


def module_of(agent: str) -> str:
    """The RLModule id an agent id names (the policy mapping function's whole job)."""
    return agent.split("@", 1)[0]


def policy_mapping_fn(agent: Any, episode: Any = None, **kwargs: Any) -> str:
    return module_of(str(agent))


def observation_space(features: bool = False) -> gym.spaces.Dict:
    """The env's observation dict, the mask as float32 (what RLlib's batching expects); with
    ``features``, also the structured network's features of the observation
    (``agents.features.rack_features`` flattened, as ``train.sb3.feature_cache`` appends them)."""
    spaces = {
        "observation": gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), dtype=np.float32),
        "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), dtype=np.float32),
    }
    if features:
        spaces["features"] = gym.spaces.Box(-np.inf, np.inf, (FEATURES_SIZE,), dtype=np.float32)
    return gym.spaces.Dict(spaces)


class RackoMultiAgentEnv(MultiAgentEnv):
    """``racko_v1`` for RLlib. ``config`` is ``RLlibConfig.env_config()`` (an ``EnvContext`` on
    RLlib's env runners, whose ``worker_index`` keeps the runners' generators apart)."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = config or {}
        self.num_players = int(config.get("num_players", 2))
        rules = dict(config.get("rules", {}))
        self.opponents = dict(config.get("opponents", {"self": 1.0}))
        self.league_size = int(config.get("league_size", 1))
        self.salt = int(config.get("salt", 0))
        self.worker_index = int(getattr(config, "worker_index", 0) or 0)
        self.features = bool(config.get("features", False))
        self.num_cards = deck_size(self.num_players)
        self.aec = racko_v1.env(
            num_players=self.num_players,
            reward=config.get("reward", "win"),
            episode=config.get("episode", "round"),
            **rules,
        )
        self.bots = {
            name: agents.load(name, self.num_players, **rules)
            for name in self.opponents
            if name not in ("self", "league")
        }
        self._kinds = list(self.opponents)
        weights = np.array([self.opponents[k] for k in self._kinds], dtype=np.float64)
        self._probs = weights / weights.sum()
        n = self.num_players
        ids = [agent_id(MAIN, r) for r in range(n)]
        ids += [agent_id(league_module(s), r) for s in range(self.league_size) for r in range(1, n)]
        self.possible_agents = ids
        self.agents = []
        space = observation_space(self.features)
        self.observation_spaces = dict.fromkeys(ids, space)
        self.action_spaces = dict.fromkeys(ids, gym.spaces.Discrete(NUM_ACTIONS))
        self._rng: np.random.Generator | None = None
        self.kind = ""
        self.deal_seed = 0
        self.seat_agent: list[str | None] = []

    def _new_setup(self) -> None:
        """Draw this episode's seating from the env's generator (reproducible, no hash())."""
        assert self._rng is not None
        n = self.num_players
        self.kind = str(self._kinds[int(self._rng.choice(len(self._kinds), p=self._probs))])
        learner_seat = int(self._rng.integers(n))
        slot = int(self._rng.integers(self.league_size))
        roles: list[str | None] = []
        for r in range(n):
            if r == 0 or self.kind == "self":
                roles.append(agent_id(MAIN, r))
            elif self.kind == "league":
                roles.append(agent_id(league_module(slot), r))
            else:
                roles.append(None)  # a baseline bot plays this seat inside the env
        self.seat_agent = [roles[(s - learner_seat) % n] for s in range(n)]

    def _obs(self, seat: int) -> dict[str, np.ndarray]:
        raw = self.aec.observe(self.aec.possible_agents[seat])
        out = {
            "observation": raw["observation"],
            "action_mask": raw["action_mask"].astype(np.float32),
        }
        if self.features:  # once per observation: the learner reads them in every epoch
            slots, glob = rack_features(raw["observation"][None], self.num_cards)
            out["features"] = np.concatenate([slots.reshape(-1), glob[0]])
        return out

    def _seat_on_turn(self) -> int:
        return self.aec.possible_agents.index(self.aec.agent_selection)

    def _done(self) -> bool:
        a = self.aec.agent_selection
        return bool(self.aec.terminations[a] or self.aec.truncations[a])

    def _play(self, action: int) -> None:
        """One decision in the AEC env; every seat's reward is credited to its RLlib agent."""
        self.aec.step(action)
        for seat, name in enumerate(self.aec.possible_agents):
            aid = self.seat_agent[seat]
            if aid is not None:
                self._pending[aid] += float(self.aec.rewards[name])

    def _advance(self) -> None:
        """Let the baseline bots move until an RLlib agent is on turn or the episode ends."""
        while not self._done():
            seat = self._seat_on_turn()
            if self.seat_agent[seat] is not None:
                return
            bot = self.bots[self.kind]
            raw = self.aec.observe(self.aec.agent_selection)
            self._play(int(bot.act(raw)))

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        if seed is not None or self._rng is None:
            base = 0 if seed is None else int(seed)
            self._rng = np.random.default_rng([base, self.worker_index, self.salt])
        while True:
            self._new_setup()
            self.deal_seed = int(self._rng.integers(2**62))
            self.aec.reset(seed=self.deal_seed)
            for bot in self.bots.values():
                bot.reset()
            self._pending = {aid: 0.0 for aid in self.seat_agent if aid is not None}
            self._acted: set[str] = set()
            self._advance()
            if not self._done():  # a bot went Rack-O before the learner's first move: re-deal
                break
        self.agents = sorted(self._pending)
        aid = self.seat_agent[self._seat_on_turn()]
        assert aid is not None
        return {aid: self._obs(self._seat_on_turn())}, {}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        seat = self._seat_on_turn()
        aid = self.seat_agent[seat]
        if aid not in action_dict:
            raise ValueError(f"expected an action for {aid}, got {sorted(action_dict)}")
        self._acted.add(aid)
        self._play(int(action_dict[aid]))
        self._advance()
        if self._done():
            truncated = bool(self.aec.truncations[self.aec.agent_selection])
            obs, rewards, infos = {}, {}, {}
            for s, a in enumerate(self.seat_agent):
                if a is not None and a in self._acted:
                    obs[a] = self._obs(s)
                    rewards[a] = self._pending[a]
                    self._pending[a] = 0.0
                    infos[a] = {"opponent": self.kind}
            return obs, rewards, {"__all__": not truncated}, {"__all__": truncated}, infos
        seat = self._seat_on_turn()
        nxt = self.seat_agent[seat]
        assert nxt is not None
        reward = self._pending[nxt]
        self._pending[nxt] = 0.0
        return {nxt: self._obs(seat)}, {nxt: reward}, {"__all__": False}, {"__all__": False}, {}
