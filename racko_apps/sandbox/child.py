"""The sandboxed bot's side: a child process that loads the bot and answers the parent.

The first request (``init``) says what to load and under which limits; the child applies them
(address space, processes, dropping root), silences the bot's output (counted, not kept: replies
go to a private copy of file descriptor 1), loads the bot, and answers one line per request.
"""

from __future__ import annotations

import json
import operator
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from racko_apps.sandbox.proc import set_death_signal
from racko_apps.sandbox.toolkit import BUILTIN_MODULES, TOOLKIT_PACKAGES, matches, refusal
from racko_apps.sandbox.wire import MASK_DTYPE, OBS_DTYPE, one_line, unpack

NOBODY = 65534  # the uid and gid an isolated bot of a root grader runs as (bubblewrap)


class _CountingSink:
    """Stands in for sys.stdout/sys.stderr in the child: counts characters, keeps none."""

    def __init__(self) -> None:
        self.count = 0

    def write(self, text: str) -> int:
        self.count += len(text)
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False


class _GraphAllocationError(MemoryError):
    """An exported bot's graph failed to allocate ``size`` (onnxruntime's own error, as memory)."""

    def __init__(self, size: str) -> None:
        super().__init__(size)
        self.size = size


_ALLOCATION = re.compile(r"Failed to allocate memory for requested buffer of size (\d+)")


def failed_allocation(err: BaseException) -> str | None:
    """The size an exported bot's graph failed to allocate, as ``"64 GiB"`` (onnxruntime raises
    its own error, not MemoryError); None for any other error."""
    found = _ALLOCATION.search(str(err))
    if found is None:
        return None
    size = float(found.group(1))
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.3g} {unit}"
        size /= 1024
    return None


class HiddenModuleError(ImportError):
    """A submission reached a toolkit module (or shipped bot) its ``allow`` list does not show;
    ``str()`` is the one line naming the rule (``toolkit.refusal``)."""


class _Guard:
    """A meta path finder that refuses a toolkit module outside ``visible`` with one line naming
    the rule (the staged toolkit does not hold it anyway)."""

    def __init__(self, visible: frozenset[str], allow: tuple[str, ...]) -> None:
        self.visible, self.allow = visible, allow

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.partition(".")[0] in TOOLKIT_PACKAGES and name not in self.visible:
            raise HiddenModuleError(refusal(name, self.allow))

    def bot_module(self, spec: Any) -> str | None:
        """The hidden module (or shipped file) a built-in or shipped bot's name would load."""
        if not isinstance(spec, str):
            return None
        name = "search" if spec.startswith("search:") else spec
        if name in BUILTIN_MODULES:
            module = BUILTIN_MODULES[name]
            return None if module in self.visible else module
        if re.fullmatch(r"racko_\d+p", name):
            module = f"agents.pretrained.{name}"
            return None if matches(module, self.allow) else module
        return None


def _guard_toolkit(visible: list[str], allow: list[str]) -> None:
    """Refuse, in one line, the imports and the ``agents.load`` calls ``allow`` does not allow."""
    guard = _Guard(frozenset(visible), tuple(allow))
    sys.meta_path.insert(0, guard)
    import agents
    import agents.loader

    real = agents.loader.load

    def load(spec: Any, *args: Any, **kwargs: Any) -> Any:
        module = guard.bot_module(spec)
        if module is not None:
            raise HiddenModuleError(refusal(module, guard.allow, f"loads {spec} from"))
        return real(spec, *args, **kwargs)

    load.__doc__ = real.__doc__
    agents.load = agents.loader.load = load  # type: ignore[assignment]


def _hidden(err: BaseException | None) -> HiddenModuleError | None:
    """The HiddenModuleError behind ``err`` (the loader wraps an ImportError in a ValueError)."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, HiddenModuleError):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


def _failure(err: BaseException, prefix: str) -> str:
    """A bot's exception as its one-line failure; a hidden module's rule as it is."""
    hidden = _hidden(err)
    return str(hidden) if hidden is not None else f"{prefix}{one_line(err)}"


def _die_with_parent() -> None:
    """Exit if the parent dies (a league killed with kill -9 must not leave looping children)."""
    parent = os.getppid()
    set_death_signal()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _become_nobody() -> None:
    """Started by root: give up root, so that RLIMIT_NPROC holds (root is exempt from it)."""
    if os.getuid() != 0:
        return
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _set_limit(name: str, value: int) -> None:
    """``resource.setrlimit`` where this system has the limit (else the parent enforces it)."""
    try:
        import resource

        resource.setrlimit(getattr(resource, name), (value, value))
    except (ImportError, ValueError, OSError, AttributeError):
        pass


def _prepare(first: Mapping[str, Any]) -> str | None:
    """Apply the init request's limits before the bot's code runs; why it cannot, or None."""
    limit = int(first.get("memory_mb", 1024)) * 1024 * 1024
    _set_limit("RLIMIT_AS", limit)
    if first.get("processes"):  # isolated only: unisolated, the count is the user's, not ours
        _set_limit("RLIMIT_NPROC", int(first["processes"]))
        if first.get("cpu_seconds"):
            _set_limit("RLIMIT_CPU", int(first["cpu_seconds"]))
        try:
            _become_nobody()
        except OSError as err:
            return f"cannot drop root in the sandbox: {err}"
        from racko_apps.sandbox.jit import seed_jit_cache

        seed_jit_cache()  # the compiled planner, copied before the bot loads
    return None


class _Tables:
    """The bot objects of one sandbox, one per table (games do not mix), and their requests."""

    def __init__(self, first: Mapping[str, Any], sink: _CountingSink) -> None:
        self.first = first
        self.sink = sink
        self.output_cap = int(first.get("output_chars", 100_000))
        self.bots: list[Any] = []

    def load(self) -> Any:
        """A fresh bot object (the toolkit's loader, as ``agents.load`` everywhere)."""
        import agents

        first = self.first
        return agents.load(
            first["spec"], int(first["num_players"]), seed=first.get("seed"), **first["rules"]
        )

    def build(self, tables: int) -> None:
        """The first bot (its failure propagates), then as many more as fit, up to ``tables``."""
        self.bots = [self.load()]
        while len(self.bots) < tables:
            try:
                self.bots.append(self.load())
            except BaseException:  # noqa: BLE001 - memory, most likely: fewer tables, with room
                del self.bots[max(1, len(self.bots) // 2) :]
                break

    def run(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """One request to one table's bot; its reply (``ok`` False, a kind and an error where
        the bot did wrong). MemoryError and what is not an Exception propagate."""
        table = item.get("table", 0)
        if not isinstance(table, int) or not 0 <= table < len(self.bots):
            return {"ok": False, "kind": "garbage", "error": f"no table {table!r}"}
        self.sink.count = 0
        start = time.perf_counter()
        try:
            if self.bots[table] is None:  # its last request failed: a fresh bot, as a fresh process
                self.bots[table] = self.load()
            out = _answer(self.bots[table], item)
        except MemoryError:
            raise
        except Exception as err:  # noqa: BLE001 - onnxruntime's own exception types
            size = failed_allocation(err)
            if size is not None:
                raise _GraphAllocationError(size) from err
            self.bots[table] = None
            return {"ok": False, "kind": "crash", "error": _failure(err, "raised ")}
        if not out["ok"]:
            return out
        out["seconds"] = round(time.perf_counter() - start, 6)
        if self.sink.count > self.output_cap:
            self.bots[table] = None
            return {
                "ok": False,
                "kind": "output",
                "error": f"printed {self.sink.count} characters in one move "
                f"(limit {self.output_cap})",
            }
        return out


def _answer(bot: Any, item: Mapping[str, Any]) -> dict[str, Any]:
    """What ``bot`` answers to one request (its exceptions propagate)."""
    cmd = item.get("cmd")
    out: dict[str, Any] = {"ok": True}
    if cmd == "act":
        observation = {
            "observation": unpack(item["observation"], OBS_DTYPE),
            "action_mask": unpack(item["action_mask"], MASK_DTYPE),
        }
        action = bot.act(observation)
        try:
            if isinstance(action, bool | np.bool_):
                raise TypeError
            out["action"] = operator.index(action)
        except TypeError:
            out["shown"] = repr(action)[:60]
    elif cmd == "reset":
        bot.reset()
    elif cmd == "seed":
        fn = getattr(bot, "seed", None)
        if callable(fn):
            fn(item.get("seed"))
    else:
        return {"ok": False, "kind": "garbage", "error": f"unknown request {cmd!r}"}
    return out


def _warm(first: Mapping[str, Any]) -> None:
    """A bot that uses the compiled planner has it loaded now, not on its first move."""
    from racko_apps.sandbox.jit import no_scipy_for_numba, warm_planner
    from racko_apps.sandbox.toolkit import PLANNER_MODULES

    if not first.get("warm", True) or not any(m in sys.modules for m in PLANNER_MODULES):
        return
    try:
        with no_scipy_for_numba():
            warm_planner(int(first["num_players"]))
    except Exception:  # noqa: BLE001, S110 - a bot may have changed the toolkit's modules
        pass


def _serve(requests: Any, tables: _Tables, reply: Callable[..., None], memory_mb: int) -> None:
    """Answer request lines until the parent closes the pipe or a request fails."""
    for line in requests:
        try:
            request = json.loads(line.decode())
            if request.get("cmd") == "tables":  # requests to tables, each answered at once
                for item in request["items"]:
                    reply(**tables.run(item), table=item.get("table"))
                continue
            out = tables.run(request)
        except MemoryError as err:
            size = f": asked for {err.size}" if isinstance(err, _GraphAllocationError) else ""
            reply(ok=False, kind="memory", error=f"ran out of memory (limit {memory_mb} MB){size}")
            return
        except BaseException as err:  # noqa: BLE001 - report everything, even SystemExit
            reply(ok=False, kind="crash", error=_failure(err, "raised "))
            return
        reply(**out)
        if not out["ok"]:  # one table only: the process that failed ends, as it always did
            return


def main() -> None:
    """The child's main loop: read a JSON request per line, answer a JSON reply per line."""
    _die_with_parent()
    proto = os.dup(1)  # the protocol's channel: one write per reply line, unbuffered
    requests = sys.stdin.buffer

    def reply(**fields: Any) -> None:
        data = (json.dumps(fields) + "\n").encode()
        while data:
            data = data[os.write(proto, data) :]

    first = json.loads(requests.readline().decode() or "{}")
    why = _prepare(first)
    if why is not None:
        reply(ok=False, kind="start", error=why)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sink = _CountingSink()
    sys.stdout = sys.stderr = sink  # type: ignore[assignment]
    sys.path.append(str(first["folder"]))
    tables = _Tables(first, sink)
    try:
        if first.get("visible") is not None:
            _guard_toolkit(first["visible"], first.get("allow") or [])
        tables.build(max(1, int(first.get("tables") or 1)))
    except BaseException as err:  # noqa: BLE001 - a student's import can raise anything
        reply(ok=False, kind="start", error=_failure(err, "cannot load bot: "))
        return
    _warm(first)
    reply(ok=True, tables=len(tables.bots))
    _serve(requests, tables, reply, int(first.get("memory_mb", 1024)))
