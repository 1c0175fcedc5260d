"""The config schema of the RLlib trainer (``python train/rllib_ppo.py --config FILE``): RLlib's
own sections, in the dialect of every trainer's config (``train.common.config``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from train.common.config import (
    Evaluation,
    FinalEvalSection,
    GameConfig,
    LayerSizes,
    Seed,
    Strict,
)

BOT_OPPONENTS = ("random", "heuristic", "expert")  # bots that play inside the env
LEAGUE_OPPONENTS = ("self", "league")


class RLlibPPOSection(Strict):
    """PPO hyperparameters (names as in RLlib's ``PPOConfig.training``)."""

    lr: float = Field(3e-4, gt=0)
    gamma: float = Field(0.99, gt=0, le=1)
    lambda_: float = Field(0.95, ge=0, le=1)
    clip_param: float = Field(0.2, gt=0)
    entropy_coeff: float = Field(0.005, ge=0)
    vf_loss_coeff: float = Field(0.5, ge=0)
    grad_clip: float = Field(0.5, gt=0)
    num_epochs: int = Field(4, ge=1)
    train_batch_size: int = Field(8192, ge=8)  # env steps per iteration (per learner)
    minibatch_size: int = Field(1024, ge=8)
    # RLlib's adaptive KL penalty on top of the clipped objective (RLlib's default: on); SB3's
    # PPO, whose recipe configs/2p_rllib.yaml copies, has none
    use_kl_loss: bool = True

    @model_validator(mode="after")
    def _minibatch_fits(self) -> RLlibPPOSection:
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(
                f"minibatch_size ({self.minibatch_size}) exceeds train_batch_size "
                f"({self.train_batch_size})"
            )
        return self


class ModelSection(Strict):
    """The policy network: the SB3 trainer's structured network (``ppo.policy: structured``),
    ``hidden`` its trunk and ``slot_hidden`` the network shared by the ten slots."""

    encoder: Literal["structured"] = "structured"
    hidden: LayerSizes = Field(default_factory=lambda: [128, 128])
    slot_hidden: LayerSizes = Field(default_factory=lambda: [64, 64])


class LeagueSection(Strict):
    """Frozen snapshots of the learner. ``env: multi_agent``: ``size`` RLModule slots
    (``league_0`` ...), all starting as the initial net, refreshed round robin. ``env: vector``:
    the newest ``size`` snapshots, the first taken after ``snapshot_every`` iterations (until then
    the bots play every seat), ``latest_weight`` of the ``league`` weight to the newest, the rest
    shared equally (as the SB3 trainer's ``selfplay``)."""

    size: int = Field(4, ge=1)
    snapshot_every: int = Field(5, ge=1)  # training iterations between snapshots
    latest_weight: float = Field(0.5, ge=0, le=1)


class ResourcesSection(Strict):
    """Where the work runs. ``env_runners: 0`` samples in the driver process."""

    env_runners: int = Field(1, ge=0)
    envs_per_runner: int = Field(4, ge=1)
    cpus_per_env_runner: float = Field(1.0, gt=0)
    # extra Ray resources each env runner requires, e.g. {rollout_node: 1} pins runners to the
    # nodes started with `ray start --resources='{"rollout_node": 8}'`
    env_runner_resources: dict[str, float] = Field(default_factory=dict)
    learners: int = Field(0, ge=0)  # 0: learn in the driver process
    gpus_per_learner: float = Field(0.0, ge=0)
    rollout_fragment_length: int | Literal["auto"] = "auto"

    @field_validator("env_runner_resources")
    @classmethod
    def _resources_positive(cls, v: dict[str, float]) -> dict[str, float]:
        for name, amount in v.items():
            if not amount > 0:
                raise ValueError(f"env_runner_resources[{name!r}]: must be > 0, got {amount}")
        return v


class RLlibEvalSection(Evaluation):
    """Duplicate rounds of the learner, the evaluation every trainer runs
    (``train.common.evaluation``)."""

    every_iterations: int = Field(10, ge=1)
    rounds: int = Field(200, ge=0)  # per opponent; 0: no periodic evaluation
    seed: Seed = 12345


class RLlibFinalEvalSection(FinalEvalSection):
    """The final duplicate rounds, written to ``final_eval.json`` and the bot manifest."""

    rounds: int = Field(1000, ge=0)  # 0: skip


class RLlibConfig(GameConfig):
    """One RLlib run (``python train/rllib_ppo.py --config FILE``): the game (``num_players``,
    ``rules``, checked as in every trainer's config) and RLlib's own sections."""

    kind: Literal["rllib"] = "rllib"  # which trainer wrote a run folder
    # how the env runners step the game: "vector" (the batched engine through gymnasium's vector
    # API, bots and league snapshots inside) or "multi_agent" (racko_v1 one decision at a time;
    # the only path for "self", the learner in every seat)
    env: Literal["vector", "multi_agent"] = "vector"
    reward: Literal["win", "score"] = "win"
    episode: Literal["round", "game"] = "round"
    seed: Seed = 0
    iterations: int = Field(100, ge=1)  # training iterations (each ~train_batch_size env steps)
    # who sits across from the learner, by weight: "self" (the learner in every seat, all
    # trained), "league" (a frozen snapshot), or a baseline bot name played inside the env
    opponents: dict[str, float] = Field(
        default_factory=lambda: {"heuristic": 0.5, "expert": 0.3, "league": 0.2}
    )
    league: LeagueSection = LeagueSection()
    ppo: RLlibPPOSection = RLlibPPOSection()
    model: ModelSection = ModelSection()
    resources: ResourcesSection = ResourcesSection()
    eval: RLlibEvalSection = RLlibEvalSection()
    final_eval: RLlibFinalEvalSection = RLlibFinalEvalSection()
    checkpoint_every: int = Field(10, ge=1)  # iterations
    keep_checkpoints: int = Field(3, ge=1)
    export_check: int = Field(300, ge=1)  # observations the ONNX file is checked on
    out: str = "runs/2p_rllib"
    torch_threads: int = Field(1, ge=1)

    @field_validator("opponents")
    @classmethod
    def _opponents_ok(cls, v: dict[str, float]) -> dict[str, float]:
        if not v:
            raise ValueError("opponents must name at least one opponent")
        for name, w in v.items():
            if name not in LEAGUE_OPPONENTS + BOT_OPPONENTS:
                raise ValueError(
                    f"opponents[{name!r}]: unknown; use one of {LEAGUE_OPPONENTS + BOT_OPPONENTS}"
                )
            if not w >= 0:
                raise ValueError(f"opponents[{name!r}]: weight must be >= 0, got {w}")
        if sum(v.values()) <= 0:
            raise ValueError("opponents: the weights must have a positive sum")
        return v

    @model_validator(mode="after")
    def _path_fits(self) -> RLlibConfig:
        if self.env == "vector":
            if self.opponents.get("self", 0) > 0:
                raise ValueError(
                    "opponents['self'] (the learner in every seat) needs env: multi_agent; "
                    "env: vector plays frozen snapshots ('league')"
                )
            if not any(w > 0 for k, w in self.opponents.items() if k in BOT_OPPONENTS):
                raise ValueError("opponents: env: vector needs a bot with a positive weight")
        return self

    @property
    def learner_module(self) -> str:
        """The id of the trained RLModule: ``main`` on the multi-agent path; on the vector path
        (a single-agent env) RLlib's ``DEFAULT_MODULE_ID`` (spelled out: importing Ray here would
        read its settings before the trainer has made them)."""
        return "main" if self.env == "multi_agent" else "default_policy"

    def env_config(self, salt: int = 0) -> dict[str, Any]:
        """What every env copy is built from (plain data: it travels to the env runners)."""
        return {
            "num_players": self.num_players,
            "rules": self.rules_options(),
            "reward": self.reward,
            "episode": self.episode,
            "opponents": dict(self.opponents),
            "league_size": self.league.size,
            "salt": salt,
            "seed": self.seed,
            "features": True,  # the network's features, computed once per observation in the env
        }
