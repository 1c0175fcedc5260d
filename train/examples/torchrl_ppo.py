"""Masked PPO on Rack-O with TorchRL's PettingZoo wrapper: ``python train/examples/torchrl_ppo.py``.

An example for TorchRL users (docs/training/torchrl.md), not the project's trainer. The AEC env
goes into ``PettingZooWrapper`` as it is (``use_mask=True``: one agent acts per step, and the
wrapper keeps each group's ``action_mask``); ``player_0`` is the group ``"learner"``, a
``ProbabilisticActor`` over ``MaskedCategorical``, and ``player_1`` the group ``"opponent"``, a
fixed racko bot. GAE runs over every step of the learner's view, then only the rows where the
learner acted train ``ClipPPOLoss``. Same ``--seed``, same run; one line per batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.extras import needs_extra
from racko_env.cli import OneLineParser
from train.common.front_door import fail, settings_flags

# each of the extra's packages, when missing, is named with the extra (torchrl needs tensordict)
with needs_extra("torch", "torchrl", "train/examples/torchrl_ppo.py"):
    import torch
with needs_extra("tensordict", "torchrl", "train/examples/torchrl_ppo.py"):
    import tensordict  # noqa: F401
with needs_extra("torchrl", "torchrl", "train/examples/torchrl_ppo.py"):
    import torchrl  # noqa: F401
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torchrl.collectors import Collector
    from torchrl.envs import PettingZooWrapper
    from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

PROG = "python train/examples/torchrl_ppo.py"  # errors start with it
LEARNER, OPPONENT = "learner", "opponent"
OBS = (LEARNER, "observation", "observation")  # racko's observation vector, under the group
MASK = (LEARNER, "action_mask")  # the legal actions (moved there by the wrapper)
ACTING = (LEARNER, "mask")  # true on the steps where the learner is the one to act


@dataclass(frozen=True)
class Settings:
    """The run's settings (the command line's flags)."""

    frames: int = 2048  # env steps in all (both seats' steps count)
    frames_per_batch: int = 512
    epochs: int = 4
    minibatch: int = 128
    hidden: int = 64
    lr: float = 3e-4
    opponent: str = "random"  # any agents.load spec
    turn_limit: int = 400  # rules: a round stops (truncated) after this many turns
    seed: int = 0


def make_env(settings: Settings) -> PettingZooWrapper:
    """``racko_v1``'s 2-player AEC env in TorchRL's wrapper: ``player_0`` learns."""
    from racko_env import racko_v1

    env = racko_v1.env(num_players=2, turn_limit=settings.turn_limit)
    return PettingZooWrapper(
        env,
        use_mask=True,  # compulsory for AEC envs: one agent acts per step
        categorical_actions=True,
        group_map={LEARNER: ["player_0"], OPPONENT: ["player_1"]},
        seed=settings.seed,
    )


class FixedBot(torch.nn.Module):
    """A racko bot (``agents.load``) as a torch module: observation and mask in, action out. An
    opponent not on turn gets an all-true mask from the wrapper; its action is then ignored, so
    the bot is asked only when the mask is a real one."""

    def __init__(self, spec: str, seed: int, turn_limit: int) -> None:
        super().__init__()
        import agents

        self.bot = agents.load(spec, 2, seed=seed, turn_limit=turn_limit)  # the env's rules

    def forward(self, obs: torch.Tensor, mask: torch.Tensor, acting: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(mask.shape[:-1], dtype=torch.int64)
        for i in zip(*torch.nonzero(acting, as_tuple=True), strict=True):
            o, m = obs[i].numpy(), mask[i].numpy().astype("int8")
            out[i] = int(self.bot.act({"observation": o, "action_mask": m}))
        return out


def make_modules(env: PettingZooWrapper, settings: Settings) -> tuple[Any, Any, Any]:
    """The learner's masked actor, its critic, and the policy the collector runs (the actor and
    the fixed opponent)."""
    obs_size = env.observation_spec[OBS].shape[-1]
    num_actions = env.full_action_spec[LEARNER, "action"].space.n
    cells = [settings.hidden, settings.hidden]
    logits = TensorDictModule(
        MLP(in_features=obs_size, out_features=num_actions, num_cells=cells),
        in_keys=[OBS],
        out_keys=[(LEARNER, "logits")],
    )
    actor = ProbabilisticActor(
        logits,
        in_keys={"logits": (LEARNER, "logits"), "mask": MASK},
        out_keys=[(LEARNER, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(LEARNER, "action_log_prob"),
    )
    critic = ValueOperator(
        MLP(in_features=obs_size, out_features=1, num_cells=cells),
        in_keys=[OBS],
        out_keys=[(LEARNER, "state_value")],
    )
    opponent = TensorDictModule(
        FixedBot(settings.opponent, settings.seed, settings.turn_limit),
        in_keys=[
            (OPPONENT, "observation", "observation"),
            (OPPONENT, "action_mask"),
            (OPPONENT, "mask"),
        ],
        out_keys=[(OPPONENT, "action")],
    )
    return actor, critic, TensorDictSequential(actor, opponent)


def train(settings: Settings, quiet: bool = False) -> list[dict[str, float]]:
    """Collect ``frames`` env steps in batches, a PPO update after each; one stats row a batch
    (``rounds``: rounds finished in it, ``mean_reward``: the learner's mean reward in them,
    ``loss``, ``learner_steps``: its decisions, ``illegal``: learner actions outside its mask)."""
    torch.manual_seed(settings.seed)
    env = make_env(settings)
    actor, critic, policy = make_modules(env, settings)
    keys = {
        "action": (LEARNER, "action"),
        "sample_log_prob": (LEARNER, "action_log_prob"),
        "value": (LEARNER, "state_value"),
        "reward": (LEARNER, "reward"),
        "done": (LEARNER, "done"),
        "terminated": (LEARNER, "terminated"),
    }
    gae = GAE(gamma=1.0, lmbda=0.95, value_network=critic)
    gae.set_keys(**{k: keys[k] for k in ("value", "reward", "done", "terminated")})
    loss = ClipPPOLoss(
        actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, normalize_advantage=True
    )
    loss.set_keys(**keys)
    optim = torch.optim.Adam(loss.parameters(), lr=settings.lr)
    collector = Collector(
        env,
        policy,
        frames_per_batch=settings.frames_per_batch,
        total_frames=settings.frames,
        auto_register_policy_transforms=False,  # the policy keeps no state between steps
    )
    rows = []
    for batch in collector:
        with torch.no_grad():
            gae(batch)
        acting = batch[ACTING].squeeze(-1)
        mine = batch[acting]  # the learner's own decisions
        taken = mine[MASK].squeeze(1).gather(-1, mine[LEARNER, "action"]).squeeze(-1)
        last = 0.0
        for _ in range(settings.epochs):
            for idx in torch.randperm(len(mine)).split(settings.minibatch):
                parts = loss(mine[idx])
                total = parts["loss_objective"] + parts["loss_critic"] + parts["loss_entropy"]
                optim.zero_grad()
                total.backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optim.step()
                last = total.item()
        collector.update_policy_weights_()
        ended = batch["next", "done"].squeeze(-1)
        rewards = batch["next", LEARNER, "reward"].reshape(len(batch))[ended]
        row = {
            "rounds": int(ended.sum()),
            "mean_reward": float(rewards.mean()) if len(rewards) else float("nan"),
            "loss": last,
            "learner_steps": len(mine),
            "illegal": int((~taken).sum()),
        }
        rows.append(row)
        if not quiet:
            mean = f"{row['mean_reward']:+.2f}" if row["rounds"] else "-"
            print(
                f"batch {len(rows)}: {row['rounds']} rounds, learner's mean reward {mean}, "
                f"loss {row['loss']:.3f}, {row['learner_steps']} learner decisions"
            )
    collector.shutdown()
    return rows


def parse_args(argv: list[str] | None) -> tuple[Settings, bool]:
    parser = OneLineParser(prog=PROG, description=__doc__.splitlines()[0])
    settings_flags(parser, Settings(), {"seed": int})  # numbers positive, the seed any int
    parser.add_argument("--quiet", action="store_true", help="no line per batch")
    args = vars(parser.parse_args(argv))
    quiet = args.pop("quiet")
    settings = Settings(**args)
    if settings.frames < settings.frames_per_batch:
        parser.error("--frames must be at least --frames-per-batch")
    return settings, quiet


def main(argv: list[str] | None = None) -> int:
    settings, quiet = parse_args(argv)
    try:
        train(settings, quiet)
    except ValueError as exc:  # a bad --opponent spec: agents.load's one line
        return fail(PROG, exc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
