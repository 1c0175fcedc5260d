"""What OpenSpiel's exact tools reach on the smallest two-player Rack-O: racks of 3 slots, decks
of 8 or 10 cards, turn limits of 1 to 4 turns (``racko_env.openspiel`` with ``rack_size``,
``deck_size`` and ``turn_limit``).

    python -m benchmarks.openspiel_small                    # writes docs/results/openspiel_small.json
    python -m benchmarks.openspiel_small --budget 20 --mccfr-seconds 10 --results-dir /tmp/r

Three measurements, each in a child process held to a time budget and a memory limit (address
space beyond what it starts with, ``--memory-gb``), so a tree that does not fit fails there and
is recorded as such:

- **size**: the game tree's histories, decision nodes and terminal histories, estimated from
  random probes (Knuth's estimator: along a random path from the root, the product of the
  branching factors above a node is an unbiased estimate of the nodes at its depth), with 95%
  intervals. Chance is dealt card by card as the game defines it: the first-dealer draw, the
  deal, each card drawn from a pile whose order nobody knows.
- **traversal**: a depth-first walk of the whole tree of the smallest variant, as tabular CFR
  (every iteration) and ``nash_conv``/exploitability (the best response) need: the nodes visited
  within the budget and their rate, whether it finished, and the hours the whole tree would take
  at that rate. CFR and ``nash_conv`` run only on a tree that a walk finishes.
- **MCCFR**: OpenSpiel's external-sampling MCCFR (``open_spiel.python.algorithms``) on the
  smallest variant where both players move: iterations done and information states met within
  its time. (Its information states are the game's information-state strings; see the game's
  docstring for what they hold.)

Needs the ``openspiel`` extra. Seeded: the probes and MCCFR's sampling repeat.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import random
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

# The variants: (deck_size, turn_limit), all with 2 players and racks of 3 slots.
VARIANTS = ((8, 1), (8, 2), (8, 4), (10, 1), (10, 2), (10, 4))
RACK = 3
PROBES = 400


def _game(deck: int, turns: int) -> Any:
    import pyspiel

    import racko_env.openspiel  # noqa: F401  (registers "racko")

    params = {"players": 2, "rack_size": RACK, "deck_size": deck, "turn_limit": turns}
    return pyspiel.load_game("racko", params)


def _children(state: Any) -> list[int]:
    if state.is_chance_node():
        return [a for a, _ in state.chance_outcomes()]
    return state.legal_actions()


def estimate_size(deck: int, turns: int, probes: int, seed: int) -> dict[str, float]:
    """Knuth's estimates (mean and 95% half-width) of the histories, decision nodes and
    terminal histories of one variant's tree."""
    game, rng = _game(deck, turns), random.Random(seed)
    samples: dict[str, list[float]] = {"histories": [], "decisions": [], "terminals": []}
    for _ in range(probes):
        state, weight, nodes, decisions = game.new_initial_state(), 1.0, 1.0, 0.0
        while not state.is_terminal():
            children = _children(state)
            if not state.is_chance_node():
                decisions += weight
            weight *= len(children)
            nodes += weight
            state.apply_action(rng.choice(children))
        samples["histories"].append(nodes)
        samples["decisions"].append(decisions)
        samples["terminals"].append(weight)
    out = {}
    for key, values in samples.items():
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / max(len(values) - 1, 1)
        out[key] = mean
        out[f"{key}_half_width"] = 1.96 * math.sqrt(var / len(values))
    return out


def walk_tree(deck: int, turns: int, seconds: float) -> dict[str, float]:
    """Depth-first walk of the whole tree for up to ``seconds``: nodes visited, rate, finished."""
    game, start = _game(deck, turns), time.monotonic()
    stack, visited, finished = [game.new_initial_state()], 0, False
    while stack:
        state = stack.pop()
        visited += 1
        if not state.is_terminal():
            stack.extend(state.child(a) for a in _children(state))
        if visited % 256 == 0 and time.monotonic() - start > seconds:
            break
    else:
        finished = True
    elapsed = time.monotonic() - start
    return {"visited": visited, "seconds": elapsed, "finished": finished}


def run_mccfr(deck: int, turns: int, seconds: float, seed: int) -> dict[str, float]:
    """External-sampling MCCFR for ``seconds``: iterations and information states met."""
    import numpy as np
    from open_spiel.python.algorithms import external_sampling_mccfr

    np.random.seed(seed)  # the solver samples chance and actions from numpy's global generator
    solver = external_sampling_mccfr.ExternalSamplingSolver(_game(deck, turns))
    start, iterations = time.monotonic(), 0
    while time.monotonic() - start < seconds:
        solver.iteration()
        iterations += 1
    return {
        "iterations": iterations,
        "seconds": time.monotonic() - start,
        "infostates": len(solver._infostates),  # the solver's table: one entry per state met
    }


def _address_space() -> int:
    """This process's address space in bytes (what ``RLIMIT_AS`` limits)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _child(job: Callable[..., dict], args: tuple, memory_gb: float, queue: Any) -> None:
    # the limit counts from what the child starts with (the parent's imports, forked)
    limit = _address_space() + int(memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        queue.put(("ok", job(*args)))
    except MemoryError:
        queue.put(("out of memory", {}))
    except Exception as exc:  # reported in the results, not lost in a child's traceback
        queue.put((f"error: {type(exc).__name__}: {exc}", {}))


def bounded(job: Callable[..., dict], args: tuple, seconds: float, memory_gb: float) -> dict:
    """``job(*args)`` in a child process held to ``memory_gb`` of address space; killed (and
    recorded so) if it runs past ``seconds`` plus a grace minute. Adds ``outcome``."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(job, args, memory_gb, queue), daemon=True)
    proc.start()
    try:
        kind, result = queue.get(timeout=seconds + 60)
    except Exception:  # queue.Empty: the child ran past its time
        kind, result = "killed", {}
    proc.join(timeout=5)
    if proc.is_alive():
        proc.kill()
        proc.join()
    return {**result, "outcome": kind}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement; the tables and figures of the results file."""
    sizes = []
    for deck, turns in VARIANTS:
        got = bounded(estimate_size, (deck, turns, args.probes, args.seed), 600, args.memory_gb)
        sizes.append(((deck, turns), got))
        print(f"size N={deck} T={turns}: {got}", file=sys.stderr)
    walk_variant = VARIANTS[0]
    walk = bounded(walk_tree, (*walk_variant, args.budget), args.budget, args.memory_gb)
    print(f"walk {walk_variant}: {walk}", file=sys.stderr)
    mccfr_variant = VARIANTS[1]
    mccfr = bounded(
        run_mccfr, (*mccfr_variant, args.mccfr_seconds, args.seed), args.mccfr_seconds, 8.0
    )
    print(f"mccfr {mccfr_variant}: {mccfr}", file=sys.stderr)
    rate = walk.get("visited", 0) / max(walk.get("seconds", 0.0), 1e-9)
    size_rows = []
    for (deck, turns), got in sizes:
        hours = got["histories"] / rate / 3600 if rate > 0 and "histories" in got else None
        size_rows.append(
            [
                deck,
                turns,
                round(got.get("histories", 0.0)),
                round(got.get("histories_half_width", 0.0)),
                round(got.get("decisions", 0.0)),
                round(got.get("terminals", 0.0)),
                round(hours, 1) if hours is not None else None,
            ]
        )
    deck, turns = walk_variant
    tables = [
        {
            "title": "Game size of two-player Rack-O with racks of 3 slots (estimated)",
            "columns": [
                "deck (N)",
                "turn limit",
                "histories",
                "histories: 95% half-width",
                "decision nodes",
                "terminal histories",
                "hours to walk once",
            ],
            "rows": size_rows,
            "note": (
                f"Knuth's estimator over {args.probes} random probes per variant. Hours to walk "
                "once: the histories at the walk's measured rate below; tabular CFR walks the "
                "whole tree every iteration, nash_conv once per best response."
            ),
        },
        {
            "title": "A full walk of the smallest tree within the budget",
            "columns": [
                "deck (N)",
                "turn limit",
                "budget (s)",
                "memory limit (GiB)",
                "nodes visited",
                "nodes per second",
                "finished",
            ],
            "rows": [
                [
                    deck,
                    turns,
                    args.budget,
                    args.memory_gb,
                    walk.get("visited", 0),
                    round(rate),
                    _walk_outcome(walk),
                ]
            ],
            "note": "Depth-first through the pyspiel API, one core, in a child process.",
        },
        {
            "title": "External-sampling MCCFR on the smallest game where both players move",
            "columns": ["deck (N)", "turn limit", "seconds", "iterations", "information states"],
            "rows": [
                [
                    mccfr_variant[0],
                    mccfr_variant[1],
                    round(mccfr.get("seconds", 0.0), 1),
                    mccfr.get("iterations", 0),
                    mccfr.get("infostates", 0),
                ]
            ],
            "note": f"OpenSpiel's Python solver; outcome: {mccfr['outcome']}.",
        },
    ]
    smallest = sizes[0][1].get("histories", 0.0)
    figures = {
        "smallest_histories": round(smallest),
        "walk_nodes_per_s": round(rate),
        "smallest_walk_hours": round(smallest / rate / 3600, 1) if rate > 0 else None,
    }
    return {"tables": tables, "figures": figures}


def _walk_outcome(walk: dict) -> str:
    if walk.get("finished"):
        return "yes"
    return "no: the budget ran out" if walk["outcome"] == "ok" else f"no: {walk['outcome']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.openspiel_small", description=None)
    parser.add_argument("--budget", type=float, default=120.0, help="seconds for the full walk")
    parser.add_argument("--mccfr-seconds", type=float, default=120.0, help="seconds of MCCFR")
    parser.add_argument("--memory-gb", type=float, default=4.0, help="address space per child")
    parser.add_argument("--probes", type=int, default=PROBES, help="random probes per variant")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--results-dir", metavar="DIR", help="default docs/results")
    args = parser.parse_args(argv)
    if args.budget <= 0 or args.mccfr_seconds <= 0 or args.memory_gb <= 0 or args.probes < 2:
        parser.error("--budget, --mccfr-seconds and --memory-gb must be > 0, --probes >= 2")
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        parser.error('needs OpenSpiel: pip install "racko[openspiel]"')
    from benchmarks import command_line
    from racko_eval.results import write_results

    data = measure(args)
    path = write_results(
        "openspiel_small",
        command=command_line("openspiel_small", argv),
        tables=data["tables"],
        figures=data["figures"],
        folder=args.results_dir,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
