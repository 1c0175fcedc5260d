"""The sandbox's wire protocol: what the grader and a sandboxed bot's child say to each other.

One JSON request and one JSON reply per line over pipes; nothing is ever unpickled from the child,
which runs code the parent must not trust. An ``act`` request carries the seat's observation and
action mask as the base64 of their bytes (exact, and a tenth of the cost of a list of floats: the
protocol's cost is per move). Both sides import this module: the parent (``racko_apps.sandbox``)
and the child (``racko_apps.sandbox_child``), so it holds only what both need, the limits the
parent sends and the failure it raises included.
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_LINE = 1 << 16  # bytes in one reply line; a longer line is garbage, not a reply
# A bot's clock per round, by default: the slowest shipped bot (``search``) uses about 1-3 s of a
# 2-player round and about 6 s of a 4-player one on a busy 2-core machine.
DEFAULT_ROUND_SECONDS = 30.0
OBS_DTYPE, MASK_DTYPE = np.dtype("<f4"), np.dtype("i1")  # an act request's arrays, as bytes


def pack(values: Any, dtype: np.dtype) -> str:
    """An array as the base64 of its bytes in ``dtype`` (one JSON string)."""
    data = np.ascontiguousarray(values, dtype=dtype).tobytes()
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def unpack(text: str, dtype: np.dtype) -> np.ndarray:
    """``pack``'s array back (a writable copy: a bot may change what it is given)."""
    data = binascii.a2b_base64(text, strict_mode=True)  # base64's alphabet only, or an error
    return np.frombuffer(bytearray(data), dtype=dtype)


def act_request(observation: Mapping[str, Any], **fields: Any) -> dict[str, Any]:
    """An ``act`` request for ``observation``: its arrays' bytes, base64 in the JSON line.
    ``fields``: more of the request (a table's number)."""
    return {
        **fields,
        "cmd": "act",
        "observation": pack(observation["observation"], OBS_DTYPE),
        "action_mask": pack(observation["action_mask"], MASK_DTYPE),
    }


def reply_action(reply: Mapping[str, Any]) -> tuple[int | None, str]:
    """An act reply's action, or None and why it is not one."""
    action = reply.get("action")
    if isinstance(action, bool) or not isinstance(action, int):
        return None, f"returned {reply.get('shown') or repr(action)}, not an action id"
    return action, ""


def shorten(data: bytes, limit: int = 60) -> str:
    """A child's garbage, shown in a one-line failure."""
    text = data.decode(errors="replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def one_line(err: BaseException) -> str:
    """An exception as one line of at most about 200 characters (a report's failure line)."""
    text = " ".join(str(err).split())
    if len(text) > 200:
        text = text[:200] + "..."
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


class BotFailureError(RuntimeError):
    """A sandboxed bot broke. ``kind`` is one of: start, crash, timeout, illegal, garbage,
    output, memory, exited, clock; ``str()`` is a one-line reason naming the bot."""

    def __init__(self, bot: str, kind: str, reason: str) -> None:
        super().__init__(f"{bot}: {reason}")
        self.bot = bot
        self.kind = kind
        self.reason = reason


class IsolationUnavailableError(RuntimeError):
    """The isolation asked for cannot run here (bubblewrap missing or without namespaces, the
    user backend without root); ``str()`` is one line saying what to do instead."""


@dataclass(frozen=True)
class Limits:
    """What a sandboxed bot may use.

    move_seconds: wall-clock seconds to answer one request (act, reset, seed), IPC included.
    round_seconds: the bot's clock: wall-clock seconds it may use over one round, all its
      requests together (IPC included), from the ``reset`` (or ``seed``) that starts the round.
      The move limit alone lets a bot that is slow on purpose (just under it on every move)
      stretch one round to minutes; the clock bounds what a round of it costs everyone.
    memory_mb: the child's address-space limit (RLIMIT_AS), toolkit imports included.
    output_chars: characters the bot may print during one request.
    processes: processes the bot may run at once (RLIMIT_NPROC; counted per sandbox where
      bubblewrap makes a user namespace, per user otherwise; root is exempt, and there the
      time limit and the PID namespace end a fork bomb).
    start_seconds: to start Python, import the toolkit and construct the bot (generous: a loaded
      machine starts Python slowly, and that is not the bot's fault).
    cpu_seconds: CPU time the child may use over its whole life (RLIMIT_CPU; isolated bots
      only), all its threads together: a backstop for what the clocks, which measure wall
      time, do not see.
    """

    move_seconds: float = 1.0
    round_seconds: float = DEFAULT_ROUND_SECONDS
    memory_mb: int = 1024
    output_chars: int = 100_000
    start_seconds: float = 60.0
    processes: int = 256
    cpu_seconds: int = 3600

    def __post_init__(self) -> None:
        for name in ("move_seconds", "round_seconds", "start_seconds"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        for name in ("memory_mb", "output_chars", "processes", "cpu_seconds"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
