"""The table of the terminal game: drives ``racko_v1.raw_env`` and draws it with rich.

To describe a move (and reveal the racks of a round the env has already re-dealt) the table
plays it on ``game.clone()`` first, so what is shown is the engine's own result.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.base import describe_action
from agents.extras import needs_extra
from racko_apps.play.hint import bot_probabilities, confidence_line
from racko_apps.play.text import (
    HELP_TEXT,
    SLOT_LABELS,
    describe_turn,
    explain_score,
    label_bot_slots,
    parse_command,
    prompt_for,
)
from racko_env import racko_v1
from racko_env.actions import ACTION_NAMES, DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase
from racko_env.config import RulesConfig
from racko_env.engine import RackoGame
from racko_env.rules import ascending_prefix
from racko_eval.records import Explainer, GameRecorder, write_record

with needs_extra("rich", "play", "the terminal game"):  # one line naming the extra if missing
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.padding import Padding
    from rich.table import Table as RichTable
    from rich.text import Text

LOG_LINES = 10
ROUND_END_PAUSE = 5  # --watch: the scores stay this many --delay periods
UNDER_DISCARD = 6
KEYS_LINE = "Keys: d draw, t take, k keep, x discard, 5..50 slot label, ? help, q quit"
_ACTION_KEY = {DRAW_PILE: "d", TAKE_DISCARD: "t", KEEP: "k", DISCARD: "x"}


class QuitRequestedError(Exception):
    """The human typed q: leave as at the end of input."""


class BotError(RuntimeError):
    """A bot answered with an action the rules do not allow now."""


def bot_label(spec: str) -> str:
    """A short name for a bot spec: a bot file's name without its folder, else the spec itself."""
    return Path(spec).name if spec.lower().endswith(".onnx") else spec


def check_bot_action(game: RackoGame, action: Any, who: str) -> int:
    """The bot's action as an int, or BotError naming the bot, its action and the legal ones."""
    try:
        value = int(action)
    except (TypeError, ValueError):
        value = None
    if value is None or value != action or not game.is_legal(value):
        legal = ", ".join(f"{a} ({ACTION_NAMES[a]})" for a in game.legal_actions())
        raise BotError(
            f"bot {who} chose the illegal action {action!r} in phase "
            f"{Phase(game.phase).name}; legal actions are {legal}"
        )
    return value


class Table:
    """One terminal game: a human (unless ``watch``) and bots, through the real AEC env."""

    def __init__(
        self,
        config: RulesConfig,
        seat_specs: Sequence[str | None],
        bots: Sequence[Any],
        hint: tuple[str, Any] | None = None,
        watch: bool = False,
        delay: float = 1.0,
        rounds: int | None = None,
        seed: int | None = None,
        record_dir: Path | None = None,
    ) -> None:
        self.config = config
        self.specs = list(seat_specs)
        self.bots = list(bots)
        self.hint = hint
        self.watch = watch
        self.delay = delay
        self.max_rounds = rounds
        self.seed = seed
        self.console = Console(highlight=False)
        self.echo = not sys.stdin.isatty()  # piped input is not echoed by the terminal
        options = config.to_dict()
        n = options.pop("num_players")
        self.env = racko_v1.raw_env(num_players=n, episode="game", **options)
        self.game: RackoGame = self.env.game
        self.n = n
        self.human = None if watch else self.specs.index(None)
        self.events: list[str] = []
        self.events_shown = 0  # events already on the human's screen
        self.rounds_played = 0
        self.screens_drawn = 0
        self.finished = False
        self.record_dir = record_dir
        self.recorder: GameRecorder | None = None
        if record_dir is not None:
            seats = [
                {"bot": "human" if spec is None else bot_label(str(spec)), "spec": spec}
                for s, spec in enumerate(self.specs)
            ]
            self.recorder = GameRecorder("game", seats, {"source": "play"})

    # ----------------------------------------------------------------- names

    def name(self, seat: int, start: bool = True) -> str:
        """A seat in a sentence: player_1, or You / you for the human."""
        if seat == self.human:
            return "You" if start else "you"
        return f"player_{seat}"

    def row_name(self, seat: int) -> str:
        if seat == self.human:
            return f"You (player_{seat})"
        return f"player_{seat} ({bot_label(str(self.specs[seat]))})"

    def team_name(self, team: int) -> str:
        if not self.config.partners:
            return self.row_name(team)
        return f"team {team + 1} ({self.name(team, False)} + {self.name(team + 2, False)})"

    # ----------------------------------------------------------------- the game loop

    def run(self) -> int:
        """Play until the game ends; 0 when finished or input ended, 130 on Ctrl-C, 1 bot error."""
        try:
            self._play()
        except (EOFError, QuitRequestedError):
            self._leave("Left the game")
            return 0
        except KeyboardInterrupt:
            self._leave("Interrupted")
            return 130
        except BotError as err:
            self.console.print(Text(f"error: {err}", style="bold red"))
            return 1
        except BrokenPipeError:  # e.g. `racko --watch | head`: the reader left
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 1
        finally:
            self._save_record()
        return 0

    def _save_record(self) -> None:
        """Write the game so far (finished or left) as a record; its path goes to stderr."""
        if self.recorder is None or self.recorder.game is None or self.record_dir is None:
            return
        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = f"game-{stamp}" + ("" if self.seed is None else f"-seed{self.seed}")
        path = write_record(self.record_dir, name, self.recorder.finish())
        print(f"wrote the record of this game: {path} (racko replay {path})", file=sys.stderr)

    def _play(self) -> None:
        self.env.reset(seed=self.seed)
        if self.recorder is not None:
            self.recorder.start(self.game, self.seed)
        explainer = Explainer() if self.recorder is not None else None
        self._intro()
        self._round_started()
        while not self.finished:
            game = self.game
            seat = game.current
            why = None
            if seat == self.human:
                actions = self._ask_human()
            else:
                obs = self.env.observe(self.env.agent_selection)
                who = self.row_name(seat)
                if explainer is not None:
                    explainer.before(self.bots[seat])
                try:
                    action = self.bots[seat].act(obs)
                except Exception as err:  # a user's or a trained bot: report it, do not crash
                    raise BotError(f"bot {who} failed: {type(err).__name__}: {err}") from err
                actions = [check_bot_action(game, action, who)]
                why = explainer.after(obs) if explainer is not None else None
            for action in actions:
                self._step(action, why)

    def _step(self, action: int, why: str | None = None) -> None:
        """Play one action through the env; log the turn and finish the round when it ends."""
        game = self.game
        seat = game.current
        turns_before = len(game.log)
        after = game.clone()
        after.apply(action)
        self.env.step(action)
        if self.recorder is not None:
            self.recorder.move(seat, action, why)
        if len(after.log) > turns_before:
            record = after.log[-1]
            full_view = self.watch or seat == self.human
            drawn = None
            if full_view and record.source == DRAW_PILE and record.slot is not None:
                drawn = after.racks[seat][record.slot]
            line = describe_turn(record, self.name(seat), drawn)
            self.events.append(line)
            if self.watch:
                self._watch_turn(after, line)
        if after.round_over:
            self._round_over(after)

    def _round_started(self) -> None:
        for bot in [*self.bots, self.hint[1] if self.hint else None]:
            reset = getattr(bot, "reset", None)  # optional for a user's bot class
            if reset is not None:
                reset()
        game = self.game
        self.events_shown = 0
        self.events = [
            f"Round {game.round_number} dealt by {self.name(game.dealer, start=False)}; "
            f"{self.name(game.current)} move{'' if game.current == self.human else 's'} first."
        ]
        if self.watch:
            self.console.rule(f"Round {game.round_number}")

    # ----------------------------------------------------------------- the human

    def _ask_human(self) -> list[int]:
        game = self.game
        self._show(game)
        question = prompt_for(game.phase, game.held, game.discard_top, len(game.draw))
        while True:
            line = self._read(f"[bold]{escape(question)}[/bold] > ")
            cmd = parse_command(
                line, game.phase, game.held, game.discard_top, game.held_from_discard
            )
            if cmd.help:
                self.console.print(HELP_TEXT)
            elif cmd.quit:
                raise QuitRequestedError
            elif cmd.error:
                self.console.print(Text(f"  {cmd.error} Type ? for help.", style="red"))
            else:
                return list(cmd.actions)

    def _read(self, prompt: str) -> str:
        self.console.print(prompt, end="", soft_wrap=True)
        line = input()
        if self.echo:
            self.console.print(Text(line), soft_wrap=True)
        return line

    def _hint_line(self, game: RackoGame) -> Text | None:
        if self.hint is None or self.human is None:
            return None
        spec, bot = self.hint
        obs = self.env.observe(self.env.agent_selection)
        try:
            action = int(bot.act(obs))
            key = _ACTION_KEY.get(action) or SLOT_LABELS[action]
            probabilities = bot_probabilities(bot, obs)
            why = None if probabilities else bot.explain(obs)
        except Exception as err:  # advice is optional: the game goes on without it
            return Text(f"Hint ({bot_label(spec)}) unavailable: {type(err).__name__}: {err}")
        if probabilities:  # a trained bot: how sure it is, over the legal moves
            sure = label_bot_slots(confidence_line(probabilities, describe_action))
            return Text(f"Hint ({bot_label(spec)}): type {key}. Its odds: {sure}", style="cyan")
        why = label_bot_slots(why)
        return Text(f"Hint ({bot_label(spec)}): type {key}. Why: {why}", style="cyan")

    # ----------------------------------------------------------------- drawing

    def _intro(self) -> None:
        c = self.config
        opts = [f"game to {c.target_score}"]
        if self.max_rounds:
            opts.append(f"at most {self.max_rounds} round(s)")
        opts.append(f"turn limit {c.turn_limit}")
        opts.append(f"empty draw pile: {c.empty_pile}")
        if c.min_run:
            opts.append(f"Rack-O needs a run of {c.min_run}")
        if c.bonus:
            opts.append("Bonus Rack-O")
        if c.partners:
            opts.append("partners (seats 0+2 vs 1+3)")
        seats = ", ".join(self.row_name(s) for s in range(self.n))
        self.console.print(f"[bold]Rack-O[/bold], {self.n} players: {escape(seats)}")
        self.console.print("Rules: " + ", ".join(opts) + ".")
        if self.human is not None:
            self.console.print(HELP_TEXT)

    def _rack_table(self, game: RackoGame, reveal: bool, round_points: bool = False) -> RichTable:
        """Every seat's rack as far as the viewer may see it; the last move's slot underlined."""
        table = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        table.add_column("slot")
        for label in SLOT_LABELS[: game.rack_size]:
            table.add_column(str(label), justify="right")
        if round_points:
            table.add_column("round", justify="right")
        table.add_column("total" if round_points else "score", justify="right")
        scores = game.scores
        last = game.log[-1] if game.log else None
        for seat in range(self.n):
            shown = reveal or seat == self.human
            rack = game.racks[seat] if shown else game.public_slots[seat]
            good = ascending_prefix(rack) if shown else 0
            cells = []
            for i, card in enumerate(rack):
                style = "green" if i < good else ""
                if last is not None and last.player == seat and last.slot == i:
                    style += " underline"
                cells.append(Text(str(card), style=style) if card else Text("·", style="dim"))
            name = Text(self.row_name(seat), style="bold" if seat == game.current else "")
            extra = [str(game.last_round_points[seat])] if round_points else []
            table.add_row(name, *cells, *extra, str(scores[seat]))
        return table

    def _header(self, game: RackoGame) -> str:
        return (
            f"Rack-O - round {game.round_number}, turn {game.turn + 1} "
            f"(limit {self.config.turn_limit}), dealer {self.name(game.dealer, start=False)}, "
            f"game to {self.config.target_score}"
        )

    def _piles(self, game: RackoGame) -> str:
        under = game.discard[-1 - UNDER_DISCARD : -1][::-1]
        below = f" (below it: {', '.join(map(str, under))})" if under else ""
        top = f"{game.discard_top}" if game.discard else "empty"
        return f"Discard pile: {top}{below}    Draw pile: {len(game.draw)} cards"

    def _show(self, game: RackoGame) -> None:
        con = self.console
        if con.is_terminal and self.screens_drawn:
            con.clear()  # the first screen keeps the rules and help above it
        self.screens_drawn += 1
        con.rule(self._header(game))
        if self.config.partners:
            con.print("Teams: " + escape(self._totals_text(self.game)))
        con.print(self._rack_table(game, reveal=self.watch))
        if not self.watch:
            con.print("  (· = a card you have not seen; green = your ascending run from slot 5)")
        con.print(self._piles(game))
        if game.held is not None and (self.watch or game.current == self.human):
            source = "discard pile" if game.held_from_discard else "draw pile"
            con.print(f"In hand: [bold]{game.held}[/bold] (from the {source})")
        con.print("Log:")
        for line in self.events[-LOG_LINES:]:
            con.print(Text("  " + line))
        self.events_shown = len(self.events)
        if not self.watch:
            con.print(KEYS_LINE, style="dim")
        hint = self._hint_line(game)
        if hint is not None:
            con.print(hint)

    def _watch_turn(self, after: RackoGame, line: str) -> None:
        if self.console.is_terminal:
            self._show(after if after.round_over else self.game)
        else:
            self.console.print(Text(line), soft_wrap=True)
        if self.delay:
            time.sleep(self.delay)

    # ----------------------------------------------------------------- end of a round / game

    def _round_over(self, done: RackoGame) -> None:
        """Reveal every rack with its scoring, then the totals; end the game or deal the next."""
        con = self.console
        cfg = self.config
        self.rounds_played += 1
        if done.racko_player is not None:
            why = f"{self.name(done.racko_player)} went Rack-O!"
            if done.racko_player == self.human:
                why = "You went Rack-O!"
        else:
            why = f"cut off after {done.turn} turns (the turn limit) without a Rack-O"
        if not self.watch:
            for line in self.events[self.events_shown :]:
                con.print(Text(line))
        con.rule(f"Round {done.round_number} over: {why}")
        con.print(self._rack_table(done, reveal=True, round_points=True))
        for seat in range(self.n):
            rack = done.racks[seat]
            lines = explain_score(rack, seat == done.racko_player, cfg)
            con.print(Text(f"{self.row_name(seat)}:", style="bold"))
            for line in lines:
                con.print(Padding(Text(line), (0, 0, 0, 4), expand=False))
        if cfg.partners:
            pts = done.last_round_points
            for team in range(2):
                a, b = team, team + 2
                con.print(
                    f"{escape(self.team_name(team))}: {pts[a]} + {pts[b]} = {pts[a] + pts[b]} "
                    "this round"
                )
        con.print("Totals: " + escape(self._totals_text(done)))
        cut = self.max_rounds is not None and self.rounds_played >= self.max_rounds
        if done.game_over or cut:
            self.finished = True
            best = max(done.totals)
            leaders = (
                [done.game_winner]
                if done.game_over
                else [t for t, s in enumerate(done.totals) if s == best]
            )
            if len(leaders) == 1:
                result = f"{self.team_name(leaders[0])} won with {done.totals[leaders[0]]} points"
            else:
                names = " and ".join(self.team_name(t) for t in leaders)
                result = f"a tie between {names} at {best} points"
            rounds = (
                f" after {self.rounds_played} round(s) (--rounds)" if not done.game_over else ""
            )
            con.rule(f"Game over{rounds}")
            con.print(f"[bold]{escape(result)}.[/bold]")
            con.print(f"Final totals: {escape(self._totals_text(done))}")
            return
        if self.human is not None:
            line = self._read(f"Press Enter to deal round {done.round_number + 1} (q to leave) > ")
            if line.strip().lower() in ("q", "quit", "exit"):
                raise QuitRequestedError
        elif self.delay:
            time.sleep(ROUND_END_PAUSE * self.delay)  # let a class read the scores
        self._round_started()

    def _totals_text(self, game: RackoGame) -> str:
        return ", ".join(f"{self.team_name(t)} {s}" for t, s in enumerate(game.totals))

    def _leave(self, how: str) -> None:
        game = self.game
        self.console.print()
        self.console.print(
            f"{how} in round {game.round_number}, turn {game.turn + 1}: "
            f"{self._totals_text(game)} (game to {self.config.target_score}).",
            soft_wrap=True,
            markup=False,
        )
