"""Masked DQN on Rack-O with Tianshou's PettingZoo wrapper: ``python train/examples/tianshou_dqn.py``.

An example for Tianshou users (docs/training/tianshou.md), not the project's trainer. The AEC
env goes into ``tianshou.env.PettingZooEnv`` as it is; ``player_0``'s decisions go to a masked
``DQN``, ``player_1``'s to a fixed opponent (Tianshou's masked random policy, or a racko bot
through ``BotAlgorithm``), under Tianshou's multi-agent manager and off-policy trainer. As in
Tianshou's own AEC examples, a transition carries the rewards after the acting agent's step, so
the learner's transitions see its wins but not the losses the opponent's move ends (the page
says what follows). Same ``--seed``, same run."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.extras import needs_extra
from racko_env.cli import OneLineParser, probability
from train.common.front_door import fail, settings_flags

with needs_extra("torch", "tianshou", "train/examples/tianshou_dqn.py"):  # each with its extra
    import torch
with needs_extra("tianshou", "tianshou", "train/examples/tianshou_dqn.py"):
    from tianshou.algorithm import (
        DQN,
        MARLRandomDiscreteMaskedOffPolicyAlgorithm,
        MultiAgentOffPolicyAlgorithm,
    )
    from tianshou.algorithm.algorithm_base import OffPolicyAlgorithm, Policy, TrainingStats
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

PROG = "python train/examples/tianshou_dqn.py"  # errors start with it
LEARNER_SEAT = 0  # player_0 learns; player_1 is the fixed opponent


@dataclass(frozen=True)
class Settings:
    """The run's settings (the command line's flags)."""

    epochs: int = 5
    steps_per_epoch: int = 2000  # env steps (both seats') per epoch
    collect_steps: int = 16  # env steps between gradient-step rounds
    updates_per_step: float = 0.25  # gradient steps per collected env step
    train_envs: int = 4
    test_episodes: int = 8  # rounds against the opponent after each epoch
    buffer: int = 50_000
    batch: int = 64
    hidden: int = 128
    lr: float = 1e-3
    eps_train: float = 0.1
    target_update: int = 200
    opponent: str = "random"  # Tianshou's masked random policy; or any agents.load spec
    turn_limit: int = 400  # rules: a round stops (truncated) after this many turns
    seed: int = 0


def make_env(settings: Settings) -> PettingZooEnv:
    """``racko_v1``'s 2-player AEC env in Tianshou's wrapper."""
    from racko_env import racko_v1

    return PettingZooEnv(racko_v1.env(num_players=2, turn_limit=settings.turn_limit))


class BotAlgorithm(OffPolicyAlgorithm):
    """A racko bot (``agents.load``) as a Tianshou algorithm that learns nothing: its policy asks
    the bot for each row of ``obs.obs`` / ``obs.mask``, as the masked random policy does."""

    class BotPolicy(Policy):
        def __init__(self, bot: Any, action_space: Any) -> None:
            super().__init__(action_space=action_space)
            self.bot = bot

        def forward(self, batch: Any, state: Any = None, **kwargs: Any) -> Any:
            acts = [
                self.bot.act({"observation": o, "action_mask": np.asarray(m, dtype=np.int8)})
                for o, m in zip(batch.obs.obs, batch.obs.mask, strict=True)
            ]
            return Batch(act=np.asarray(acts, dtype=np.int64))

    def __init__(self, bot: Any, action_space: Any) -> None:
        super().__init__(policy=self.BotPolicy(bot, action_space))

    def _update_with_batch(self, batch: Any) -> TrainingStats:  # a fixed bot: nothing to learn
        return TrainingStats()


def make_algorithm(env: PettingZooEnv, settings: Settings) -> MultiAgentOffPolicyAlgorithm:
    """The learner's masked DQN and the opponent under Tianshou's multi-agent manager."""
    obs_space = env.observation_space["observation"]  # the wrapper keeps racko's Dict space
    net = Net(
        state_shape=obs_space.shape,
        action_shape=env.action_space.n,
        hidden_sizes=[settings.hidden, settings.hidden],
    )
    learner = DQN(
        policy=DiscreteQLearningPolicy(
            model=net,
            action_space=env.action_space,
            observation_space=obs_space,
            eps_training=settings.eps_train,
            eps_inference=0.0,
        ),
        optim=AdamOptimizerFactory(lr=settings.lr),
        gamma=1.0,  # the win reward comes once, at the round's end
        n_step_return_horizon=1,
        target_update_freq=settings.target_update,
    )
    if settings.opponent == "random":
        opponent: OffPolicyAlgorithm = MARLRandomDiscreteMaskedOffPolicyAlgorithm(
            action_space=env.action_space
        )
    else:
        import agents

        bot = agents.load(settings.opponent, 2, seed=settings.seed, turn_limit=settings.turn_limit)
        opponent = BotAlgorithm(bot, env.action_space)
    seats = [learner, opponent] if LEARNER_SEAT == 0 else [opponent, learner]
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)


def train(settings: Settings, quiet: bool = False) -> dict[str, Any]:
    """Tianshou's off-policy trainer for ``epochs`` epochs. Returns the trained algorithm, its
    statistics and the replay buffer's counts: ``learner_decisions`` and ``illegal`` (recorded
    learner actions outside their mask; the masked policy makes it 0)."""
    # a multi-agent run's rewards have one column per agent, which Tianshou's statistics warn
    # about at every collect; the learner's test score is its own column (LEARNER_SEAT)
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    np.random.seed(settings.seed)  # the masked random policy draws from numpy's global stream
    torch.manual_seed(settings.seed)
    algorithm = make_algorithm(make_env(settings), settings)
    train_envs = DummyVectorEnv([lambda: make_env(settings)] * settings.train_envs)
    test_envs = DummyVectorEnv([lambda: make_env(settings)] * 2)
    train_envs.seed(settings.seed)
    test_envs.seed(settings.seed + 1)
    buffer = VectorReplayBuffer(settings.buffer, settings.train_envs)
    training = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)
    testing = Collector[CollectStats](algorithm, test_envs, exploration_noise=False)
    training.reset()
    training.collect(n_step=settings.batch * settings.train_envs)  # a first batch to learn from
    stats = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=training,
            test_collector=testing,
            max_epochs=settings.epochs,
            epoch_num_steps=settings.steps_per_epoch,
            collection_step_num_env_steps=settings.collect_steps,
            update_step_num_gradient_steps_per_sample=settings.updates_per_step,
            test_step_num_episodes=settings.test_episodes,
            batch_size=settings.batch,
            multi_agent_return_reduction=lambda rew: rew[:, LEARNER_SEAT],
            verbose=not quiet,
            show_progress=False,
        )
    )
    recorded = buffer[buffer.sample_indices(0)]  # every transition the buffer holds
    mine = recorded[np.nonzero(recorded.obs.agent_id == f"player_{LEARNER_SEAT}")[0]]
    legal = np.asarray(mine.obs.mask, dtype=bool)[np.arange(len(mine)), mine.act.astype(int)]
    return {
        "algorithm": algorithm,
        "stats": stats,
        "best_reward": float(stats.best_reward),
        "learner_decisions": len(mine),
        "illegal": int((~legal).sum()),
    }


def parse_args(argv: list[str] | None) -> tuple[Settings, bool]:
    parser = OneLineParser(prog=PROG, description=__doc__.splitlines()[0])
    # numbers positive; the seed any int, epsilon from 0 to 1
    settings_flags(parser, Settings(), {"seed": int, "eps_train": probability})
    parser.add_argument("--quiet", action="store_true", help="no line per epoch")
    args = vars(parser.parse_args(argv))
    quiet = args.pop("quiet")
    return Settings(**args), quiet


def main(argv: list[str] | None = None) -> int:
    settings, quiet = parse_args(argv)
    try:
        result = train(settings, quiet)
    except ValueError as exc:  # a bad --opponent spec: agents.load's one line
        return fail(PROG, exc)
    print(
        f"best test reward of the learner: {result['best_reward']:+.2f} "
        f"({result['learner_decisions']} learner decisions in the buffer, "
        f"{result['illegal']} illegal)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
