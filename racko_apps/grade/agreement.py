"""How often a submission chooses what a shipped bot chooses: the teacher's check for copies.

A submission that only wraps a shipped bot (``agents.load("racko_2p")``, ``expert``) plays its
moves. On the rubric's sampled positions the teacher's report gives the share of the
submission's legal answers that each shipped bot (the trained ones for the rubric's player
count, and ``expert``) answers the same way, with the sha256 of the shipped file it was, and
flags any share at ``FLAG_AT`` or more. A flag is a reason to read the code, not a verdict: a
strong honest bot agrees with ``expert`` often, on the many positions with one sensible move.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from racko_apps.grade.positions import Positions
from racko_apps.grade.rubric import Rubric
from racko_env.actions import Phase

FLAG_AT = 0.99
CODE_BOTS = ("expert",)  # shipped bots that are code, hashed by their module's file


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shipped_bots(players: int) -> dict[str, Path]:
    """The shipped bots compared with, by name, each with the file it is (for its hash)."""
    import agents.expert
    from agents.loader import SHIPPED_BOTS

    bots = {name: Path(agents.expert.__file__) for name in CODE_BOTS}
    bots.update(
        {name: path for name, path in SHIPPED_BOTS.items() if name.endswith(f"_{players}p")}
    )
    return bots


def _answers(name: str, rubric: Rubric, positions: Positions) -> dict[tuple[Phase, int], int] | str:
    """A shipped bot's answers on the positions, or why it cannot play them (one line)."""
    import agents

    try:
        bot = agents.load(name, rubric.players, seed=0, **rubric.rules)
    except (ValueError, ImportError, FileNotFoundError) as err:
        return " ".join(str(err).split())
    answers = {}
    for phase, group in positions.items():
        for k, obs in enumerate(group):
            bot.reset()
            answers[(phase, k)] = int(bot.act(obs))
    return answers


def agreement(
    rubric: Rubric, positions: Positions, chosen: dict[tuple[Phase, int], int]
) -> dict[str, Any]:
    """The agreement table of the teacher's report (``chosen``: the submission's legal answers)."""
    rows = []
    for name, path in shipped_bots(rubric.players).items():
        answers = _answers(name, rubric, positions)
        row: dict[str, Any] = {"bot": name, "file": path.name, "sha256": _sha256(path)}
        if isinstance(answers, str):
            rows.append({**row, "agreement": 0.0, "flagged": False, "skipped": answers})
            continue
        same = sum(1 for key, action in chosen.items() if answers.get(key) == action)
        share = same / len(chosen) if chosen else 0.0
        rows.append(
            {**row, "agreement": round(share, 6), "flagged": bool(chosen) and share >= FLAG_AT}
        )
    return {"positions": len(chosen), "flag_at": FLAG_AT, "bots": rows}
