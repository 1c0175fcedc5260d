"""Tabular Q-learning on solitaire Rack-O, in one file: a reference to read, checked exactly.

    python train/tabular_q_learning.py --rack-size 3 --deck-size 8

The env is ``racko/RackoSolitaire-v0`` in its tabular form: a ``Discrete`` observation numbers
every state the player can tell apart, the actions are the full game's action ids with their
masks, and each turn costs -1 (``racko_env.solitaire_env``). Q-learning keeps one value per state
and action and moves it towards the reward plus the best value of the next state (off-policy:
the target is greedy whatever the exploration did). 1024 games are played side by side (the
vector env), so one step of the loop is 1024 updates, applied together.

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

NAME = "tabular_q_learning"


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

    iterations = args.total_steps // args.num_envs
    checkpoints = set(
        np.linspace(iterations / args.eval_points, iterations, args.eval_points).astype(int)
    )
    start = time.perf_counter()
    for iteration in range(1, iterations + 1):
        # 1. Act epsilon-greedily among the legal actions (the env's masks).
        mask = info["action_mask"].astype(bool)
        greedy = q[obs].argmax(axis=1)
        random_legal = (rng.random(mask.shape) * mask).argmax(axis=1)
        explore = rng.random(args.num_envs) < epsilon(args, iteration / iterations)
        actions = np.where(explore, random_legal, greedy)
        next_obs, reward, terminated, truncated, info = envs.step(actions)

        # 2. The state each step led to: a finished game is dealt again at once (autoreset in
        #    the same step), and its last state is in info["final_obs"].
        after = next_obs
        if "final_obs" in info:
            after = np.where(info["_final_obs"], info["final_obs"], next_obs)

        # 3. The Q-learning target: the reward, plus the best next value unless Rack-O ended the
        #    game (a game cut off by the turn limit still bootstraps: it did not end there).
        target = reward + np.where(terminated, 0.0, q[after].max(axis=1))

        # 4. Move each value a step 1/visits**power towards its target.
        np.add.at(visits, (obs, actions), 1.0)
        step_size = 1.0 / visits[obs, actions] ** args.step_power
        np.add.at(q, (obs, actions), step_size * (target - q[obs, actions]))
        obs = next_obs

        out_of_time = args.time_limit and time.perf_counter() - start > args.time_limit
        if iteration in checkpoints or out_of_time:
            tracker.record(q, visits, iteration * args.num_envs)
            start -= tracker.curve[-1]["eval_seconds"]  # evaluating is not learning time
        if out_of_time:
            break
    envs.close()
    return tracker.finish(q)


def main(argv: list[str] | None = None) -> int:
    train(parse_args(NAME, __doc__.split("\n")[0], argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
