"""The multi-agent env of the RLlib trainer (train/rllib/env.py): rewards reach every seat's
module, bots play inside, seating is seeded."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the cluster extra (ray[rllib]) is not installed")
import agents  # noqa: E402
from racko_env import racko_v1  # noqa: E402
from train.rllib.env import RackoMultiAgentEnv, module_of, policy_mapping_fn  # noqa: E402


def _heuristic_action(bot: agents.Bot, obs: dict) -> int:
    return bot.act({"observation": obs["observation"], "action_mask": obs["action_mask"] > 0})


@pytest.mark.parametrize("kind", ["self", "league"])
def test_every_seat_reward_reaches_its_module(kind: str) -> None:
    """A scripted episode through the wrapper, recorded the way RLlib's env runner records it:
    each module's return is the reward the AEC env gave the seat it played, the loser's -1 too."""
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

    env = RackoMultiAgentEnv({"num_players": 2, "opponents": {kind: 1.0}, "league_size": 3})
    bot = agents.load("heuristic", 2)
    obs, infos = env.reset(seed=5)
    episode = MultiAgentEpisode(agent_to_module_mapping_fn=policy_mapping_fn)
    episode.add_env_reset(observations=obs, infos=infos)
    actions_taken, seats = [], list(env.seat_agent)
    done = False
    while not done:
        (aid,) = obs
        action = _heuristic_action(bot, obs[aid])
        actions_taken.append(action)
        obs, rew, term, trunc, infos = env.step({aid: action})
        episode.add_env_step(obs, {aid: action}, rew, infos, terminateds=term, truncateds=trunc)
        done = term["__all__"] or trunc["__all__"]
    # replay the same deal and moves in the bare PettingZoo env: its rewards per seat
    aec = racko_v1.env(num_players=2)
    aec.reset(seed=env.deal_seed)
    final = {a: 0.0 for a in aec.possible_agents}
    for action in actions_taken:
        aec.step(action)
        for a in aec.possible_agents:
            final[a] += aec.rewards[a]
    assert sorted(final.values()) == [-1.0, 1.0]
    modules = set()
    for seat, aid in enumerate(seats):
        module = episode.module_for(aid)
        modules.add(module)
        assert module == module_of(aid)
        assert episode.agent_episodes[aid].get_return() == final[f"player_{seat}"]
    assert modules == (
        {"main"} if kind == "self" else {"main", module_of(seats[1 - seats.index("main@0")])}
    )


def test_bot_seats_play_inside_the_env() -> None:
    env = RackoMultiAgentEnv({"num_players": 3, "opponents": {"heuristic": 1.0}})
    obs, _ = env.reset(seed=1)
    steps, done = 0, False
    while not done:
        assert list(obs) == ["main@0"]  # only the learner is ever asked
        mask = obs["main@0"]["action_mask"]
        obs, rew, term, trunc, _ = env.step({"main@0": int(np.flatnonzero(mask)[0])})
        steps += 1
        done = term["__all__"] or trunc["__all__"]
    assert set(rew) == {"main@0"}  # the final reward, to the learner only
    assert rew["main@0"] in (1.0, -0.5, 0.25, 0.0)  # 3 players: win, loss, two-way tie, all tie
    assert env.seat_agent.count(None) == 2


def test_seating_is_reproducible() -> None:
    """Same seed and worker: the same seatings; another worker index: another sequence."""

    def seatings(worker: int) -> list[tuple]:
        cfg = type("Ctx", (dict,), {"worker_index": worker})(
            {"num_players": 3, "opponents": {"self": 1, "league": 1, "expert": 1}, "league_size": 4}
        )
        env = RackoMultiAgentEnv(cfg)
        out = []
        for i in range(12):
            env.reset(seed=7 if i == 0 else None)
            out.append((env.kind, tuple(env.seat_agent), env.aec.unwrapped.rack("player_0")))
        return out

    assert seatings(1) == seatings(1)
    assert seatings(1) != seatings(2)
    kinds = {s[0] for s in seatings(1)}
    assert len(kinds) > 1


def test_env_hands_out_the_kernel_features() -> None:
    from agents.features import rack_features

    env = RackoMultiAgentEnv({"num_players": 2, "opponents": {"heuristic": 1.0}, "features": True})
    obs, _ = env.reset(seed=3)
    for _ in range(5):
        (aid,) = obs
        o = obs[aid]
        slots, glob = rack_features(o["observation"][None], 40)
        np.testing.assert_array_equal(o["features"], np.concatenate([slots.reshape(-1), glob[0]]))
        assert env.observation_spaces[aid].contains(o)
        obs, *_ = env.step({aid: int(np.flatnonzero(o["action_mask"])[0])})
        if not obs:
            break
