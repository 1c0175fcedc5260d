"""A hint a person can read: the bot's move and its confidence as probabilities over the legal moves.

Raw logits mean nothing to a player; the softmax of the masked logits over the legal actions does
("take the discard 53%; draw 47%"). The browser computes it with its JS twin, ``web/js/hint.js``,
kept equal to ``legal_probabilities`` by a differential test. Bots without logits give their
reason instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

LOGITS_OUTPUT = "masked_logits"  # the exported graph's output (docs/bot-format.md)


def legal_probabilities(logits: Sequence[float], mask: Sequence[int]) -> dict[int, float]:
    """Softmax of ``logits`` over the actions ``mask`` allows, in float64 (the reference of
    ``hintProbabilities`` in web/js/hint.js): ``{action: probability}``, ascending actions,
    summing to 1. Illegal actions get no entry, whatever their logit."""
    legal = [a for a in range(len(mask)) if mask[a]]
    if not legal:
        raise ValueError("no legal action to give a probability to")
    values = [float(logits[a]) for a in legal]
    top = max(values)
    weights = [math.exp(v - top) for v in values]
    total = 0.0
    for w in weights:  # summed in action order, as the JS twin does
        total += w
    return {a: w / total for a, w in zip(legal, weights, strict=True)}


def ranked(probabilities: Mapping[int, float], top: int = 3) -> list[tuple[int, float]]:
    """The ``top`` most likely moves, most likely first (ties: the lower action id first)."""
    return sorted(probabilities.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def percent(p: float) -> str:
    """A probability as a person reads it: whole percent, but never 0% or 100% unless exact."""
    if 0 < p < 0.005:
        return "<1%"
    if 0.995 < p < 1:
        return ">99%"
    return f"{round(100 * p)}%"


def bot_probabilities(bot: Any, observation: Mapping[str, Any]) -> dict[int, float] | None:
    """The bot's probabilities over the legal moves, for a bot whose graph has a
    ``masked_logits`` output; None for other bots."""
    session = getattr(bot, "session", None)
    try:
        names = [o.name for o in session.get_outputs()] if session is not None else []
    except AttributeError:
        return None
    if LOGITS_OUTPUT not in names:
        return None
    obs = bot.graph_inputs(observation["observation"])  # its layout version's view
    mask = np.asarray(observation["action_mask"]).astype(bool)
    from agents.onnx_bot import INPUT_MASK, INPUT_OBS

    (logits,) = session.run([LOGITS_OUTPUT], {INPUT_OBS: obs, INPUT_MASK: mask.reshape(1, -1)})
    return legal_probabilities(np.asarray(logits)[0].tolist(), mask.astype(int).tolist())


def confidence_line(probabilities: Mapping[int, float], describe: Callable[[int], str]) -> str:
    """``take the discard 53%; draw 47%``: the likeliest moves with their probabilities."""
    return "; ".join(f"{describe(a)} {percent(p)}" for a, p in ranked(probabilities))
