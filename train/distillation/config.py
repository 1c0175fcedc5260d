"""The distillation config schema (``kind: distill``), strict like every trainer's
(``train.common.config``): unknown keys, coercions and bad bot specs fail when the file loads."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from train.common.config import (
    BotSpec,
    Evaluation,
    GameConfig,
    LayerSizes,
    RunFolder,
    Seed,
    Strict,
)


class DistillNetSection(Strict):
    """The structured policy's sizes (``train/network/``; as ``ppo.slot_hidden`` and
    ``ppo.net_arch`` of a PPO config with ``ppo.policy: structured``)."""

    slot_hidden: LayerSizes = Field(default_factory=lambda: [64, 64])
    trunk_hidden: LayerSizes = Field(default_factory=lambda: [128, 128])


class WarmStartSection(Strict):
    """Behaviour cloning of a cheap teacher first (its own games, batched engine), so that the
    network the search labels in iteration 0 already plays well; ``decisions: 0`` skips it."""

    teacher: Literal["random", "heuristic", "expert"] = "expert"  # vectorized: fast to collect
    decisions: int = Field(0, ge=0)
    epochs: int = Field(10, ge=1)
    batch_size: int = Field(512, ge=1)
    learning_rate: float = Field(1e-3, gt=0)


class DistillFitSection(Strict):
    """Each iteration's fit on every search-labelled decision so far (the project's fitting loop)."""

    epochs: int = Field(5, ge=1)
    batch_size: int = Field(512, ge=1)
    learning_rate: float = Field(3e-4, gt=0)


class DistillEvalSection(Evaluation):
    """Duplicate rounds of each iteration's network (batched, quick; the bot file records them)."""

    rounds: int = Field(400, ge=0)  # 0: skip
    seed: Seed = 7


class DistillConfig(GameConfig):
    """One distillation run (``python train/distill.py --config FILE``)."""

    kind: Literal["distill"] = "distill"  # which trainer wrote a run folder
    seed: Seed = 0
    # the bot whose choices the network learns: any spec with act_batch (the search bot)
    teacher: BotSpec = "search:worlds=32,depth=1,keep=3"
    opponent: BotSpec = "expert"  # the other seats while the network plays and the teacher labels
    iterations: int = Field(1, ge=1)
    states: int = Field(20_000, ge=1)  # teacher-labelled decisions collected per iteration
    n_envs: int = Field(256, ge=1)
    net: DistillNetSection = DistillNetSection()
    warm_start: WarmStartSection = WarmStartSection()
    fit: DistillFitSection = DistillFitSection()
    eval: DistillEvalSection = DistillEvalSection()
    export_check: int = Field(300, ge=0)  # observations the ONNX file is checked on
    out: RunFolder = "runs/distill"
    torch_threads: int = Field(1, ge=1)
