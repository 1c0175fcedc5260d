"""A match's rounds played side by side, so that a sandboxed bot pays its sandbox's cost per
exchange, not per move.

Each move of a sandboxed bot crosses a pipe both ways and stops and continues its sandbox: most
of what a league's pairing costs. ``play_lockstep`` keeps ``tables`` rounds going at once and
sends a sandboxed bot the moves of all the rounds waiting for it in one request
(``SandboxedBot.play_tables``). Each table has a bot object of its own, seeded and reset as one
round at a time would, so a bot whose state lives in its object plays the same games. A bot that
crashes or plays an illegal move loses that table's round; one whose sandbox must be killed
loses every round in flight with it.
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents.base import Bot
from racko_apps.referee.book import Book, Job
from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.wire import BotFailureError, act_request
from racko_eval import BotError, DealPlayer, GameRecorder, IllegalActionError, TableSetup
from racko_eval.tournament import Ask

if TYPE_CHECKING:
    from collections.abc import Generator


class TableBot(Bot):
    """One table's bot inside a sandbox that plays several: ``seed`` and ``reset`` are queued
    and go with the table's next move (``request``)."""

    explain_in_records = False  # as the sandbox's: explaining would run the student's code again

    def __init__(self, sandbox: SandboxedBot, table: int) -> None:
        self.sandbox = sandbox
        self.table = table
        self.pending: list[dict[str, Any]] = []

    def seed(self, seed: int | None) -> None:
        self.pending.append({"table": self.table, "cmd": "seed", "seed": seed})

    def reset(self) -> None:
        self.pending.append({"table": self.table, "cmd": "reset"})

    def request(self, observation: Any) -> list[dict[str, Any]]:
        """What is queued for this table, then its move for ``observation``."""
        items, self.pending = self.pending, []
        items.append(act_request(observation, table=self.table))
        return items

    def act(self, observation: Any) -> int:
        got = self.sandbox.play_tables(self.request(observation))[self.table]
        if "action" not in got:
            raise BotFailureError(self.sandbox.name, got["kind"], got["reason"])
        return int(got["action"])


@dataclass
class _Round:
    order: int
    job: Job
    game: Generator[Ask, int, Any]
    recorder: GameRecorder | None
    ask: Ask | None = None  # the move it waits for, from a sandboxed bot


def _seat_tables(
    setup: TableSetup, tables: int
) -> tuple[dict[int, SandboxedBot], list[DealPlayer]]:
    """A bot object per table in each sandbox, and a player per table (as many as all built)."""
    sandboxes = {i: b for i, b in enumerate(setup.bots) if isinstance(b, SandboxedBot)}
    for bot in sandboxes.values():
        if bot.tables < tables:  # a bot object per table, built when its sandbox starts
            bot.close()
            bot.tables = tables
        try:
            bot.start()
        except BotFailureError:
            pass  # it fails again at its first move, and its rounds are lost there
        tables = min(tables, bot.tables)  # as many as it could build under its memory limit
    players = []
    for t in range(tables):
        seated: list[Any] = [
            TableBot(b, t) if isinstance(b, SandboxedBot) else (copy.deepcopy(b) if t else b)
            for b in setup.bots
        ]
        table = TableSetup(seated, setup.labels, setup.num_players, "round", setup.rules)
        players.append(DealPlayer(table))
    return sandboxes, players


def play_lockstep(setup: TableSetup, jobs: list[Job], book: Book, tables: int) -> None:
    """Play ``jobs`` (the match's rounds) ``tables`` at a time into ``book``. Each bot sits at
    most once per seating."""
    sandboxes, players = _seat_tables(setup, tables)
    tables = len(players)
    queue = deque(enumerate(jobs))
    live: dict[int, _Round] = {}

    def start(t: int) -> bool:
        """Table ``t`` takes the next round to be played, if any."""
        while queue:
            order, job = queue.popleft()
            go, recorder = book.begin(job)
            if not go:
                book.finish(order, job)
                continue
            game = players[t].steps(job[1], job[3], job[2], recorder)
            live[t] = _Round(order, job, game, recorder)
            return True
        return False

    def lose(t: int, culprit: int, reason: str) -> None:
        r = live.pop(t)
        r.game.close()
        book.finish(r.order, r.job, None, culprit, reason, r.recorder)

    def play(t: int, action: int | None) -> None:
        """Table ``t``'s round goes on with ``action`` (None: it starts) until it waits for a
        sandboxed bot; an ended round makes way for the next."""
        while True:
            r = live[t]
            try:
                ask = next(r.game) if action is None else r.game.send(action)
            except StopIteration as done:
                live.pop(t)
                book.finish(r.order, r.job, done.value, recorder=r.recorder)
                if not start(t):
                    return
                action = None
                continue
            if isinstance(ask.bot, TableBot):
                r.ask = ask
                return
            try:  # a built-in bot, in this process
                action = players[t]._ask(ask, r.job[1])
            except (BotError, IllegalActionError) as err:
                lose(t, book.culprit(err, r.job[3]), str(err))
                if not start(t):
                    return
                action = None

    for t in range(tables):
        if start(t):
            play(t, None)
    while live:
        for index, sandbox in sandboxes.items():  # one bot at a time: the other is stopped
            waiting = [
                t for t, r in live.items() if r.ask is not None and r.ask.bot.sandbox is sandbox
            ]
            if not waiting:
                continue
            asks = {t: live[t].ask for t in waiting}
            items = [item for t in waiting for item in asks[t].bot.request(asks[t].obs)]
            free: list[int] = []  # tables whose round was lost: they take the next ones after
            try:
                got = sandbox.play_tables(items)
            except BotFailureError as err:  # its process was killed: its rounds in flight end
                free = [t for t, r in live.items() if index in r.job[3]]
                for t in free:
                    lose(t, index, err.reason)
                got = {}
            for t in waiting:
                if t in free:
                    continue
                r = live[t]
                ask, r.ask = asks[t], None
                answer = got.get(t, {"reason": "gave no answer to its move"})
                if "action" not in answer:
                    lose(t, index, answer["reason"])
                    free.append(t)
                    continue
                try:
                    action = players[t].check_action(ask, answer["action"], r.job[1])
                except IllegalActionError as err:
                    lose(t, index, str(err))
                    free.append(t)
                    continue
                play(t, action)
            for t in free:
                if start(t):
                    play(t, None)
