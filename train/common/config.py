"""The training config schema: YAML files in ``configs/`` are validated against it, up front.

Unknown keys, types (pydantic strict mode: ``'yes'`` is not ``True``), ranges, duplicate YAML
keys, an empty file and every bot the run will seat are checked when the file is loaded, so a typo
fails here and not hours later, in one line naming the file and the key (``ConfigError``). Bot
specs are checked as ``agents.load`` resolves them, without loading heavy files; a
``module:Class`` spec imports its module, which runs its code (such specs are code by design)."""

from __future__ import annotations

import importlib
import math
import re
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from racko_env.config import RulesConfig, check_option
from racko_eval.course_files import load_yaml

MAX_SEED = 2**32 - 1
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]
SELF = "self"  # the opponents key that stands for the self-play snapshot pool


class Strict(BaseModel):
    """Every section of every trainer's config: unknown keys, coercions ('2' for 2) and NaN/inf
    are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def check_bot_spec(spec: str) -> str:
    """Raise ValueError unless ``spec`` names a bot ``agents.load`` can build (cheaply checked)."""
    from agents.loader import BOT_FILE_SUFFIXES, BUILTIN_BOTS, SEARCH_WITH_OPTIONS, SHIPPED_BOTS

    if not spec:
        raise ValueError("a bot spec must not be empty")
    if spec in BUILTIN_BOTS or spec in SHIPPED_BOTS:  # racko_2p: agents.load knows it by name
        return spec
    if spec.startswith(SEARCH_WITH_OPTIONS):
        from agents.search import parse_options

        parse_options(spec[len(SEARCH_WITH_OPTIONS) :])  # a bad option is one line naming it
        return spec
    if spec.lower().endswith(BOT_FILE_SUFFIXES) or "/" in spec or "\\" in spec:
        path = Path(spec)
        if not path.is_file():
            raise ValueError(f"bot file {spec!r} does not exist")
        if path.suffix.lower() not in BOT_FILE_SUFFIXES:
            raise ValueError(f"bot file {spec!r} is not one of {list(BOT_FILE_SUFFIXES)}")
        if not path.with_suffix(".json").is_file():
            raise ValueError(f"bot file {spec!r} has no manifest {path.with_suffix('.json')}")
        return spec
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        if not module_name or not attr:
            raise ValueError(f"bot class path {spec!r} must look like 'module:Class'")
        try:
            target: Any = importlib.import_module(module_name)
        except ImportError as exc:
            raise ValueError(
                f"bot {spec!r}: cannot import module {module_name!r} ({exc})"
            ) from None
        for part in attr.split("."):
            if not hasattr(target, part):
                raise ValueError(f"bot {spec!r}: module {module_name!r} has no {attr!r}")
            target = getattr(target, part)
        if not callable(target):
            raise ValueError(f"bot {spec!r} is not a class or factory")
        return spec
    raise ValueError(
        f"unknown bot {spec!r}; known bots are {sorted(BUILTIN_BOTS) + sorted(SHIPPED_BOTS)}, "
        "a 'module:Class' path or "
        f"a bot file ({', '.join(BOT_FILE_SUFFIXES)})"
    )


def _bots(v: list[str]) -> list[str]:
    for spec in v:
        check_bot_spec(spec)
    return v


BotSpec = Annotated[str, AfterValidator(check_bot_spec)]  # a bot the run plays: checked at load
BotSpecs = Annotated[list[str], AfterValidator(_bots)]


def _layer_sizes(v: list[int], info: ValidationInfo) -> list[int]:
    if not v or any(n < 1 for n in v):
        raise ValueError(f"{info.field_name} must be a non-empty list of positive layer sizes")
    return v


def _out_folder(v: str) -> str:
    if not v.strip():
        raise ValueError("out must name a run folder, got an empty string")
    return v


LayerSizes = Annotated[list[int], AfterValidator(_layer_sizes)]  # a network's hidden layers
RunFolder = Annotated[str, Field(min_length=1), AfterValidator(_out_folder)]  # a config's out


def _rules_field(name: str) -> tuple[Any, Any]:
    """A pydantic field for rules option ``name``, from its one declaration in ``RulesConfig``
    (type, choices, default, range, help); RulesConfig then checks what needs the other options."""
    f = next(f for f in dataclass_fields(RulesConfig) if f.name == name)
    meta = f.metadata
    kind: Any = {"int": int, "bool": bool, "str": str}[str(f.type)]
    if meta["choices"] is not None:
        kind = Literal[meta["choices"]]
    low = meta["off"] if meta["off"] is not None else meta["minimum"]
    return kind, Field(f.default, ge=low, le=meta["maximum"], description=meta["help"])


RulesSection = create_model(
    "RulesSection",
    __base__=Strict,
    __doc__="Rules options other than the player count (see ``racko_env.RulesConfig``).",
    **{
        f.name: _rules_field(f.name)
        for f in dataclass_fields(RulesConfig)
        if f.name != "num_players"
    },
)


class PPOSection(Strict):
    """MaskablePPO hyperparameters (names as in sb3-contrib)."""

    learning_rate: float = Field(3e-4, gt=0)
    anneal_lr: bool = False  # decay learning_rate linearly to 0 at total_steps (CleanRL's name)
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
    # "flat": an MLP over the raw observation (the baseline); "structured": train/sb3/policy.py
    policy: Literal["flat", "structured"] = "flat"
    net_arch: LayerSizes = Field(default_factory=lambda: [128, 128])  # structured: the trunk
    slot_hidden: LayerSizes = Field(default_factory=lambda: [64, 64])  # structured: per slot
    activation: Literal["tanh", "relu"] = "tanh"  # flat only (structured uses ReLU)


class SelfPlaySection(Strict):
    """Self-play snapshots: a frozen copy of the learner joins the pool every ``every_updates``."""

    every_updates: int = Field(10, ge=1)  # PPO updates (rollouts) between snapshots
    pool_size: int = Field(10, ge=1)  # newest snapshots kept; older ones drop out
    latest_weight: float = Field(0.5, ge=0, le=1)  # share of the self-play weight for the newest


class PretrainSection(Strict):
    """The warm start before PPO (train/sb3/warmstart.py): clone the teacher's moves (actor only),
    then fit the critic alone to the returns the clone gets against the training opponents."""

    teacher: BotSpec = "expert"
    decisions: int = Field(0, ge=0)  # teacher decisions to imitate; 0: no cloning
    epochs: int = Field(30, ge=1)
    batch_size: int = Field(256, ge=1)
    learning_rate: float = Field(1e-3, gt=0)
    critic_steps: int = Field(0, ge=0)  # env steps played for the critic warm-up; 0: none
    critic_epochs: int = Field(5, ge=1)


class Evaluation(Strict):
    """What every evaluation section has: the bots to evaluate against, checked at load."""

    opponents: BotSpecs = Field(default_factory=lambda: ["heuristic", "expert"])


class EvalSection(Evaluation):
    """Periodic evaluation: duplicate rounds of the deterministic policy against fixed bots
    (``racko_eval.quick_eval``; 1,000 rounds give about +-3 points, 300 about +-5.5)."""

    every_steps: int = Field(50_000, ge=1)
    rounds: int = Field(1000, ge=1)
    seed: Seed = 12345


class FinalEvalSection(Evaluation):
    """The evaluation written into the exported manifest (duplicate rounds, batched engine)."""

    rounds: int = Field(0, ge=0)  # 0: skip
    seed: Seed = 0


class GameConfig(Strict):
    """What every run config starts with: the game it trains for (its bot plays only that)."""

    num_players: int = _rules_field("num_players")[1]
    rules: RulesSection = RulesSection()

    @model_validator(mode="after")
    def _rules_valid(self) -> GameConfig:
        """The checks that read more than one option (a deck too small for the players'
        racks, ...): RulesConfig's message, which ``_format`` files under the option it names."""
        try:
            self.rules_config()
        except (TypeError, ValueError) as exc:
            raise ValueError(str(exc)) from exc
        return self

    def rules_config(self) -> RulesConfig:
        return RulesConfig(num_players=self.num_players, **self.rules.model_dump())

    def rules_options(self) -> dict[str, Any]:
        """Rules options as keyword arguments for envs and bots (without ``num_players``)."""
        return self.rules.model_dump()


class TrainConfig(GameConfig):
    """One training run (``python train/ppo.py --config FILE``)."""

    kind: Literal["ppo"] = "ppo"  # which trainer wrote a run folder (train/sb3/export.py reads it)
    # "turns": -1 per turn, solitaire's fewest-turns objective (num_players: 1 needs it)
    reward: Literal["win", "score", "turns"] = "win"
    episode: Literal["round", "game"] = "round"
    seed: Seed = 0
    total_steps: int = Field(1_000_000, ge=1)
    n_envs: int = Field(8, ge=1)
    # opponents: spec -> weight; the special spec "self" is the self-play snapshot pool
    opponents: dict[str, float] = Field(default_factory=lambda: {"heuristic": 1.0})
    selfplay: SelfPlaySection = SelfPlaySection()
    ppo: PPOSection = PPOSection()
    pretrain: PretrainSection = PretrainSection()
    # warm start: a run's final_model.pt (weights only) whose policy the fresh model starts from
    init_from: str | None = None
    eval: EvalSection = EvalSection()
    final_eval: FinalEvalSection = FinalEvalSection()
    checkpoint_every: int = Field(100_000, ge=1)
    out: RunFolder = "runs/default"
    torch_threads: int = Field(1, ge=1)
    # torch threads for PPO's gradient steps (None: torch_threads): large matrix products that
    # two threads share well, where the rollout's small forwards do not
    update_threads: int | None = Field(None, ge=1)
    progress_bar: bool = True

    @field_validator("opponents")
    @classmethod
    def _weights_ok(cls, v: dict[str, float]) -> dict[str, float]:
        if not v:
            raise ValueError("opponents must name at least one opponent")
        for spec, w in v.items():
            if not (math.isfinite(w) and w > 0):
                raise ValueError(f"opponents[{spec!r}]: weight must be finite and > 0, got {w}")
            if spec != SELF:
                check_bot_spec(spec)
        return v

    @field_validator("init_from")
    @classmethod
    def _init_from_ok(cls, v: str | None) -> str | None:
        if v is not None and not v.endswith(".pt"):
            raise ValueError(
                f"init_from must be a run's final_model.pt (weights only), got {v!r}; "
                "pickled .zip models are not loaded"
            )
        return v

    @model_validator(mode="after")
    def _run_valid(self) -> TrainConfig:
        if self.init_from is not None and self.pretrain.decisions > 0:
            raise ValueError(
                "init_from and pretrain.decisions are both set: warm start from one or the other"
            )
        if (self.num_players == 1) != (self.reward == "turns"):
            raise ValueError(
                f"reward: {self.reward!r} with num_players {self.num_players}: solitaire "
                "(num_players: 1) trains on reward: turns (-1 per turn) and only it does"
            )
        if self.ppo.batch_size > self.ppo.n_steps * self.n_envs:
            raise ValueError(
                f"ppo.batch_size ({self.ppo.batch_size}) exceeds one rollout "
                f"(ppo.n_steps * n_envs = {self.ppo.n_steps * self.n_envs})"
            )
        return self


class ConfigError(ValueError):
    """A config file that does not match the schema; the one-line message names every bad key."""


_RULES_FIELDS = {f.name: f for f in dataclass_fields(RulesConfig)}
_RULES_OPTION = re.compile(r"^rules option '(\w+)'")


def _rules_message(err: Any) -> str | None:
    """RulesConfig's own words for a rules option pydantic refused by its range or choices
    ("rules option 'rack_size' must be between 3 and 10, got 2"), else None."""
    loc = tuple(err["loc"])
    name = loc[-1] if loc and loc in (("num_players",), ("rules", loc[-1])) else None
    if name not in _RULES_FIELDS or err["type"] not in ("greater_than_equal", "less_than_equal"):
        return None
    try:
        check_option(_RULES_FIELDS[name], err["input"], None)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


def _format(exc: ValidationError, source: str) -> str:
    """Every problem of a config in one line, each under its key; a rules option's in
    RulesConfig's words (the wording of every other command)."""
    problems = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = _rules_message(err) or err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        named = _RULES_OPTION.match(msg)
        if named and key == "(top level)" and named.group(1) in _RULES_FIELDS:
            key = ("" if named.group(1) == "num_players" else "rules.") + named.group(1)
        problems.append(f"{key}: {' '.join(msg.split())}")
    return f"invalid config {source}: " + "; ".join(problems)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """A config file as a dict: UTF-8, valid YAML, no duplicate keys, a non-empty mapping."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
            f"offset {exc.start})"
        ) from None
    try:
        data = load_yaml(text, unique_keys=True)
    except yaml.YAMLError as exc:
        detail = " ".join(str(exc).split())
        raise ConfigError(f"config file {path} is not valid YAML: {detail}") from None
    if data is None:
        raise ConfigError(
            f"config file {path} is empty (no keys, only comments, or null): write the settings "
            "out, e.g. start from configs/smoke.yaml"
        )
    if not isinstance(data, dict):
        raise ConfigError(f"invalid config {path}: expected a mapping at the top level")
    return data


def parse_config(
    data: dict[str, Any], source: str = "<dict>", schema: type[BaseModel] = TrainConfig
) -> Any:
    """Validate a config dict against ``schema``; raise ``ConfigError`` naming every bad key."""
    if not isinstance(data, dict):
        raise ConfigError(f"invalid config {source}: expected a mapping at the top level")
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format(exc, source)) from None


def load_config(path: str | Path, schema: type[BaseModel] = TrainConfig, **overrides: Any) -> Any:
    """Read a YAML config, apply top-level overrides (those not None), and validate."""
    data = read_yaml(path)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return parse_config(data, str(path), schema)


def config_data(cfg: BaseModel) -> dict[str, Any]:
    """A validated config as plain data (what ``config.yaml`` and checkpoints store)."""
    return cfg.model_dump(mode="json")


def config_differences(a: dict[str, Any], b: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two config dicts (for resume checks)."""
    keys = []
    for k in sorted(set(a) | set(b)):
        va, vb = a.get(k), b.get(k)
        if isinstance(va, dict) and isinstance(vb, dict):
            keys += config_differences(va, vb, f"{prefix}{k}.")
        elif va != vb:
            keys.append(f"{prefix}{k}")
    return keys
