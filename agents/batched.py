"""Bots that decide for a whole batch of games in one call (the batched VecEnv's opponents).

A ``BatchPolicy`` maps observations float32 [B, 177] and legal-action masks bool [B, 14] to one
action id per row. ``BatchRandom`` and ``BatchHeuristic`` are vectorized twins of the ``random``
and ``heuristic`` bots (``BatchHeuristic`` makes exactly the decisions ``HeuristicBot`` makes on
the same observation); ``BotBatch`` runs any per-game ``Bot`` (e.g. ``expert`` or an ONNX bot) row
by row; ``ModelPolicy`` plays a (Maskable)PPO model, e.g. a self-play snapshot, in one forward pass.
``load_batch(spec, ...)`` gets one from the same specs as ``agents.load``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from racko_env.actions import DISCARD, DRAW_PILE, KEEP, NUM_ACTIONS, TAKE_DISCARD
from racko_env.observation import DISCARD_TOP, HELD, OBS_SIZE, OPP_PRESENT, PHASE, RACK

_DECK = np.array([40, 50, 60])


@runtime_checkable
class BatchPolicy(Protocol):
    """Decides for many games at once: one legal action id per row."""

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """obs float32 [B, 177], masks bool [B, 14] -> int array [B] of legal action ids."""
        ...


def check_batch(obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shapes checked, masks as bool; a row without a legal action is an error (never guessed)."""
    obs = np.asarray(obs)
    masks = np.asarray(masks).astype(bool, copy=False)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"obs must have shape (B, {OBS_SIZE}), got {obs.shape}")
    if masks.shape != (obs.shape[0], NUM_ACTIONS):
        raise ValueError(
            f"masks must have shape ({obs.shape[0]}, {NUM_ACTIONS}), got {masks.shape}"
        )
    empty = ~masks.any(axis=1)
    if empty.any():
        raise ValueError(
            f"rows {np.flatnonzero(empty).tolist()} have no legal action (all-False mask): "
            "those seats are not on turn"
        )
    return obs, masks


class BatchRandom:
    """Uniform over the legal actions of each row; ``seed`` makes it reproducible."""

    name = "random"

    def __init__(self, num_players: int = 2, seed: int | None = None, **rules_options: Any) -> None:
        self.num_players = num_players
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        _, masks = check_batch(obs, masks)
        # The legal action with the largest uniform key: uniform among the legal ones.
        keys = self.rng.random(masks.shape)
        keys[~masks] = -1.0
        return keys.argmax(axis=1)


class BatchHeuristic:
    """The ``heuristic`` bot (slot zones) for a batch: the same decision on the same observation.

    Card c belongs in zone slot floor((c-1) * 10 / N). Draw phase: take the discard if it fills its
    zone slot and that slot holds a card of another zone, else draw. Keep a drawn card on the same
    test, else discard it. Place a card in its zone slot.
    """

    name = "heuristic"

    def __init__(self, num_players: int = 2, **rules_options: Any) -> None:
        self.num_players = num_players  # the player count is read from each observation anyway

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = check_batch(obs, masks)
        b = len(obs)
        rows = np.arange(b)
        players = 1 + np.rint(obs[:, OPP_PRESENT].sum(axis=1, dtype=np.float64)).astype(np.intp)
        n = _DECK[players - 2][:, None]
        phase_hot = obs[:, PHASE]
        if (phase_hot.max(axis=1) <= 0.5).any():
            bad = np.flatnonzero(phase_hot.max(axis=1) <= 0.5).tolist()
            raise ValueError(f"rows {bad} ask for no decision (the seat is not on turn)")
        phase = phase_hot.argmax(axis=1)
        cards = np.rint(obs[:, [HELD, DISCARD_TOP]].astype(np.float64) * n).astype(np.intp)
        rack = np.rint(obs[:, RACK].astype(np.float64) * n).astype(np.intp)
        held, top = cards[:, 0], cards[:, 1]
        n = n[:, 0]

        def zone(c: np.ndarray) -> np.ndarray:
            return (c - 1) * 10 // n

        def improves(c: np.ndarray) -> np.ndarray:
            slot = np.minimum(np.maximum(zone(c), 0), 9)  # no held card (0) -> slot 0, unused
            return zone(rack[rows, slot]) != slot

        take = (top > 0) & masks[:, TAKE_DISCARD] & improves(top)
        draw_choice = np.where(take, TAKE_DISCARD, DRAW_PILE)
        keep_choice = np.where(improves(held), KEEP, DISCARD)
        place_choice = np.minimum(np.maximum(zone(held), 0), 9)
        return np.choose(phase, [draw_choice, keep_choice, place_choice])


class BotBatch:
    """Any per-game bot (``reset()``/``act(obs_dict)``) run row by row, e.g. ``expert``.

    One bot instance decides every row, so it suits bots that decide from the observation alone
    (as the ``Bot`` contract asks); ``reset`` is passed on.
    """

    def __init__(self, bot: Any) -> None:
        if not callable(getattr(bot, "act", None)):
            raise TypeError(f"BotBatch needs a bot with act(observation), got {bot!r}")
        self.bot = bot
        self.name = getattr(bot, "name", type(bot).__name__)

    def reset(self) -> None:
        if callable(getattr(self.bot, "reset", None)):
            self.bot.reset()

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = check_batch(obs, masks)
        masks8 = masks.astype(np.int8)
        act = self.bot.act
        return np.array(
            [act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks8, strict=True)],
            dtype=np.intp,
        ).reshape(len(obs))


class ModelPolicy:
    """A MaskablePPO model (or anything with SB3's ``predict(obs, action_masks=...)``) as a batch.

    One forward pass for the whole batch; ``deterministic=False`` samples like training does.
    """

    def __init__(self, model: Any, deterministic: bool = False, name: str = "model") -> None:
        if not callable(getattr(model, "predict", None)):
            raise TypeError(f"ModelPolicy needs a model with predict(), got {model!r}")
        self.model = model
        self.deterministic = deterministic
        self.name = name

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = check_batch(obs, masks)
        actions, _ = self.model.predict(obs, action_masks=masks, deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.intp).reshape(len(obs))


def load_batch(
    spec: str | Path | Any,
    num_players: int = 2,
    *,
    seed: int | None = None,
    **rules_options: Any,
) -> BatchPolicy:
    """A batch policy from a spec: ``"random"`` and ``"heuristic"`` are vectorized; a
    ``BatchPolicy`` object is returned as is; anything else goes through ``agents.load`` (names,
    ``"module:Class"``, ``.onnx`` files, bot objects) and is run row by row."""
    if callable(getattr(spec, "act_batch", None)):
        return spec
    if isinstance(spec, str) and spec == "random":
        _validate(num_players, rules_options)
        return BatchRandom(num_players, seed=seed)
    if isinstance(spec, str) and spec == "heuristic":
        _validate(num_players, rules_options)
        return BatchHeuristic(num_players)
    import agents

    return BotBatch(agents.load(spec, num_players, seed=seed, **rules_options))


def _validate(num_players: int, rules_options: dict[str, Any]) -> None:
    from racko_env.config import RulesConfig

    RulesConfig.from_dict({"num_players": num_players, **rules_options})
