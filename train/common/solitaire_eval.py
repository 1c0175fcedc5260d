"""Solitaire's evaluation in a run (``num_players: 1``, ``train.common.evaluation``): the
learner's turns to Rack-O over seeded deals beside the fixed bots' on the same deals, and where
the size is small enough every one's exact expected turns and gap to the optimum
(``racko_env.solitaire``), each entry in the evaluation record's shape (``solitaire_result``,
``train.common.eval_record``). It never needs torch."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from racko_env.rules import SOLITAIRE
from train.common.config import GameConfig

# Solitaire sizes of at most this many states per decision are also evaluated exactly in a run
# (k=4, N=10 has 967,680: the policy is asked at its 2.9 million observations, 15 s for expert
# and about a minute for the structured policy on 2 cores); larger ones are played only (the
# benchmark evaluates k=4, N=11 exactly itself).
EXACT_STATES = 1_000_000


def solitaire_result(
    bot: str,
    rounds: int,
    mean_turns: float,
    ci95: Any,
    seed: int,
    exact_turns: float | None = None,
    optimum: float | None = None,
) -> dict[str, Any]:
    """One bot's entry of a solitaire evaluation: its mean turns to Rack-O over ``rounds`` deals
    with the 95% interval, and where the size was solved its exact expected turns, the optimum
    and the gap between them in percent (None where not)."""
    gap = None
    if exact_turns is not None and optimum is not None:
        gap = 100.0 * (exact_turns / optimum - 1.0)
    return {
        "bot": bot,
        "rounds": int(rounds),
        "mean_turns": float(mean_turns),
        "ci95": [float(ci95[0]), float(ci95[1])],
        "seed": int(seed),
        "exact_turns": None if exact_turns is None else float(exact_turns),
        "optimum": None if optimum is None else float(optimum),
        "gap_percent": gap,
    }


def solitaire_against(
    player: Any, cfg: GameConfig, bots: list[str], rounds: int, seed: int
) -> dict[str, Any]:
    """Solitaire's evaluation: the learner's turns to Rack-O over ``rounds`` deals, and each fixed
    bot's on the same deals (``play_solitaire``), as ``solitaire_result`` entries
    keyed ``learner`` and by bot; sizes of up to ``EXACT_STATES`` states also give each one's
    exact expected turns and gap to the optimum."""
    rules = cfg.rules_options()
    out = {"learner": _solitaire_entry("learner", player, rules, rounds, seed)}
    for bot in bots:
        out[bot] = _fixed_bot_entry(bot, tuple(sorted(rules.items())), rounds, seed)
    return out


@functools.lru_cache(maxsize=32)
def _fixed_bot_entry(
    spec: str, rules: tuple[tuple[str, Any], ...], rounds: int, seed: int
) -> dict[str, Any]:
    """A fixed bot's entry, computed once per run (its deals and its play do not change)."""
    from agents.batched import load_batch

    options = dict(rules)
    policy = load_batch(spec, SOLITAIRE, seed=seed, **options)
    return _solitaire_entry(spec, policy, options, rounds, seed)


def _solitaire_entry(
    name: str, policy: Any, rules: dict[str, Any], rounds: int, seed: int
) -> dict[str, Any]:
    from racko_env.config import RulesConfig
    from racko_env.solitaire_env import mean_ci95

    config = RulesConfig(num_players=SOLITAIRE, **rules)
    mean, low, high = mean_ci95(play_solitaire(policy, rules, rounds, seed))
    exact = exact_turns(policy, config)
    return solitaire_result(name, rounds, mean, (low, high), seed, *exact)


def exact_turns(policy: Any, config: Any) -> tuple[float | None, float | None]:
    """(the policy's exact expected turns, the optimum) where the size has at most
    ``EXACT_STATES`` states per decision and an ascending rule-book Rack-O, else (None, None)."""
    from racko_env.solitaire import evaluate
    from racko_env.solitaire_space import check_size, space

    k, n = config.rack_size, config.num_cards
    if config.min_run or config.empty_pile != "shuffle":
        return None, None  # the solver plays the plain rules
    try:
        check_size(k, n)
    except ValueError:
        return None, None
    if space(k, n).num_states > EXACT_STATES:
        return None, None
    return evaluate(policy, k, n, turn_limit=config.turn_limit), optimum(k, n)


@functools.lru_cache(maxsize=8)
def optimum(rack_size: int, deck_size: int) -> float:
    """The optimal expected turns of a solitaire size (``racko_env.solitaire.solve``), once."""
    from racko_env.solitaire import solve

    return solve(rack_size, deck_size).expected_turns


def describe_turns(name: str, r: dict[str, Any]) -> str:
    """One solitaire entry in words: mean turns, interval, and the exact figures where known."""
    lo, hi = r["ci95"]
    text = f"{name} {r['mean_turns']:.2f} ({lo:.2f}-{hi:.2f}) turns"
    if r.get("exact_turns") is not None:
        text += f", exact {r['exact_turns']:.4f}, gap {r['gap_percent']:.2f}%"
    return text


def play_solitaire(
    policy: Any, rules: dict[str, Any], rounds: int, seed: int, batch_deals: int = 2000
) -> np.ndarray:
    """The turns a batch policy takes to Rack-O in one-player rounds (``num_players=1``) on the
    deals of ``racko_eval.deal_seeds(seed, rounds)``, every round cut at the turn limit (int64
    [rounds]): solitaire's played yardstick, the same deals for every policy given the same seed,
    played on the batched engine with each deal's own random stream (``racko_eval.DealChance``)."""
    from racko_env.vector import VectorRacko
    from racko_eval import DealChance, deal_seeds

    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    all_seeds = deal_seeds(seed, rounds)
    turns = np.zeros(rounds, dtype=np.int64)
    for start in range(0, rounds, batch_deals):
        chunk = all_seeds[start : start + batch_deals]
        vec = VectorRacko(len(chunk), num_players=1, chance=DealChance(chunk), **rules)
        live = np.ones(len(chunk), dtype=bool)
        while live.any():
            g = np.flatnonzero(live)
            seat = np.zeros(len(g), dtype=np.intp)
            actions = policy.act_batch(vec.observe(g, seat), vec.action_masks(g, seat))
            live[g[vec.step(np.asarray(actions, dtype=np.int64), g).done]] = False
        turns[start : start + len(chunk)] = vec.game.turn
    return turns
