"""Tabular SARSA on solitaire Rack-O, in one file: a reference to read, checked exactly.

    python train/reference/tabular_sarsa.py --rack-size 3 --deck-size 8

The env is ``racko/RackoSolitaire-v0`` in its tabular form: a ``Discrete`` observation numbers
every state the player can tell apart, the actions are the full game's action ids with their
masks, and each turn costs -1 (``racko_env.solitaire_env``). SARSA keeps one value per state and
action and moves it towards the reward plus the value of the action it plays next (on-policy:
it learns the values of its own epsilon-greedy play, exploration included). 1024 games are played side by side (the
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

NAME = "tabular_sarsa"


def train(args: TabularArgs) -> dict:
    # The games, the table (one value per state and action, -inf for the illegal ones), the
    # evaluation points: train.common.tabular.start_run.
    run = start_run(NAME, args)
    obs, info, q, visits, rng = run.obs, run.info, run.q, run.visits, run.rng
    legal = run.legal  # legal[state, action]

    def choose(states: np.ndarray, mask: np.ndarray, eps: float) -> np.ndarray:
        """Epsilon-greedy among the legal actions of each state."""
        greedy = q[states].argmax(axis=1)
        random_legal = (rng.random(mask.shape) * mask).argmax(axis=1)
        return np.where(rng.random(len(states)) < eps, random_legal, greedy)

    iterations = run.iterations
    actions = choose(obs, info["action_mask"].astype(bool), args.epsilon_start)
    run.start_clock()
    for iteration in range(1, iterations + 1):
        eps = epsilon(args, iteration / iterations)
        # 1. Play the actions chosen last time (SARSA chooses before it updates).
        next_obs, reward, terminated, truncated, info = run.envs.step(actions)

        # 2. The next action of each game, epsilon-greedy. A finished game is dealt again at
        #    once (autoreset in the same step): its target needs an action at its last state
        #    (info["final_obs"]), while it goes on with an action at the new deal.
        next_actions = choose(next_obs, info["action_mask"].astype(bool), eps)
        after, after_actions = next_obs, next_actions
        if "final_obs" in info:
            done = info["_final_obs"]
            after = np.where(done, info["final_obs"], next_obs)
            after_mask = legal[after]
            after_actions = np.where(done, choose(after, after_mask, eps), next_actions)

        # 3. The SARSA target: the reward, plus the value of the next state and action unless
        #    Rack-O ended the game (a game cut off by the turn limit still bootstraps).
        target = reward + np.where(terminated, 0.0, q[after, after_actions])

        # 4. Move each value a step 1/visits**power towards its target.
        np.add.at(visits, (obs, actions), 1.0)
        step_size = 1.0 / visits[obs, actions] ** args.step_power
        np.add.at(q, (obs, actions), step_size * (target - q[obs, actions]))
        obs, actions = next_obs, next_actions

        if run.after(iteration):  # the exact evaluation at its points; True: out of time
            break
    return run.finish()


def main(argv: list[str] | None = None) -> int:
    train(parse_args(NAME, __doc__.split("\n")[0], argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
