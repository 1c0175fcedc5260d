"""How far could denial take the 2-player bot against ``expert``? A ceiling, measured by cheating.

The shipped bot plays its own rack close to perfectly (it needs 9.50 own turns to Rack-O against
``expert``'s 9.53), so what is left is interaction: ``expert`` takes about 44% of the bot's
discards. This script plays the bot against ``expert`` with an oracle that no real bot has: before
each discard, it asks ``expert`` itself, on a copy of the game, whether it would take that card.
When it would, the bot swaps to the best other full turn (discard the drawn card, or keep it in
some slot) that costs at most ``delta`` expected own turns more and whose discard ``expert``
leaves. ``delta = 0`` is the bot as shipped.

Any bot that only sees its observation knows less than this oracle, so the best win rate here
bounds what denial can add. Measured on 2,000 duplicate rounds (docs/training.md): 49.9% as
shipped, 55.0% at delta 0.1, 56.0% at 0.3, 45.2% at 1.0.

    python -m benchmarks.denial_ceiling                          # deltas 0, 0.1, 0.3, 1 (~7 min)
    python -m benchmarks.denial_ceiling --rounds 200 --deltas 0.3
    python -m benchmarks.denial_ceiling --deltas 0 --bot runs/2p/bot.onnx   # another bot file

Each row also gives ``expert``'s take rate of the bot's discards (the denial that is left to win).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np  # noqa: E402

import agents  # noqa: E402
from agents.expert import ExpertBot  # noqa: E402
from racko_env.actions import DISCARD, KEEP, TAKE_DISCARD, Phase  # noqa: E402
from racko_env.engine import RackoGame  # noqa: E402
from racko_env.observation import action_mask, encode  # noqa: E402
from racko_eval import deal_seeds, wilson_interval  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BOT = REPO / "agents" / "pretrained" / "racko_2p.onnx"


def _obs(game: RackoGame, seat: int) -> dict[str, np.ndarray]:
    return {"observation": encode(game, seat), "action_mask": action_mask(game, seat)}


class DenialOracle:
    """The shipped bot, steered away from the discards ``expert`` is about to take (cheats)."""

    def __init__(self, delta: float, bot_path: Path = BOT) -> None:
        self.delta = delta
        self.bot = agents.load(str(bot_path), num_players=2)
        self.expert = ExpertBot()
        self.swaps = 0

    def _turns(self, game: RackoGame, seat: int) -> np.ndarray:
        """Expected own turns after each action (minus the bot's logits; +inf where illegal)."""
        o = _obs(game, seat)
        mask = o["action_mask"].astype(bool)
        logits = self.bot.session.run(
            ["masked_logits"],
            {"observation": self.bot.graph_inputs(o["observation"]), "action_mask": mask[None]},
        )[0][0]
        return np.where(mask, -logits.astype(np.float64), np.inf)

    def _options(self, game: RackoGame, seat: int) -> list[tuple[float, tuple[int, ...]]]:
        """Every full rest of the turn from a keep or place decision, with its expected turns."""
        now = self._turns(game, seat)
        if game.phase == Phase.PLACE:
            return [(now[i], (i,)) for i in range(10)]
        kept = game.clone()
        kept.apply(KEEP)
        slots = self._turns(kept, seat)
        return [(now[DISCARD], (DISCARD,))] + [(slots[i], (KEEP, i)) for i in range(10)]

    def _expert_takes(self, game: RackoGame, moves: tuple[int, ...]) -> bool:
        after = game.clone()
        for a in moves:
            after.apply(a)
        if after.round_over:
            return False
        return self.expert.act(_obs(after, after.current)) == TAKE_DISCARD

    def own_moves(self, game: RackoGame, seat: int) -> tuple[int, ...]:
        """The rest of the turn the bot itself plays from a keep or place decision."""
        own = self.bot.act(_obs(game, seat))
        if own != KEEP:
            return (own,)
        kept = game.clone()
        kept.apply(KEEP)
        return (KEEP, self.bot.act(_obs(kept, seat)))

    def play_turn_part(self, game: RackoGame, seat: int) -> None:
        """Apply the bot's decision, or at a keep/place decision the whole rest of its turn."""
        if game.phase == Phase.DRAW or self.delta <= 0:
            game.apply(self.bot.act(_obs(game, seat)))
            return
        options = self._options(game, seat)
        mine = self.own_moves(game, seat)
        chosen = mine
        if self._expert_takes(game, mine):
            best = min(v for v, _ in options)
            for v, moves in sorted(options):
                if v - best > self.delta:
                    break
                if moves != mine and not self._expert_takes(game, moves):
                    chosen = moves
                    self.swaps += 1
                    break
        for a in chosen:
            game.apply(a)


def play(delta: float, rounds: int, seed: int, bot_path: Path = BOT) -> dict[str, Any]:
    """``rounds`` duplicate rounds: each deal twice, the bot in seat 0 and then in seat 1.

    Also counts ``expert``'s take rate of the bot's discards: of the draw decisions where the
    discard top is the card the bot just threw, the share where ``expert`` took it (where denial
    acts, and what a bot that reads the opponent should bring down)."""
    oracle = DenialOracle(delta, bot_path)
    wins = offered = taken = 0
    start = time.perf_counter()
    for deal in deal_seeds(seed, (rounds + 1) // 2):
        for me in (0, 1):
            game = RackoGame(num_players=2)
            game.new_game(seed=deal)
            fresh = False  # the discard top is the bot's discard of its last turn
            while not game.round_over:
                if game.current == me:
                    oracle.play_turn_part(game, me)
                    fresh = game.current != me and bool(game.discard)
                else:
                    action = oracle.expert.act(_obs(game, game.current))
                    if fresh and game.phase == Phase.DRAW:
                        offered += 1
                        taken += action == TAKE_DISCARD
                    fresh = False
                    game.apply(action)
            wins += game.racko_player == me
    played = 2 * ((rounds + 1) // 2)
    lo, hi = wilson_interval(wins, played)
    return {
        "delta": delta,
        "rounds": played,
        "win_rate": wins / played,
        "ci95": [round(lo, 4), round(hi, 4)],
        "swaps": oracle.swaps,
        "expert_take_rate": round(taken / max(offered, 1), 4),
        "bot_discards": offered,
        "seconds": round(time.perf_counter() - start, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.0, 0.1, 0.3, 1.0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bot", type=Path, default=BOT, help="the 2-player bot file (.onnx)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = []
    print("| delta | rounds | bot win rate vs expert (95% CI) | swaps | expert takes | seconds |")
    print("|---:|---:|---|---:|---:|---:|")
    for delta in args.deltas:
        r = play(delta, args.rounds, args.seed, args.bot)
        rows.append(r)
        lo, hi = r["ci95"]
        print(
            f"| {delta:g} | {r['rounds']} | {100 * r['win_rate']:.1f}% ({100 * lo:.1f}-{100 * hi:.1f}) "
            f"| {r['swaps']} | {100 * r['expert_take_rate']:.1f}% of {r['bot_discards']} "
            f"| {r['seconds']:.0f} |",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
