"""Tabular Q-learning on solitaire Rack-O, in one file: a reference to read, checked exactly.

    python train/reference/tabular_q_learning.py --rack-size 3 --deck-size 8

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

import numpy as np

from train.common.tabular import TabularArgs, epsilon, parse_args, start_run

NAME = "tabular_q_learning"


def train(args: TabularArgs) -> dict:
    # The games, the table (one value per state and action, -inf for the illegal ones), the
    # evaluation points: train.common.tabular.start_run.
    run = start_run(NAME, args)
    obs, info, q, visits, rng = run.obs, run.info, run.q, run.visits, run.rng

    iterations = run.iterations
    run.start_clock()
    for iteration in range(1, iterations + 1):
        # 1. Act epsilon-greedily among the legal actions (the env's masks).
        mask = info["action_mask"].astype(bool)
        greedy = q[obs].argmax(axis=1)
        random_legal = (rng.random(mask.shape) * mask).argmax(axis=1)
        explore = rng.random(args.num_envs) < epsilon(args, iteration / iterations)
        actions = np.where(explore, random_legal, greedy)
        next_obs, reward, terminated, truncated, info = run.envs.step(actions)

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

        if run.after(iteration):  # the exact evaluation at its points; True: out of time
            break
    return run.finish()


def main(argv: list[str] | None = None) -> int:
    train(parse_args(NAME, __doc__.split("\n")[0], argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
