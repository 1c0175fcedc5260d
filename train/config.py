"""The training config schema: YAML files in ``configs/`` are validated against it.

Unknown keys and bad values are errors that name the key (pydantic, ``extra="forbid"``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from racko_env.config import RulesConfig


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _layer_sizes(name: str, v: list[int]) -> list[int]:
    if not v or any(n < 1 for n in v):
        raise ValueError(f"{name} must be a non-empty list of positive layer sizes")
    return v


class RulesSection(_Strict):
    """Rules options other than the player count (see ``racko_env.RulesConfig``)."""

    empty_pile: Literal["shuffle", "flip"] = "shuffle"
    turn_limit: int = Field(400, ge=1)
    min_run: int = Field(0, ge=0, le=10)
    bonus: bool = False
    partners: bool = False
    target_score: int = Field(500, ge=1)


class PPOSection(_Strict):
    """MaskablePPO hyperparameters (names as in sb3-contrib)."""

    learning_rate: float = Field(3e-4, gt=0)
    n_steps: int = Field(512, ge=8)  # per env, per rollout
    batch_size: int = Field(256, ge=8)
    n_epochs: int = Field(4, ge=1)
    gamma: float = Field(0.995, gt=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    clip_range: float = Field(0.2, gt=0)
    ent_coef: float = Field(0.01, ge=0)
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    target_kl: float | None = Field(None, gt=0)  # stop an update's epochs past this KL
    # "flat": an MLP over the raw observation (the baseline); "structured": train/policy.py
    policy: Literal["flat", "structured"] = "flat"
    net_arch: list[int] = Field(default_factory=lambda: [128, 128])  # structured: the trunk
    slot_hidden: list[int] = Field(default_factory=lambda: [64, 64])  # structured: per slot
    activation: Literal["tanh", "relu"] = "tanh"  # flat only (structured uses ReLU)

    @field_validator("net_arch", "slot_hidden")
    @classmethod
    def _layers_positive(cls, v: list[int], info: Any) -> list[int]:
        return _layer_sizes(info.field_name, v)


class SelfPlaySection(_Strict):
    """Self-play snapshots: a frozen copy of the learner joins the pool every ``every_updates``."""

    every_updates: int = Field(10, ge=1)  # PPO updates (rollouts) between snapshots
    pool_size: int = Field(10, ge=1)  # newest snapshots kept; older ones drop out
    latest_weight: float = Field(0.5, ge=0, le=1)  # share of the self-play weight for the newest


class PretrainSection(_Strict):
    """The warm start before PPO (train/warmstart.py): clone the teacher's moves (actor only),
    then fit the critic alone to the returns the clone gets against the training opponents."""

    teacher: str = "expert"
    decisions: int = Field(0, ge=0)  # teacher decisions to imitate; 0: no cloning
    epochs: int = Field(30, ge=1)
    batch_size: int = Field(256, ge=1)
    learning_rate: float = Field(1e-3, gt=0)
    critic_steps: int = Field(0, ge=0)  # env steps played for the critic warm-up; 0: none
    critic_epochs: int = Field(5, ge=1)


class EvalSection(_Strict):
    """Periodic evaluation: duplicate rounds of the deterministic policy against fixed bots
    (``train.batched_duplicate``; 1,000 rounds give about +-3 points, 300 about +-5.5)."""

    every_steps: int = Field(50_000, ge=1)
    rounds: int = Field(1000, ge=1)
    opponents: list[str] = Field(default_factory=lambda: ["heuristic", "expert"])
    seed: int = 12345


class FinalEvalSection(_Strict):
    """The evaluation written into the exported manifest (duplicate rounds, batched engine)."""

    rounds: int = Field(0, ge=0)  # 0: skip
    opponents: list[str] = Field(default_factory=lambda: ["heuristic", "expert"])
    seed: int = 0
    workers: int = Field(1, ge=1)


class _GameConfig(_Strict):
    """What every run config starts with: the game it trains for (its bot plays only that)."""

    num_players: int = Field(2, ge=2, le=4)
    rules: RulesSection = RulesSection()

    @model_validator(mode="after")
    def _rules_valid(self) -> _GameConfig:
        try:
            self.rules_config()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"rules: {exc}") from exc
        return self

    def rules_config(self) -> RulesConfig:
        return RulesConfig(num_players=self.num_players, **self.rules.model_dump())

    def rules_options(self) -> dict[str, Any]:
        """Rules options as keyword arguments for envs and bots (without ``num_players``)."""
        return self.rules.model_dump()


class TrainConfig(_GameConfig):
    """One training run (``python train/ppo.py --config FILE``)."""

    reward: Literal["win", "score"] = "win"
    episode: Literal["round", "game"] = "round"
    shaping: float = Field(0.0, ge=0)  # dense reward for rack progress (train/shaping.py)
    shaping_kind: Literal["zone", "ascending"] = "zone"
    seed: int = 0
    total_steps: int = Field(1_000_000, ge=1)
    n_envs: int = Field(8, ge=1)
    vec_env: Literal["batched", "subproc", "dummy"] = "subproc"
    # opponents: spec -> weight; the special spec "self" is the self-play snapshot pool
    opponents: dict[str, float] = Field(default_factory=lambda: {"heuristic": 1.0})
    selfplay: SelfPlaySection = SelfPlaySection()
    ppo: PPOSection = PPOSection()
    pretrain: PretrainSection = PretrainSection()
    # warm start: a saved model (.zip from a run) whose policy weights the fresh model starts from
    init_from: str | None = None
    eval: EvalSection = EvalSection()
    final_eval: FinalEvalSection = FinalEvalSection()
    checkpoint_every: int = Field(100_000, ge=1)
    out: str = "runs/default"
    torch_threads: int = Field(1, ge=1)
    progress_bar: bool = True

    @field_validator("opponents")
    @classmethod
    def _weights_ok(cls, v: dict[str, float]) -> dict[str, float]:
        if not v:
            raise ValueError("opponents must name at least one opponent")
        for spec, w in v.items():
            if not w >= 0:
                raise ValueError(f"opponents[{spec!r}]: weight must be >= 0, got {w}")
        if sum(v.values()) <= 0:
            raise ValueError("opponents: the weights must have a positive sum")
        return v

    @model_validator(mode="after")
    def _run_valid(self) -> TrainConfig:
        if self.init_from is not None and self.pretrain.decisions > 0:
            raise ValueError(
                "init_from and pretrain.decisions are both set: warm start from one or the other"
            )
        if self.ppo.batch_size > self.ppo.n_steps * self.n_envs:
            raise ValueError(
                f"ppo.batch_size ({self.ppo.batch_size}) exceeds one rollout "
                f"(ppo.n_steps * n_envs = {self.ppo.n_steps * self.n_envs})"
            )
        return self


class ValueNetSection(_Strict):
    """The rack value network (``train.afterstate.RackValueNet``): hidden layer sizes, and the
    planner settings (gap power, width power) whose plan costs are input features."""

    hidden: list[int] = Field(default_factory=lambda: [128, 128])
    plans: list[tuple[float, float]] = Field(default_factory=lambda: [(2.0, 1.1)])

    @field_validator("hidden")
    @classmethod
    def _hidden_positive(cls, v: list[int]) -> list[int]:
        return _layer_sizes("hidden", v)

    @field_validator("plans")
    @classmethod
    def _plans_ok(cls, v: list[tuple[float, float]]) -> list[tuple[float, float]]:
        if not v or any(g <= 0 or w < 0 for g, w in v):
            raise ValueError(
                "plans must list at least one [gap_power, width_power] pair, gap_power > 0 and "
                "width_power >= 0"
            )
        return v


class ValueFitSection(_Strict):
    """Least-squares fit of the value net to the recorded turn counts (each iteration)."""

    epochs: int = Field(10, ge=1)
    batch_size: int = Field(2048, ge=1)
    learning_rate: float = Field(1e-3, gt=0)


class ValueEvalSection(_Strict):
    """Win rates of each iteration's policy (batched, quick; the bot file records them)."""

    rounds: int = Field(1000, ge=0)  # 0: skip
    opponents: list[str] = Field(default_factory=lambda: ["heuristic", "expert"])
    seed: int = 7


class ValueConfig(_GameConfig):
    """One value-iteration run (``python train/value_iteration.py --config FILE``)."""

    seed: int = 0
    teacher: Literal["random", "heuristic", "expert"] = "expert"  # plays iteration 0
    iterations: int = Field(1, ge=1)
    states: int = Field(300_000, ge=1)  # start-of-turn racks recorded per iteration
    opponent: str = "random"  # the other seats while recording (rarely end the round first)
    td_steps: int = Field(0, ge=0)  # 0: fit whole-round turn counts; n: n turns + previous value
    n_envs: int = Field(512, ge=1)
    net: ValueNetSection = ValueNetSection()
    fit: ValueFitSection = ValueFitSection()
    eval: ValueEvalSection = ValueEvalSection()
    export_check: int = Field(300, ge=0)  # observations the ONNX file is checked on
    out: str = "runs/value"
    torch_threads: int = Field(1, ge=1)


class ConfigError(ValueError):
    """A config file that does not match the schema; the message names every bad key."""


def _format(exc: ValidationError, source: str) -> str:
    lines = [f"invalid training config {source}:"]
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        lines.append(f"  {key}: {msg}")
    return "\n".join(lines)


def parse_config(
    data: dict[str, Any], source: str = "<dict>", schema: type[BaseModel] = TrainConfig
) -> Any:
    """Validate a config dict against ``schema``; raise ``ConfigError`` naming every bad key."""
    if not isinstance(data, dict):
        raise ConfigError(f"invalid training config {source}: expected a mapping at the top level")
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format(exc, source)) from None


def load_config(path: str | Path, schema: type[BaseModel] = TrainConfig, **overrides: Any) -> Any:
    """Read a YAML config, apply top-level overrides (those not None), and validate."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"invalid training config {path}: expected a mapping at the top level")
    data.update({k: v for k, v in overrides.items() if v is not None})
    return parse_config(data, str(path), schema)
