"""How often does ``expert`` take a bot's discards? Duplicate rounds on the batched engine.

    python -m benchmarks.take_rate --bot agents/pretrained/racko_2p.onnx --rounds 2000

Two players: the bot against ``expert``, ``--rounds`` duplicate rounds (each deal in both seatings)
(``racko_eval.quick_eval.play_duplicate``). ``expert`` is wrapped so that each of its draw
decisions after the round's first turn counts: in two players the discard top it faces then is
the card the bot has just thrown, and taking it is what denial tries to prevent. Prints the bot's
win rate (95% interval) and ``expert``'s take rate of its discards (95% interval): the number a
bot that reads the opponent's public slot history should bring down (issue 26: 44.8% for the
bot shipped before it). ``benchmarks/denial_ceiling.py`` counts the same take rate one game at a
time, beside the oracle's ceiling.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.batched import load_batch
from racko_env.actions import TAKE_DISCARD
from racko_env.observation import DISCARD_TOP, PHASE, TURN
from racko_eval import play_duplicate, wilson_interval


class CountingPolicy:
    """A batch policy that counts its takes of the discard top at draw decisions after turn 1."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.offered = 0
        self.taken = 0

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions = np.asarray(self.policy.act_batch(obs, masks))
        facing = (obs[:, PHASE.start] > 0.5) & (obs[:, TURN] > 0) & (obs[:, DISCARD_TOP] > 0)
        self.offered += int(facing.sum())
        self.taken += int((actions[facing] == TAKE_DISCARD).sum())
        return actions


def measure(bot: str, rounds: int, seed: int) -> dict[str, Any]:
    """The bot's win rate against ``expert`` and ``expert``'s take rate of its discards."""
    expert = CountingPolicy(load_batch("expert", 2, seed=seed))
    start = time.perf_counter()
    result = play_duplicate(
        [load_batch(bot, 2, seed=seed), expert], ["bot", "expert"], 2, {}, rounds, seed
    )
    lo, hi = wilson_interval(expert.taken, max(expert.offered, 1))
    won = result["bots"]["bot"]
    return {
        "bot": bot,
        "rounds": rounds,
        "win_rate": won["win_rate"],
        "ci95": won["ci95"],
        "expert_takes": expert.taken,
        "bot_discards": expert.offered,
        "take_rate": expert.taken / max(expert.offered, 1),
        "take_ci95": [lo, hi],
        "seconds": round(time.perf_counter() - start, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bot", action="append", required=True, help="a 2-player bot (repeatable)")
    parser.add_argument("--rounds", type=int, default=2000, help="deals, each in both seatings")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = []
    print(
        "| bot | duplicate rounds | win rate vs expert (95% CI) | expert's take rate of its discards (95% CI) |"
    )
    print("|---|---:|---|---|")
    for bot in args.bot:
        r = measure(bot, args.rounds, args.seed)
        rows.append(r)
        (lo, hi), (tlo, thi) = r["ci95"], r["take_ci95"]
        print(
            f"| `{bot}` | {r['rounds']:,} | {100 * r['win_rate']:.1f}% ({100 * lo:.1f}-{100 * hi:.1f}) "
            f"| {100 * r['take_rate']:.1f}% ({100 * tlo:.1f}-{100 * thi:.1f}) of "
            f"{r['bot_discards']:,} |",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
