"""Monte Carlo control on solitaire Rack-O, in one file: a reference to read, checked exactly.

    python train/tabular_mc.py --rack-size 3 --deck-size 8

The env is ``racko/RackoSolitaire-v0`` in its tabular form: a ``Discrete`` observation numbers
every state the player can tell apart, the actions are the full game's action ids with their
masks, and each turn costs -1 (``racko_env.solitaire_env``). Every-visit Monte Carlo control
with an epsilon-greedy policy keeps one value per state and action, plays whole games, and when
a game ends moves the value of every state and action it played towards the return that
followed: minus the turns still played from there. No bootstrapping: a value is an average of
real outcomes. 1024 games are played side by side (the vector env); each remembers its
decisions until it ends.

Because ``racko_env.solitaire.solve`` knows the optimum exactly, the learning curve is exact too:
at each evaluation point the greedy policy of the table is scored by exact policy evaluation
(``racko_env.solitaire.evaluate``), not by playing games. It writes ``curve.png`` (the curve
against the optimum) and ``result.json`` into ``--out``. Shared plumbing (flags, the curve, the
files): ``train/common/tabular.py``. Docs: ``docs/coursework/ladder.md``.
"""

from __future__ import annotations

import sys
import time

import gymnasium
import numpy as np

import racko_env  # noqa: F401  (registers racko/RackoSolitaire-v0)
from train.common.tabular import TabularArgs, Tracker, epsilon, parse_args

NAME = "tabular_mc"
# Monte Carlo's own settings: its values are averages of whole games' returns, so early
# exploration's bad games must fade (step size 1/visits**0.5), exploration starts high and ends
# at none, and it needs twice the steps of the bootstrapping methods.
DEFAULTS = {
    "total_steps": 12_000_000,
    "epsilon_start": 0.5,
    "epsilon_end": 0.0,
    "epsilon_fraction": 0.8,
    "init_value": -1.0,
    "step_power": 0.5,
}


def train(args: TabularArgs) -> dict:
    envs = gymnasium.make_vec(
        "racko/RackoSolitaire-v0",
        num_envs=args.num_envs,
        vectorization_mode="vector_entry_point",
        rack_size=args.rack_size,
        deck_size=args.deck_size,
        tabular=True,
        turn_limit=args.turn_limit,
    )
    num_states = envs.single_observation_space.n
    num_actions = envs.single_action_space.n
    rng = np.random.default_rng(args.seed)
    tracker = Tracker(NAME, args)

    # The table: one value per (state, action). Illegal actions get -inf so that neither the
    # greedy choice nor the target ever picks them; the legal ones start at init_value.
    obs, info = envs.reset(seed=args.seed)
    legal = envs.unwrapped.space.legal[np.arange(num_states) // envs.unwrapped.space.num_states]
    q = np.where(legal, args.init_value, -np.inf).astype(np.float32)
    visits = np.zeros((num_states, num_actions), dtype=np.float32)

    # Each game's decisions so far: the state, the action and the turns played before it.
    longest = 3 * args.turn_limit  # a turn is at most three decisions
    seen_obs = np.zeros((args.num_envs, longest), dtype=np.int64)
    seen_actions = np.zeros((args.num_envs, longest), dtype=np.int64)
    seen_turns = np.zeros((args.num_envs, longest), dtype=np.int64)
    length = np.zeros(args.num_envs, dtype=np.int64)
    turns = np.zeros(args.num_envs, dtype=np.int64)
    games = np.arange(args.num_envs)

    iterations = args.total_steps // args.num_envs
    checkpoints = set(
        np.linspace(iterations / args.eval_points, iterations, args.eval_points).astype(int)
    )
    start = time.perf_counter()
    for iteration in range(1, iterations + 1):
        # 1. Act epsilon-greedily among the legal actions (the env's masks), and remember it.
        mask = info["action_mask"].astype(bool)
        greedy = q[obs].argmax(axis=1)
        random_legal = (rng.random(mask.shape) * mask).argmax(axis=1)
        explore = rng.random(args.num_envs) < epsilon(args, iteration / iterations)
        actions = np.where(explore, random_legal, greedy)
        seen_obs[games, length] = obs
        seen_actions[games, length] = actions
        seen_turns[games, length] = turns
        length += 1
        obs, reward, terminated, truncated, info = envs.step(actions)
        turns -= reward.astype(np.int64)  # -1 per turn

        # 2. When a game ends, the return after each of its decisions is minus the turns played
        #    from there on (a game cut off by the turn limit: minus those it got to play).
        done = np.flatnonzero(terminated | truncated)
        if len(done):
            played = np.arange(length[done].max()) < length[done][:, None]
            states = seen_obs[done][:, : played.shape[1]][played]
            acts = seen_actions[done][:, : played.shape[1]][played]
            returns = -(turns[done][:, None] - seen_turns[done][:, : played.shape[1]])[played]

            # 3. Move each value a step 1/visits**power towards the return (1/visits: the mean).
            np.add.at(visits, (states, acts), 1.0)
            step_size = 1.0 / visits[states, acts] ** args.step_power
            np.add.at(q, (states, acts), step_size * (returns - q[states, acts]))
            length[done], turns[done] = 0, 0

        out_of_time = args.time_limit and time.perf_counter() - start > args.time_limit
        if iteration in checkpoints or out_of_time:
            tracker.record(q, visits, iteration * args.num_envs)
            start -= tracker.curve[-1]["eval_seconds"]  # evaluating is not learning time
        if out_of_time:
            break
    envs.close()
    return tracker.finish(q)


def main(argv: list[str] | None = None) -> int:
    train(parse_args(NAME, __doc__.split("\n")[0], argv, **DEFAULTS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
