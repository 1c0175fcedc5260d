"""The sampled positions of a grade: the ``legal`` and ``speed`` checks.

The bot answers each position on its own (a ``reset`` first); its answers are also kept for the
teacher's agreement table (``racko_apps.grade.agreement``).
"""

from __future__ import annotations

import random
import time
from typing import Any

from agents.base import Bot
from agents.obs import decode
from racko_apps.grade.report import Failures
from racko_apps.referee.book import Strikes
from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.wire import BotFailureError
from racko_env.actions import Phase

PHASE_NAMES = {Phase.DRAW: "draw", Phase.KEEP_OR_DISCARD: "keep-or-discard", Phase.PLACE: "place"}
Positions = dict[Phase, list[dict[str, Any]]]


def sample_positions(
    num_players: int, rules: dict[str, Any], seed: int, per_phase: int
) -> Positions:
    """``per_phase`` observations of each decision type from seeded games of ``heuristic`` and
    ``random`` bots (realistic racks and odd ones); the same seed gives the same positions."""
    import agents
    from racko_env import racko_v1

    rng = random.Random(seed)
    pool: Positions = {p: [] for p in PHASE_NAMES}
    env = racko_v1.raw_env(num_players=num_players, **rules)
    game = 0
    while min(len(v) for v in pool.values()) < per_phase * 4 and game < 200:
        seats = [
            agents.load(
                "heuristic" if (game + s) % 2 else "random", num_players, seed=rng.getrandbits(32)
            )
            for s in range(num_players)
        ]
        env.reset(seed=rng.getrandbits(63))
        while True:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            obs = env.observe(agent)
            phase = decode(obs).phase
            if phase is not None:
                pool[phase].append(
                    {
                        "observation": obs["observation"].copy(),
                        "action_mask": obs["action_mask"].copy(),
                    }
                )
            env.step(seats[env.agent_name_mapping[agent]].act(obs))
        game += 1
    return {p: rng.sample(v, min(per_phase, len(v))) for p, v in pool.items()}


def _ask(bot: Bot, obs: dict[str, Any]) -> tuple[Any, float, str | None]:
    """The bot's answer to one position, its thinking time, and why it gave none (or None)."""
    try:
        bot.reset()
        start = time.perf_counter()
        action = bot.act(obs)
        seconds = time.perf_counter() - start
    except BotFailureError as err:
        return None, 0.0, err.reason
    except Exception as err:  # an in-process bot (built-in or ONNX) that raises
        return None, 0.0, f"raised {type(err).__name__}: {err}"
    if isinstance(bot, SandboxedBot):
        seconds = bot.last_seconds
    return action, seconds, None


def check_positions(
    spec: str, bot: Bot, positions: Positions, strikes: Strikes, failures: Failures
) -> tuple[dict[str, Any], dict[tuple[Phase, int], int]]:
    """The ``legal`` and ``speed`` measurements, and the legal actions the bot chose (by phase and
    position number). Each failure is a strike; past the limit the rest is not asked."""
    asked = legal = answered = skipped = 0
    slowest = 0.0
    chosen: dict[tuple[Phase, int], int] = {}
    for phase, group in positions.items():
        for k, obs in enumerate(group):
            asked += 1
            if strikes.out:
                skipped += 1
                continue
            where = f"{PHASE_NAMES[phase]} position {k}"
            action, seconds, error = _ask(bot, obs)
            if error is not None:
                strikes.count += 1
                failures.add(f"{spec}: {where}: {error}", "sampled positions", error)
                continue
            answered += 1
            slowest = max(slowest, seconds)
            mask = obs["action_mask"]
            ok = (
                not isinstance(action, bool) and isinstance(action, int) and 0 <= action < len(mask)
            )
            if ok and mask[action]:
                legal += 1
                chosen[(phase, k)] = int(action)
            else:
                strikes.count += 1
                allowed = [int(a) for a in range(len(mask)) if mask[a]]
                reason = f"illegal action {action!r} (legal actions: {allowed})"
                failures.add(f"{spec}: {where}: {reason}", "sampled positions", reason)
    if skipped:
        failures.add(
            f"{spec}: {skipped} position(s) not asked: it reached {strikes.limit} forfeit(s)"
        )
    measured = {
        "legal": {"asked": asked, "legal": legal},
        "speed": {"answered": answered, "asked": asked, "max_seconds": round(slowest, 6)},
    }
    return measured, chosen
