"""The sandbox's wire protocol, imported by both sides (``racko_apps.sandbox.bot`` and
``racko_apps.sandbox.child``).

One JSON request and one JSON reply per line over pipes; nothing is unpickled from the child. An
``act`` request carries the observation and mask as the base64 of their bytes (exact, and a tenth
of the cost of a list of floats).
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_LINE = 1 << 16  # bytes in one reply line; a longer line is garbage, not a reply
# A bot's clock per round, by default: ample for the slowest shipped bot (``search``).
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
    round_seconds: the bot's clock: wall-clock seconds for all its requests of one round, so a
      bot slow on purpose cannot stretch a round to minutes.
    memory_mb: the child's address-space limit (RLIMIT_AS), toolkit imports included.
    output_chars: characters the bot may print during one request.
    processes: processes it may run at once (RLIMIT_NPROC, isolated bots only).
    start_seconds: to start Python, import the toolkit and construct the bot (generous: a busy
      machine starts Python slowly).
    cpu_seconds: CPU time over the child's life (RLIMIT_CPU, isolated bots only): a backstop for
      what the wall-clock limits do not see.
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
