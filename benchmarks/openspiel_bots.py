"""OpenSpiel's own algorithms on the ``racko`` game, against ``expert`` in duplicate rounds.

    python -m benchmarks.openspiel_bots ismcts --rounds 40 --simulations 100 --evaluator progress
    python -m benchmarks.openspiel_bots dqn --train-minutes 10 --rounds 200
    python -m benchmarks.openspiel_bots speed --rounds 20

``ismcts``: OpenSpiel's information-set MCTS, resampling with ``resample_from_infostate``; its
leaf evaluator is OpenSpiel's random rollout (``random``) or ``progress``, each rack's longest
increasing run, which lets the search look further in the same time. ``dqn``: OpenSpiel's PyTorch
DQN, one agent per seat trained in self-play through ``rl_environment`` for a wall-clock budget,
then seat 0's greedy policy plays. Both play through the AEC env in racko_eval's tournament,
seeing only their seat's observation (``racko_env.openspiel.state_from_observation`` builds a
state from it). ``speed``: random play through the pyspiel API and through ``rl_environment``.
Each run adds its row to ``docs/results/openspiel.json``. Needs the ``openspiel`` extra (and
``train`` for dqn's torch).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import time  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from agents.base import Bot  # noqa: E402
from racko_env.cli import OneLineParser, positive_float, positive_int  # noqa: E402
from racko_env.rules import RACK_SIZE  # noqa: E402

try:
    import pyspiel

    import racko_env.openspiel as racko_openspiel
except ImportError as _err:
    raise SystemExit(f"error: {_err}") from None


def longest_increasing(rack: Sequence[int]) -> int:
    """Cards of the rack in a strictly increasing subsequence: the cards that may stay."""
    best = [1] * len(rack)
    for i in range(len(rack)):
        for j in range(i):
            if rack[j] < rack[i] and best[j] + 1 > best[i]:
                best[i] = best[j] + 1
    return max(best, default=0)


class ProgressEvaluator:
    """An ISMCTS leaf evaluator without a rollout: each seat's rack progress against the others'.

    Value of seat p: (its longest increasing run - the others' mean) / 10, in [-1, 1]; terminal
    states give their returns. Uniform priors (UCT ignores them)."""

    def evaluate(self, state: pyspiel.State) -> np.ndarray:
        if state.is_terminal():
            return np.array(state.returns())
        game = state.racko_game()
        teams = [game.config.team_of(p) for p in range(game.num_players)]
        progress = [longest_increasing(r) / RACK_SIZE for r in game.racks]
        team_best = {
            t: max(v for v, u in zip(progress, teams, strict=True) if u == t) for t in teams
        }
        values = []
        for p in range(game.num_players):
            others = [v for t, v in team_best.items() if t != teams[p]]
            values.append(team_best[teams[p]] - sum(others) / len(others))
        return np.array(values)

    def prior(self, state: pyspiel.State) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


class _Timed(Bot):
    """A bot that counts its decisions and the time it spends on them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.seconds = 0.0
        self.decisions = 0

    def act(self, observation: Mapping[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        t0 = time.perf_counter()
        action = int(legal[0]) if len(legal) == 1 else self.decide(observation, legal)
        self.seconds += time.perf_counter() - t0
        self.decisions += 1
        return action

    def decide(self, observation: Mapping[str, Any], legal: np.ndarray) -> int:
        raise NotImplementedError

    @property
    def ms_per_decision(self) -> float:
        return 1000.0 * self.seconds / max(self.decisions, 1)


class ISMCTSPlayer(_Timed):
    """OpenSpiel's ISMCTS bot playing one seat from its observation."""

    def __init__(self, players: int, simulations: int, evaluator: str, uct_c: float, seed: int):
        super().__init__(f"ismcts-{evaluator}-{simulations}")
        from open_spiel.python.algorithms import ismcts, mcts

        self.game = pyspiel.load_game("racko", {"players": players})
        self._ismcts, self._mcts = ismcts, mcts
        self.simulations, self.evaluator, self.uct_c = simulations, evaluator, uct_c
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        seed = 0 if seed is None else int(seed) % 2**31
        self.rng = np.random.default_rng(seed)
        random_state = np.random.RandomState(seed)
        if self.evaluator == "random":
            evaluator = self._mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
        else:
            evaluator = ProgressEvaluator()
        self.bot = self._ismcts.ISMCTSBot(
            self.game,
            evaluator,
            uct_c=self.uct_c,
            max_simulations=self.simulations,
            random_state=random_state,
        )
        sampler = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)
        self.bot.set_resampler(lambda state, player: state.resample_from_infostate(player, sampler))

    def decide(self, observation: Mapping[str, Any], legal: np.ndarray) -> int:
        state = racko_openspiel.state_from_observation(
            self.game, observation["observation"], seed=int(self.rng.integers(2**63))
        )
        return int(self.bot.step(state))


class DQNPlayer(_Timed):
    """A trained OpenSpiel DQN agent's greedy policy playing one seat from its observation."""

    def __init__(self, agent: Any, players: int) -> None:
        super().__init__("dqn")
        from open_spiel.python import rl_environment

        self.agent, self.players, self._rl = agent, players, rl_environment

    def decide(self, observation: Mapping[str, Any], legal: np.ndarray) -> int:
        obs = np.asarray(observation["observation"], dtype=np.float32)
        legal_list = [int(a) for a in legal]
        pid = self.agent.player_id
        step = self._rl.TimeStep(
            observations={
                "info_state": [obs] * self.players,
                "legal_actions": [legal_list if p == pid else [] for p in range(self.players)],
                "current_player": pid,
            },
            rewards=None,
            discounts=None,
            step_type=self._rl.StepType.MID,
        )
        return int(self.agent.step(step, is_evaluation=True).action)


def train_dqn(players: int, minutes: float, seed: int) -> tuple[list[Any], dict[str, Any]]:
    """DQN agents (one per seat) trained in self-play for a wall-clock budget."""
    from agents.extras import require

    torch = require("torch", "train", "benchmarks/openspiel_bots.py dqn")
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import dqn

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    game = pyspiel.load_game("racko", {"players": players})
    env = rl_environment.Environment(game, seed=seed)
    size = env.observation_spec()["info_state"][0]
    agents = [
        dqn.DQN(
            player_id=p,
            state_representation_size=size,
            num_actions=env.action_spec()["num_actions"],
            hidden_layers_sizes=[256, 256],
            replay_buffer_capacity=100_000,
            batch_size=128,
            learning_rate=1e-3,
            optimizer_str="adam",
            epsilon_decay_duration=200_000,
            epsilon_end=0.05,
            min_buffer_size_to_learn=2_000,
            seed=seed + p,
        )
        for p in range(players)
    ]
    t0, episodes, steps = time.perf_counter(), 0, 0
    while time.perf_counter() - t0 < 60.0 * minutes:
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            time_step = env.step([agents[player].step(time_step).action])
            steps += 1
        for agent in agents:
            agent.step(time_step)
        episodes += 1
    seconds = time.perf_counter() - t0
    return agents, {
        "episodes": episodes,
        "steps": steps,
        "train_seconds": round(seconds, 1),
        "steps_per_second": round(steps / seconds, 1),
    }


def evaluate(bot: _Timed, players: int, rounds: int, seed: int) -> dict[str, Any]:
    """Duplicate rounds against expert (racko_eval's tournament), with the bot's decision time."""
    from racko_eval import run_tournament

    t0 = time.perf_counter()
    report = run_tournament([bot, "expert"], num_players=players, rounds=rounds, seed=seed)
    me = report["bots"][0]
    return {
        "bot": bot.name,
        "opponent": "expert",
        "players": players,
        "deals": rounds,
        "rounds_played": me["played"],
        "win_rate": me["win_rate"],
        "win_rate_ci95": me["win_rate_ci95"],
        "ms_per_decision": round(bot.ms_per_decision, 2),
        "decisions": bot.decisions,
        "wall_seconds": round(time.perf_counter() - t0, 1),
    }


def speed(players: int, rounds: int, seed: int) -> dict[str, Any]:
    """Random play of ``rounds`` rounds: decisions per second, pyspiel API and rl_environment."""
    import random

    from open_spiel.python import rl_environment

    game = pyspiel.load_game("racko", {"players": players})
    rng = random.Random(seed)
    decisions, t0 = 0, time.perf_counter()
    for _ in range(rounds):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
    api = decisions / (time.perf_counter() - t0)
    env = rl_environment.Environment(game, seed=seed)
    steps, t0 = 0, time.perf_counter()
    for _ in range(rounds):
        step = env.reset()
        while not step.last():
            player = step.observations["current_player"]
            step = env.step([rng.choice(step.observations["legal_actions"][player])])
            steps += 1
    return {
        "players": players,
        "rounds": rounds,
        "decisions_per_second_api": round(api, 1),
        "steps_per_second_rl_environment": round(steps / (time.perf_counter() - t0), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog="python -m benchmarks.openspiel_bots", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="algorithm", required=True)
    for name in ("ismcts", "dqn", "speed"):
        p = sub.add_parser(name)
        p.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
        p.add_argument("--rounds", type=positive_int, default=10, help="deals, in both seatings")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--results-dir", metavar="DIR", help="default docs/results")
        if name == "ismcts":
            p.add_argument("--simulations", type=positive_int, default=20)
            p.add_argument("--evaluator", choices=("random", "progress"), default="random")
            p.add_argument("--uct-c", type=positive_float, default=2.0)
        elif name == "dqn":
            p.add_argument("--train-minutes", type=positive_float, default=5.0)
    args = parser.parse_args(argv)
    if args.algorithm == "speed":
        result = speed(args.players, args.rounds, args.seed)
    elif args.algorithm == "ismcts":
        bot = ISMCTSPlayer(args.players, args.simulations, args.evaluator, args.uct_c, args.seed)
        result = {"simulations": args.simulations, "evaluator": args.evaluator}
    else:
        try:
            agents, result = train_dqn(args.players, args.train_minutes, args.seed)
        except ImportError as err:  # torch missing: its extra, in one line
            parser.exit(2, f"{parser.prog} dqn: error: {err}\n")
        bot = DQNPlayer(agents[0], args.players)
    if args.algorithm != "speed":
        result = {**evaluate(bot, args.players, args.rounds, args.seed), **result}
    print(json.dumps(result))
    from benchmarks import command_line

    path = record(result, args.algorithm, command_line("openspiel_bots", argv), args.results_dir)
    print(f"wrote {path}")
    return 0


AGAINST = "OpenSpiel's algorithms against expert"
SPEED = "The OpenSpiel game's speed, random play"


def record(result: dict[str, Any], algorithm: str, command: str, folder: str | None) -> Path:
    """This run's row in ``docs/results/openspiel.json``, which gathers several runs."""
    from benchmarks import rate_text
    from racko_eval.results import record_row

    if algorithm == "speed":
        title = SPEED
        columns = ["players", "rounds", "decisions/s (pyspiel API)", "steps/s (rl_environment)"]
        row = [result["players"], result["rounds"], result["decisions_per_second_api"]]
        row.append(result["steps_per_second_rl_environment"])
    else:
        title = AGAINST
        columns = ["bot", "players", "rounds", "win rate (95% CI)", "ms per decision"]
        row = [result["bot"], result["players"], result["rounds_played"]]
        row += [rate_text(result["win_rate"], result["win_rate_ci95"]), result["ms_per_decision"]]
    return record_row(
        "openspiel",
        command=command,
        title=title,
        columns=[*columns, "command"],
        rows=[[*row, command]],
        titles=[AGAINST, SPEED],
        folder=folder,
    )


if __name__ == "__main__":
    raise SystemExit(main())
