"""Duplicate-format tournaments between Rack-O bots, played through the real AEC env.

Each deal (one seed, ``env.reset(seed=deal_seed)``) is played at every table in every distinct
seating, not just the rotations, so every bot holds every seat and sits after every other bot
equally often (a player's discards go to the next player first). With ``games`` every later round
of a game is dealt from the game's seed too. A win is worth 1, shared among the winning teams.
Solitaire (one player) has no win: every bot plays every deal alone, scored by its turns to
Rack-O (``racko_eval.solitaire_turns``).
Everything is seeded from ``seed`` and computed per deal, so the report does not depend on the
number of worker processes. The format and the report: docs/evaluation/evaluate.md.
"""

from __future__ import annotations

import copy
import itertools
import math
import multiprocessing
import operator
import pickle
import random
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from agents import load
from agents.base import Bot
from racko_env.actions import DISCARD, NUM_ACTIONS, action_name
from racko_env.config import RulesConfig
from racko_env.rules import SOLITAIRE
from racko_eval.records import Explainer, GameRecorder, write_record
from racko_eval.solitaire_turns import solitaire_report

REPORT_SCHEMA = "racko-evaluation/1"
WIN_POINTS = 1000.0  # ranks for ratings: a win outranks any number of card points
# OpenSkill's dynamics factor, added to every sigma before each update: it models a player whose
# skill drifts between matches (its default, 25/300). A bot is a fixed program whose skill does not
# drift, so none: its interval narrows with every informative match and never widens by itself.
RATING_TAU = 0.0


def rating_model() -> Any:
    """The OpenSkill model every rating of bots uses (Plackett-Luce, no dynamics)."""
    from openskill.models import PlackettLuce

    return PlackettLuce(tau=RATING_TAU)


class _BotFailureError(RuntimeError):
    """A bot's failure, naming the bot (``bot``) and, where it played one, the ``action``; all
    three travel in ``args``, so the error survives a worker process's pickling."""

    def __init__(self, message: str, bot: str = "", action: Any = None) -> None:
        super().__init__(message, bot, action)
        self.bot, self.action = bot, action

    def __str__(self) -> str:
        return str(self.args[0])


class IllegalActionError(_BotFailureError):
    """A bot returned an action its seat may not play: which bot, which action, where."""


class BotError(_BotFailureError):
    """A bot raised an exception while choosing an action."""


# ----------------------------------------------------------------------------- plan


def tables_for(num_bots: int, num_players: int) -> list[tuple[int, ...]]:
    """Lineups of bot indices, in a fixed order: every combination of ``num_players`` different
    bots, or with fewer bots than seats every multiset holding each bot at least once."""
    if num_bots < 1:
        raise ValueError("a tournament needs at least one bot")
    if num_bots >= num_players:
        return list(itertools.combinations(range(num_bots), num_players))
    return [
        combo
        for combo in itertools.combinations_with_replacement(range(num_bots), num_players)
        if len(set(combo)) == num_bots
    ]


def seatings(lineup: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every distinct arrangement of a lineup, in a fixed order: ``seating[s]`` sits in seat s."""
    return list(dict.fromkeys(itertools.permutations(lineup)))


def deal_seeds(seed: int, count: int) -> list[int]:
    """The deal seeds of a tournament: a pure function of its seed."""
    rng = random.Random(seed)
    return [rng.getrandbits(63) for _ in range(count)]


def wilson_interval(successes: float, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (sound near 0 and 1, unlike the normal one)."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


# ----------------------------------------------------------------------------- playing


@dataclass
class SeatResult:
    """What one seat did in one unit (a round, or a whole game)."""

    bot: int
    win: float
    points: list[int] = field(default_factory=list)  # round points, one per round played
    racko_turns: list[int] = field(default_factory=list)  # own turns of each round it went Rack-O
    rank_score: float = 0.0


@dataclass
class TableSetup:
    """What every deal of a match is played with: the bots (specs or objects), their labels, the
    player count, the unit (``"round"`` or ``"game"``), the rules options, and the folder that
    gets a record of every game (docs/evaluation/records.md), if any."""

    bots: list[str | Bot]
    labels: list[str]
    num_players: int
    episode: str
    rules: dict[str, Any]
    record_dir: str | None = None


class Ask(NamedTuple):
    """A bot asked to move: the bot object, its index in the match, its seat, the observation."""

    bot: Any
    index: int
    seat: int
    obs: dict[str, Any]


class DealPlayer:
    """Plays deals for one process (its env and bots built once): ``play(deal_seed, seating,
    salt)`` gives a ``SeatResult`` per seat, the deals and seeding of ``run_tournament``, for the
    referee too. A ``recorder`` gets every move as it is played, so a broken-off game keeps its
    record up to the failure."""

    def __init__(self, setup: TableSetup) -> None:
        from racko_env import racko_v1

        self.setup = setup
        self.env = racko_v1.raw_env(
            num_players=setup.num_players, episode=setup.episode, **setup.rules
        )
        self.game = self.env.unwrapped.game
        self._decks: random.Random | None = None
        if setup.episode == "game":
            self._fix_later_deals()
        self.instances: dict[tuple[int, int], Any] = {}

    def _fix_later_deals(self) -> None:
        """Deal rounds 2, 3, ... of a game from the game's seed, so duplicate games stay duplicate."""
        game = self.game
        start_round = game.start_round
        n_cards = game.num_cards

        def seeded_start_round(deck_order: Sequence[int] | None = None) -> None:
            if deck_order is None and self._decks is not None:
                deck = list(range(1, n_cards + 1))
                self._decks.shuffle(deck)
                deck_order = deck
            start_round(deck_order)

        game.start_round = seeded_start_round

    def bot(self, index: int, copy_no: int) -> Any:
        key = (index, copy_no)
        if key not in self.instances:
            spec = self.setup.bots[index]
            if isinstance(spec, str | Path):
                bot = load(spec, self.setup.num_players, **self.setup.rules)
            else:
                bot = spec if copy_no == 0 else copy.deepcopy(spec)
            self.instances[key] = bot
        return self.instances[key]

    def play(
        self,
        deal_seed: int,
        seating: tuple[int, ...],
        salt: int,
        recorder: GameRecorder | None = None,
    ) -> list[SeatResult]:
        """Play one deal in one seating, each bot answering as it is asked."""
        game = self.steps(deal_seed, seating, salt, recorder)
        try:
            ask = next(game)
            while True:
                ask = game.send(self._ask(ask, deal_seed))
        except StopIteration as done:
            return done.value

    def steps(
        self,
        deal_seed: int,
        seating: tuple[int, ...],
        salt: int,
        recorder: GameRecorder | None = None,
    ) -> Generator[Ask, int, list[SeatResult]]:
        """``play`` as a generator: it yields an ``Ask`` whenever a bot is to move and is sent the
        action back, so that a driver can keep many games going at once and answer their asks in
        batches (racko_apps.referee plays a league's pairing so: a sandboxed bot answers the asks
        of all the pairing's games in one exchange). The action it is sent must already be legal
        (``check_action``); it returns the ``SeatResult`` per seat."""
        env, game, setup = self.env, self.game, self.setup
        n = setup.num_players
        copies: dict[int, int] = {}
        bots = []
        for s, b in enumerate(seating):
            bot = self.bot(b, copies.get(b, 0))
            copies[b] = copies.get(b, 0) + 1
            seed_fn = getattr(bot, "seed", None)
            if callable(seed_fn):
                seed_fn((deal_seed * 7919 + salt * 104729 + s) % 2**63)
            bots.append(bot)
        env.reset(seed=deal_seed)
        self._decks = random.Random(deal_seed ^ 0x5EED)
        if recorder is not None:
            recorder.start(game, deal_seed)
        explainer = Explainer() if recorder is not None else None
        results = [SeatResult(bot=b, win=0.0) for b in seating]
        own_turns = [0] * n
        round_no = game.round_number
        for bot in bots:
            bot.reset()
        while True:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            seat = env.agent_name_mapping[agent]
            obs = env.observe(agent)
            if explainer is not None:
                explainer.before(bots[seat])
            action = yield Ask(bots[seat], seating[seat], seat, obs)
            env.step(action)
            if recorder is not None:
                recorder.move(seat, action, explainer.after(obs) if explainer else None)
            if action < 10 or action == DISCARD:
                own_turns[seat] += 1
            if game.round_number != round_no or game.round_over:
                infos = env.infos
                for s in range(n):
                    info = infos[env.possible_agents[s]]
                    results[s].points.append(int(info["round_points"]))
                    if info["went_racko"]:
                        results[s].racko_turns.append(own_turns[s])
                own_turns = [0] * n
                if game.round_over:
                    break
                round_no = game.round_number
                for bot in bots:
                    bot.reset()
        self._score(results)
        return results

    def _ask(self, ask: Ask, deal_seed: int) -> int:
        label = self.setup.labels[ask.index]
        try:
            action = ask.bot.act(ask.obs)
        except Exception as err:
            raise BotError(
                f"bot {label!r} raised {type(err).__name__}: {err} "
                f"(seat {ask.seat}, deal seed {deal_seed})",
                label,
            ) from err
        return self.check_action(ask, action, deal_seed)

    def check_action(self, ask: Ask, action: Any, deal_seed: int) -> int:
        """``action`` as an int when it is legal for ``ask``; IllegalActionError otherwise."""
        mask = ask.obs["action_mask"]
        try:
            as_int = operator.index(action)  # ints and numpy integers; not floats, None, bools
            ok = not isinstance(action, bool | np.bool_) and 0 <= as_int < NUM_ACTIONS
            ok = ok and bool(mask[as_int])
        except TypeError:
            as_int, ok = -1, False
        if not ok:
            label = self.setup.labels[ask.index]
            legal = [a for a in range(NUM_ACTIONS) if mask[a]]
            name = action_name(as_int) if as_int >= 0 else "not an action id"
            raise IllegalActionError(
                f"bot {label!r} returned illegal action {action!r} ({name}) in seat {ask.seat}, "
                f"deal seed {deal_seed}; legal actions were {legal}",
                label,
                action,
            )
        return as_int

    def _score(self, results: list[SeatResult]) -> None:
        game, cfg = self.game, self.game.config
        n = len(results)
        if self.setup.episode == "game":
            teams = {game.game_winner} if game.game_winner is not None else set()
            totals = [game.totals[cfg.team_of(s)] for s in range(n)]
        else:
            teams, totals = game.round_winners, game.round_team_points
        share = 1.0 / len(teams) if teams else 0.0
        for s, res in enumerate(results):
            res.win = share if cfg.team_of(s) in teams else 0.0
            res.rank_score = res.win * WIN_POINTS + totals[s]


_WORKER: DealPlayer | None = None


def _init_worker(setup: TableSetup) -> None:
    global _WORKER
    import os

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _WORKER = DealPlayer(setup)


Job = tuple[int, int, list[tuple[int, ...]]]  # deal number, deal seed, the seatings


def seat_labels(setup: TableSetup, seating: Sequence[int]) -> list[dict[str, Any]]:
    """Who sits where, for a record: each seat's label and the spec that loads it."""
    return [
        {
            "bot": setup.labels[b],
            "spec": str(setup.bots[b]) if isinstance(setup.bots[b], str | Path) else None,
        }
        for b in seating
    ]


def _play_deal(job: Job) -> list[list[SeatResult]]:
    deal, deal_seed, plan = job
    worker = _WORKER
    assert worker is not None
    setup = worker.setup
    out = []
    for salt, seating in enumerate(plan):
        if setup.record_dir is None:
            out.append(worker.play(deal_seed, seating, salt))
            continue
        context = {"source": "evaluate", "deal": deal, "seating": salt}
        recorder = GameRecorder(setup.episode, seat_labels(setup, seating), context)
        name = f"deal{deal:05d}-seating{salt:02d}"
        try:
            results = worker.play(deal_seed, seating, salt, recorder)
        except (BotError, IllegalActionError) as err:  # the game up to the failure, to look at
            if recorder.game is not None:
                names = [setup.labels[b] for b in seating]
                seat = names.index(err.bot) if err.bot in names else None
                forfeit = {"seat": seat, "bot": err.bot, "reason": str(err)}
                write_record(setup.record_dir, name, recorder.finish(forfeit=forfeit))
            raise
        write_record(setup.record_dir, name, recorder.finish(win=[r.win for r in results]))
        out.append(results)
    return out


# ----------------------------------------------------------------------------- report


def _bot_label(spec: str | Path | Bot) -> str:
    if isinstance(spec, str | Path):
        return str(spec)
    return str(getattr(spec, "name", type(spec).__name__))


def unique_labels(specs: Sequence[str | Path | Bot]) -> list[str]:
    """Readable, distinct labels: the spec (or bot name), with ``#2``, ``#3`` for repeats."""
    labels, seen = [], {}
    for spec in specs:
        base = _bot_label(spec)
        seen[base] = seen.get(base, 0) + 1
        labels.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return labels


def run_tournament(
    bots: Sequence[str | Path | Bot],
    num_players: int = 2,
    rounds: int | None = None,
    games: int | None = None,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    record_dir: str | Path | None = None,
    **rules_options: Any,
) -> dict[str, Any]:
    """Play a duplicate tournament; its report is a JSON-ready dict (docs/evaluation/evaluate.md).

    ``bots``: ``agents.load`` specs or bot objects (picklable ones for ``workers`` > 1);
    ``rounds`` (default 1000) or ``games``: the deals each table plays in every seating;
    ``record_dir`` gets a record of every game. With ``num_players=1`` (solitaire, rounds only)
    the report gives each bot's mean turns on the same deals instead of win rates. Raises
    ValueError for bad input,
    FileNotFoundError for a missing bot file, IllegalActionError / BotError when a bot misbehaves.
    """
    if rounds is not None and games is not None:
        raise ValueError("give rounds or games, not both")
    episode = "game" if games is not None else "round"
    deals = games if games is not None else (1000 if rounds is None else rounds)
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"the number of {episode}s must be a positive integer, got {deals!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if not bots:
        raise ValueError("a tournament needs at least one bot")
    rules = RulesConfig.from_dict({"num_players": num_players, **rules_options}).to_dict()
    solitaire = num_players == SOLITAIRE
    if solitaire and episode == "game":
        raise ValueError(
            "num_players=1: solitaire is scored per round, by the turns to Rack-O: give rounds, "
            "not games"
        )
    rules.pop("num_players")
    for spec in bots:  # fail early and clearly: unknown names, missing files, bad player counts
        load(spec, num_players, **rules)
    labels = unique_labels(bots)
    lineups = tables_for(len(bots), num_players)
    plan = [s for lineup in lineups for s in seatings(lineup)]
    record = None if record_dir is None else str(record_dir)
    setup = TableSetup(list(bots), labels, num_players, episode, rules, record)
    jobs = [(d, s, plan) for d, s in enumerate(deal_seeds(seed, deals))]
    outcomes = list(_run_jobs(setup, jobs, workers, progress))
    if solitaire:  # one one-seat table per bot, in the bots' order
        specs = [str(s) if isinstance(s, str | Path) else labels[b] for b, s in enumerate(bots)]
        report = solitaire_report(labels, specs, outcomes, dict(setup.rules), seed)
        report = {"schema": REPORT_SCHEMA, **report}
    else:
        report = _report(setup, lineups, plan, outcomes, seed, deals)
    if record is not None:
        report["config"]["records"] = record
    return report


def _run_jobs(
    setup: TableSetup, jobs: list[Job], workers: int, progress: bool
) -> Iterator[list[list[SeatResult]]]:
    def bar(it: Iterator[Any]) -> Iterator[Any]:
        if not progress:
            return it
        from tqdm import tqdm

        return tqdm(it, total=len(jobs), unit="deal", desc="tournament", smoothing=0.1)

    workers = min(workers, len(jobs))
    if workers == 1:
        _init_worker(setup)
        yield from bar(_play_deal(job) for job in jobs)
        return
    _check_picklable(setup)
    # forkserver: workers start from a clean process, never from a fork of a threaded parent.
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    size = max(1, min(16, len(jobs) // (workers * 8)))
    chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker, initargs=(setup,))
    try:
        futures = [pool.submit(_play_chunk, chunk) for chunk in chunks]
        yield from bar(deal for future in futures for deal in future.result())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _play_chunk(chunk: list[Job]) -> list[list[list[SeatResult]]]:
    return [_play_deal(job) for job in chunk]


def _check_picklable(setup: TableSetup) -> None:
    for label, spec in zip(setup.labels, setup.bots, strict=True):
        if isinstance(spec, str | Path):
            continue
        try:
            pickle.dumps(spec)
        except Exception as err:
            raise ValueError(
                f"bot object {label!r} cannot be sent to worker processes ({err}); "
                "pass its spec (a name, 'module:Class' or bot file) or use workers=1"
            ) from err


def _report(
    setup: TableSetup,
    lineups: list[tuple[int, ...]],
    plan: list[tuple[int, ...]],
    outcomes: list[list[list[SeatResult]]],
    seed: int,
    deals: int,
) -> dict[str, Any]:
    n_bots, n = len(setup.labels), setup.num_players
    played = [0] * n_bots
    wins = [0.0] * n_bots
    points: list[list[int]] = [[] for _ in range(n_bots)]
    racko_turns: list[list[int]] = [[] for _ in range(n_bots)]
    seat_counts = [[0] * n for _ in range(n_bots)]
    per_table = [[0.0] * n_bots for _ in lineups]
    per_table_played = [[0] * n_bots for _ in lineups]
    table_of = [i for i, lineup in enumerate(lineups) for _ in seatings(lineup)]
    model = rating_model()
    ratings = [model.rating(name=label) for label in setup.labels]
    for deal in outcomes:
        for k, match in enumerate(deal):
            t = table_of[k]
            by_bot: dict[int, list[float]] = {}
            for s, res in enumerate(match):
                b = res.bot
                played[b] += 1
                wins[b] += res.win
                points[b].extend(res.points)
                racko_turns[b].extend(res.racko_turns)
                seat_counts[b][s] += 1
                per_table[t][b] += res.win
                per_table_played[t][b] += 1
                by_bot.setdefault(b, []).append(res.rank_score)
            if len(by_bot) > 1:
                order = sorted(by_bot)
                scores = [sum(by_bot[b]) / len(by_bot[b]) for b in order]
                new = model.rate([[ratings[b]] for b in order], scores=scores)
                for b, team in zip(order, new, strict=True):
                    ratings[b] = team[0]
    bots_out = []
    for b, label in enumerate(setup.labels):
        lo, hi = wilson_interval(wins[b], played[b])
        spec = setup.bots[b]
        bots_out.append(
            {
                "name": label,
                "spec": str(spec) if isinstance(spec, str | Path) else label,
                "played": played[b],
                "wins": round(wins[b], 6),
                "win_rate": round(wins[b] / played[b], 6) if played[b] else 0.0,
                "win_rate_ci95": [round(lo, 6), round(hi, 6)],
                "rounds": len(points[b]),
                "mean_round_score": round(sum(points[b]) / len(points[b]), 4) if points[b] else 0.0,
                "rackos": len(racko_turns[b]),
                "mean_turns_to_racko": (
                    round(sum(racko_turns[b]) / len(racko_turns[b]), 4) if racko_turns[b] else None
                ),
                "rating": {
                    "mu": round(ratings[b].mu, 4),
                    "sigma": round(ratings[b].sigma, 4),
                    "ordinal": round(ratings[b].ordinal(), 4),
                },
                "seat_counts": seat_counts[b],
            }
        )
    tables_out = [
        {
            "lineup": [setup.labels[b] for b in lineup],
            "played": sum(per_table_played[t]) // n,
            "win_rate": {
                setup.labels[b]: round(per_table[t][b] / per_table_played[t][b], 6)
                for b in sorted(set(lineup))
            },
        }
        for t, lineup in enumerate(lineups)
    ]
    return {
        "schema": REPORT_SCHEMA,
        "config": {
            "players": n,
            "unit": setup.episode,
            "deals": deals,
            "seatings_per_deal": len(plan),
            "seed": seed,
            "bots": [b["spec"] for b in bots_out],
            "rules": dict(setup.rules),
        },
        "bots": bots_out,
        "tables": tables_out,
    }
