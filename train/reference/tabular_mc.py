"""Monte Carlo control on solitaire Rack-O, in one file: a reference to read, checked exactly.

    python train/reference/tabular_mc.py --rack-size 3 --deck-size 8

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

import numpy as np

from train.common.tabular import TabularArgs, epsilon, parse_args, start_run

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
    # The games, the table (one value per state and action, -inf for the illegal ones), the
    # evaluation points: train.common.tabular.start_run.
    run = start_run(NAME, args)
    obs, info, q, visits, rng = run.obs, run.info, run.q, run.visits, run.rng

    # Each game's decisions so far: the state, the action and the turns played before it.
    longest = 3 * args.turn_limit  # a turn is at most three decisions
    seen_obs = np.zeros((args.num_envs, longest), dtype=np.int64)
    seen_actions = np.zeros((args.num_envs, longest), dtype=np.int64)
    seen_turns = np.zeros((args.num_envs, longest), dtype=np.int64)
    length = np.zeros(args.num_envs, dtype=np.int64)
    turns = np.zeros(args.num_envs, dtype=np.int64)
    games = np.arange(args.num_envs)

    iterations = run.iterations
    run.start_clock()
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
        obs, reward, terminated, truncated, info = run.envs.step(actions)
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

        if run.after(iteration):  # the exact evaluation at its points; True: out of time
            break
    return run.finish()


def main(argv: list[str] | None = None) -> int:
    train(parse_args(NAME, __doc__.split("\n")[0], argv, **DEFAULTS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
