"""The quick batched check every trainer runs: duplicate rounds on the batched engine.

The format of ``racko_eval.tournament`` (``tables_for`` and ``seatings`` are shared), but every
seating of every deal is one game of one ``racko_env.vector.VectorRacko`` batch, and each bot
decides for all its games at once (``agents.batched.BatchPolicy``; a trainer passes its torch
policy in: this module never imports torch). Each game draws from its own stream, seeded by its
deal's seed (``DealChance``), so the seatings of a deal see the same cards. The engines shuffle
differently, so these are not the deals ``racko evaluate`` plays for the same seed; that command
stays the reference for published numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from racko_env.vector import VectorRacko
from racko_eval.tournament import deal_seeds, seatings, tables_for, wilson_interval


class DealChance:
    """A ``ChanceSource`` with one random stream per game, seeded by that game's deal seed."""

    def __init__(self, seeds: Sequence[int]) -> None:
        self.rngs = [np.random.default_rng(int(s)) for s in seeds]

    def first_dealers(self, games: np.ndarray, num_players: int, num_cards: int = 0) -> np.ndarray:
        return np.array([self.rngs[g].integers(num_players) for g in games], dtype=np.intp)

    def deck_orders(self, games: np.ndarray, num_cards: int) -> np.ndarray:
        return np.stack([self.rngs[g].permutation(num_cards) + 1 for g in games])

    def refill_orders(self, games: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
        out = np.zeros((len(games), width), dtype=np.intp)
        for row, (g, m) in enumerate(zip(games, lengths, strict=True)):
            out[row, :m] = self.rngs[g].permutation(int(m))
            out[row, m:] = np.arange(m, width)
        return out


def play_duplicate(
    policies: Sequence[Any],
    labels: Sequence[str],
    num_players: int,
    rules: dict[str, Any],
    rounds: int,
    seed: int,
    tables: Sequence[tuple[int, ...]] | None = None,
    episode: str = "round",
    batch_deals: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Win rates (95% Wilson intervals) of batch policies over ``rounds`` duplicate deals.

    ``tables``: lineups of policy indices (default ``tables_for``), each in every seating; a policy
    named twice sits twice. Returns ``{"bots": {label: {"win_rate", "ci95", "wins", "seats"}}}``
    and the format's counts. ``progress`` hears the deals played after each batch of
    ``batch_deals`` (default: about 2,000 games a batch).
    """
    if len(policies) != len(labels) or len(set(labels)) != len(labels):
        raise ValueError("give one distinct label per policy")
    lineups = tables_for(len(policies), num_players) if tables is None else list(tables)
    layout = [s for t in lineups for s in seatings(tuple(t))]
    if batch_deals is None:  # about 2,000 games per batch: fast, and progress every batch
        batch_deals = max(1, 2000 // len(layout))
    wins = np.zeros(len(policies))
    seats = np.zeros(len(policies), dtype=np.int64)
    all_seeds = deal_seeds(seed, rounds)
    for start in range(0, rounds, batch_deals):
        chunk = all_seeds[start : start + batch_deals]
        w, s = _play_chunk(policies, layout, chunk, num_players, rules, episode)
        wins += w
        seats += s
        if progress is not None:
            progress(min(start + batch_deals, rounds))  # deals played so far
    report: dict[str, Any] = {
        "format": "duplicate, batched engine (racko_eval/quick_eval.py)",
        "rounds": rounds,
        "seatings_per_deal": len(layout),
        "seed": seed,
        "num_players": num_players,
        "bots": {},
    }
    for i, label in enumerate(labels):
        lo, hi = wilson_interval(wins[i], int(seats[i]))
        report["bots"][label] = {
            "win_rate": wins[i] / max(seats[i], 1),
            "ci95": [lo, hi],
            "wins": float(wins[i]),
            "seats": int(seats[i]),
        }
    return report


def _play_chunk(
    policies: Sequence[Any],
    layout: list[tuple[int, ...]],
    seeds: Sequence[int],
    num_players: int,
    rules: dict[str, Any],
    episode: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Every seating of every deal in ``seeds`` as one batch; (wins, seats) per bot."""
    per_deal = len(layout)
    game_seeds = [s for s in seeds for _ in range(per_deal)]
    bot_of = np.array([layout[i % per_deal] for i in range(len(game_seeds))], dtype=np.intp)
    vec = VectorRacko(
        len(game_seeds),
        num_players=num_players,
        episode=episode,
        chance=DealChance(game_seeds),
        **rules,
    )
    g_all = np.arange(len(game_seeds))
    rewards = np.zeros((len(game_seeds), num_players))
    live = np.ones(len(game_seeds), dtype=bool)
    while live.any():
        g = g_all[live]
        seat = vec.game.current[g]
        obs = vec.observe(g, seat)
        masks = vec.action_masks(g, seat)
        bots = bot_of[g, seat]
        actions = np.zeros(len(g), dtype=np.int64)
        for b in np.unique(bots):
            rows = np.flatnonzero(bots == b)
            actions[rows] = policies[b].act_batch(obs[rows], masks[rows])
        result = vec.step(actions, g)
        rewards[g] += result.rewards
        live[g[result.done]] = False
    # a win is worth 1, shared among the winning teams (each seat of a winning team gets it)
    won = rewards == rewards.max(axis=1, keepdims=True)
    seats_per_team = num_players // vec.game.num_teams
    share = won / (won.sum(axis=1, keepdims=True) / seats_per_team)
    wins = np.zeros(len(policies))
    seats = np.zeros(len(policies), dtype=np.int64)
    np.add.at(wins, bot_of, share)
    np.add.at(seats, bot_of, 1)
    return wins, seats


def quick_win_rate(
    policy: Any, opponent: str, rounds: int, seed: int, num_players: int, rules: dict[str, Any]
) -> dict[str, Any]:
    """The learner against ``opponent`` in every other seat, ``rounds`` duplicate deals of one
    round (each in every seating of the learner): ``{"opponent", "rounds", "wins", "win_rate",
    "ci95"}``, the interval a 95% Wilson one; a tie shares the win."""
    from agents.batched import load_batch

    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    bot = load_batch(opponent, num_players, seed=seed, **rules)
    table = (0,) + (1,) * (num_players - 1)
    rep = play_duplicate(
        [policy, bot], ["learner", opponent], num_players, rules, rounds, seed, [table]
    )
    result = {k: rep["bots"]["learner"][k] for k in ("wins", "win_rate", "ci95")}
    return {"opponent": opponent, "rounds": rounds, **result}


def quick_win_rates(
    policy: Any,
    opponents: list[str],
    rounds: int,
    seed: int,
    num_players: int,
    rules: dict[str, Any],
) -> dict[str, dict[str, Any]]:
    """``quick_win_rate`` against each opponent (the same deals for each)."""
    return {opp: quick_win_rate(policy, opp, rounds, seed, num_players, rules) for opp in opponents}
