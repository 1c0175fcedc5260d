"""``racko grade BOT``: a local autograder for any bot spec, with a teacher's rubric (YAML).

    racko grade my_bot:Bot                         # the default rubric, deals of seed 0
    racko grade my_bot:Bot --rubric course.yaml --seed 2026 --json grade.json
    racko grade runs/2p/bot.onnx
    racko grade my_bot:act --gradescope results.json    # Gradescope's format (racko_apps.gradescope)

It checks, in order: the bot loads; it plays only legal moves on sampled positions of every
decision type (draw, keep-or-discard, place; positions come from seeded games of the baseline
bots); it thinks within the time limit on those positions; and it wins duplicate rounds against
each opponent the rubric names. Points per criterion come from the rubric (racko_apps/rubrics/,
format in docs/coursework.md). A ``module:Class`` bot runs sandboxed in its own process, isolated
under bubblewrap unless ``--no-isolation`` (``racko_apps.sandbox``): a crash, a hang, a flood of
output, an attack on the grader or an illegal action forfeits the
round and becomes a line of the report. ``--seed`` lets a teacher grade on deals the students
never saw. Needs no torch.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from agents.base import Bot
from agents.obs import decode
from racko_apps.referee import Strikes, is_python_spec, is_sandboxed_spec, play_match, seat_bot
from racko_apps.sandbox import (
    DEFAULT_ROUND_SECONDS,
    NOT_ISOLATED,
    PLANNER_MODULES,
    BotFailureError,
    IsolationUnavailableError,
    Limits,
    SandboxedBot,
    check_isolation,
    warm_planner,
)
from racko_env.actions import Phase
from racko_env.config import RulesConfig
from racko_env.files import write_text_atomic
from racko_env.rules import MAX_PLAYERS, MIN_PLAYERS
from racko_eval.records import safe_name

SCHEMA = "racko-grade/1"
CHECKS = ("loads", "legal", "speed", "win_rate")
# When students see a criterion on Gradescope (its test's "visibility"; racko_apps.gradescope).
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
PHASE_NAMES = {Phase.DRAW: "draw", Phase.KEEP_OR_DISCARD: "keep-or-discard", Phase.PLACE: "place"}


class RubricError(ValueError):
    """A rubric file that cannot be used; the message names the file and the key."""


# ----------------------------------------------------------------------------- the rubric


@dataclass(frozen=True)
class Criterion:
    name: str
    check: str
    points: float
    opponent: str | None = None
    thresholds: tuple[tuple[float, float], ...] = ()  # (min win rate, points), ascending
    visibility: str = "visible"  # one of VISIBILITIES (Gradescope's test visibility)


@dataclass(frozen=True)
class Rubric:
    source: str
    players: int
    seed: int
    positions: int
    rounds: int
    time_limit: float
    kill_after: float
    memory_mb: int
    max_forfeits: int
    rules: dict[str, Any]
    criteria: tuple[Criterion, ...] = field(default_factory=tuple)
    round_seconds: float = DEFAULT_ROUND_SECONDS  # a sandboxed bot's clock per round

    @property
    def max_points(self) -> float:
        return sum(c.points for c in self.criteria)


_TOP_KEYS = {
    "players": int,
    "seed": int,
    "positions": int,
    "rounds": int,
    "time_limit": float,
    "kill_after": float,
    "memory_mb": int,
    "max_forfeits": int,
    "round_seconds": float,
    "rules": dict,
    "criteria": list,
}


OPTIONAL_KEYS = ("rules", "round_seconds")  # rules: {}; round_seconds: Limits' default


def _number(value: Any, where: str, kind: type, positive: bool = True) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RubricError(f"{where} must be a number, got {value!r}")
    if kind is int and value != int(value):
        raise RubricError(f"{where} must be a whole number, got {value!r}")
    if positive and value <= 0:
        raise RubricError(f"{where} must be positive, got {value!r}")
    if not math.isfinite(value):
        raise RubricError(f"{where} must be finite, got {value!r}")
    return kind(value)


def parse_rubric(data: Any, source: str) -> Rubric:
    """Check a rubric's content and return it; RubricError names the first problem."""
    if not isinstance(data, dict):
        raise RubricError(f"rubric {source}: expected a mapping of keys, got {type(data).__name__}")
    unknown = sorted(set(data) - set(_TOP_KEYS))
    if unknown:
        raise RubricError(
            f"rubric {source}: unknown key {unknown[0]!r}; keys are {', '.join(_TOP_KEYS)}"
        )
    missing = [k for k in _TOP_KEYS if k not in data and k not in OPTIONAL_KEYS]
    if missing:
        raise RubricError(f"rubric {source}: missing key {missing[0]!r}")
    values: dict[str, Any] = {}
    for key, kind in _TOP_KEYS.items():
        if key in ("rules", "criteria") or key not in data:
            continue
        values[key] = _number(data[key], f"rubric {source}: {key}", kind, positive=key != "seed")
    if not MIN_PLAYERS <= values["players"] <= MAX_PLAYERS:
        raise RubricError(
            f"rubric {source}: players must be from {MIN_PLAYERS} to {MAX_PLAYERS}, "
            f"got {values['players']}"
        )
    rules = data.get("rules") or {}
    if not isinstance(rules, dict):
        raise RubricError(f"rubric {source}: rules must be a mapping of rules options")
    try:
        RulesConfig.from_dict({"num_players": values["players"], **rules})
    except (TypeError, ValueError) as err:
        raise RubricError(f"rubric {source}: rules: {err}") from None
    raw = data["criteria"]
    if not isinstance(raw, list) or not raw:
        raise RubricError(f"rubric {source}: criteria must be a non-empty list")
    criteria = [_criterion(c, f"rubric {source}: criteria[{i}]") for i, c in enumerate(raw)]
    names = [c.name for c in criteria]
    for name in names:
        if names.count(name) > 1:
            raise RubricError(f"rubric {source}: two criteria are named {name!r}")
    return Rubric(source=source, rules=dict(rules), criteria=tuple(criteria), **values)


def _criterion(raw: Any, where: str) -> Criterion:
    if not isinstance(raw, dict):
        raise RubricError(f"{where} must be a mapping with name and check")
    allowed = ("name", "check", "points", "opponent", "thresholds", "visibility")
    unknown = sorted(set(raw) - set(allowed))
    if unknown:
        raise RubricError(f"{where}: unknown key {unknown[0]!r}; keys are {', '.join(allowed)}")
    name, check = raw.get("name"), raw.get("check")
    if not isinstance(name, str) or not name.strip():
        raise RubricError(f"{where}: name must be a non-empty string")
    visibility = raw.get("visibility", "visible")
    if visibility not in VISIBILITIES:
        raise RubricError(
            f"{where} ({name}): visibility must be one of {', '.join(VISIBILITIES)}, "
            f"got {visibility!r}"
        )
    if check not in CHECKS:
        raise RubricError(
            f"{where} ({name}): check must be one of {', '.join(CHECKS)}, got {check!r}"
        )
    if check != "win_rate":
        if "opponent" in raw or "thresholds" in raw:
            raise RubricError(f"{where} ({name}): opponent and thresholds are for win_rate checks")
        if "points" not in raw:
            raise RubricError(f"{where} ({name}): missing points")
        points = _number(raw["points"], f"{where} ({name}): points", float, positive=False)
        if points < 0:
            raise RubricError(f"{where} ({name}): points must not be negative")
        return Criterion(name, check, points, visibility=visibility)
    if "points" in raw:
        raise RubricError(f"{where} ({name}): a win_rate check gets its points from thresholds")
    opponent = raw.get("opponent")
    if not isinstance(opponent, str) or not opponent:
        raise RubricError(f"{where} ({name}): opponent must be a bot spec such as 'heuristic'")
    if is_python_spec(opponent):
        raise RubricError(
            f"{where} ({name}): opponent must be a built-in bot or a bot file, not Python code"
        )
    steps = raw.get("thresholds")
    if not isinstance(steps, list) or not steps:
        raise RubricError(f"{where} ({name}): thresholds must be a non-empty list")
    parsed = []
    for k, step in enumerate(steps):
        at = f"{where} ({name}): thresholds[{k}]"
        if not isinstance(step, dict) or set(step) != {"win_rate", "points"}:
            raise RubricError(f"{at} must be a mapping with exactly win_rate and points")
        rate = _number(step["win_rate"], f"{at}.win_rate", float, positive=False)
        pts = _number(step["points"], f"{at}.points", float, positive=False)
        if not 0 <= rate <= 1:
            raise RubricError(f"{at}.win_rate must be from 0 to 1, got {rate}")
        if pts < 0:
            raise RubricError(f"{at}.points must not be negative")
        parsed.append((rate, pts))
    parsed.sort()
    points = max(p for _, p in parsed)
    return Criterion(name, check, points, opponent, tuple(parsed), visibility)


def shipped_rubrics() -> list[str]:
    """Names of the rubrics shipped in racko_apps/rubrics/ (``default``, ``quick``)."""
    files = resources.files("racko_apps.rubrics").iterdir()
    return sorted(f.name.removesuffix(".yaml") for f in files if f.name.endswith(".yaml"))


def load_rubric(path: str | Path | None = None) -> Rubric:
    """The rubric in the YAML file ``path``, or the shipped one of that name (``"quick"``), or
    the shipped default one."""
    import yaml

    text, source = rubric_text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise RubricError(f"rubric {source} is not valid YAML{where}") from None
    return parse_rubric(data, source)


def rubric_text(path: str | Path | None = None) -> tuple[str, str]:
    """The text of the rubric ``load_rubric(path)`` reads, and its source name (the Gradescope
    kit copies the text, comments included)."""
    if path is None or (not Path(path).exists() and str(path) in shipped_rubrics()):
        source = f"{path or 'default'}.yaml"
        text = resources.files("racko_apps.rubrics").joinpath(source).read_text()
    else:
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RubricError(f"rubric file {source!r} does not exist") from None
        except (OSError, UnicodeDecodeError) as err:
            raise RubricError(f"rubric file {source!r} cannot be read: {err}") from None
    return text, source


# ----------------------------------------------------------------------------- positions


def sample_positions(
    num_players: int, rules: dict[str, Any], seed: int, per_phase: int
) -> dict[Phase, list[dict[str, Any]]]:
    """``per_phase`` observation dicts of each decision type, from seeded baseline games.

    The games seat ``heuristic`` and seeded ``random`` bots in turn (realistic racks and odd
    ones); a position is the acting seat's observation. The same seed gives the same positions.
    """
    import agents
    from racko_env import racko_v1

    rng = random.Random(seed)
    pool: dict[Phase, list[dict[str, Any]]] = {p: [] for p in PHASE_NAMES}
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


# ----------------------------------------------------------------------------- grading


def _bot_object(seated: str | Bot, rubric: Rubric) -> Bot:
    if isinstance(seated, str):
        import agents

        return agents.load(seated, rubric.players, **rubric.rules)
    return seated


def grade(
    spec: str,
    rubric: Rubric,
    seed: int | None = None,
    folder: str | Path = ".",
    isolate: bool = True,
    record_dir: Path | None = None,
) -> dict[str, Any]:
    """Grade the bot ``spec`` (a ``module:Class`` in ``folder``, a built-in name or a bot file)
    and return the report (a JSON-ready dict; ``report["total"]`` is the points earned).

    ``isolate``: a Python bot runs under bubblewrap (racko_apps.sandbox); IsolationUnavailableError
    when it cannot. Without it the report says so at its top (``isolated``, ``warning``).
    ``record_dir``: a record of every game, one folder per criterion; each criterion's row links
    its forfeits and lost rounds to theirs (``records``; docs/records.md)."""
    if isolate and is_sandboxed_spec(spec):
        check_isolation()
    seed = rubric.seed if seed is None else seed
    limits = Limits(
        move_seconds=rubric.kill_after,
        round_seconds=rubric.round_seconds,
        memory_mb=rubric.memory_mb,
    )
    strikes = Strikes(rubric.max_forfeits)
    failures: list[str] = []
    measured: dict[str, Any] = {}
    seated: str | Bot | None = None
    load_error = ""
    try:
        seated = seat_bot(
            spec, rubric.players, rubric.rules, folder=folder, limits=limits, isolate=isolate
        )
    except BotFailureError as err:
        load_error = err.reason
    except (ValueError, TypeError, FileNotFoundError, ImportError) as err:
        load_error = " ".join(str(err).split())
    if load_error:
        failures.append(f"{spec} does not load: {load_error}")
    try:
        if seated is not None:
            bot = _bot_object(seated, rubric)
            if not isinstance(bot, SandboxedBot) and any(m in sys.modules for m in PLANNER_MODULES):
                warm_planner(rubric.players)  # loaded before it is timed, as a sandbox does
            measured.update(_check_positions(spec, bot, rubric, seed, strikes, failures))
            for crit in rubric.criteria:
                if crit.check == "win_rate" and crit.name not in measured:
                    measured[crit.name] = _play(
                        spec, seated, crit, rubric, seed, strikes, failures, record_dir
                    )
                if isinstance(seated, SandboxedBot):  # nothing it started outlives its games
                    seated.end_game()
    finally:
        if isinstance(seated, SandboxedBot):
            seated.close()
    rows = []
    for crit in rubric.criteria:
        rows.append(_score(crit, seated is not None, load_error, measured, rubric))
    total = sum(r["points"] for r in rows)
    return {
        **({} if isolate else {"isolated": False, "warning": NOT_ISOLATED}),
        "schema": SCHEMA,
        "bot": spec,
        "rubric": rubric.source,
        "seed": seed,
        "players": rubric.players,
        "rules": rubric.rules,
        "criteria": rows,
        "total": round(total, 6),
        "max_total": round(rubric.max_points, 6),
        "forfeits": strikes.count,
        "failures": failures,
    }


def _check_positions(
    spec: str, bot: Bot, rubric: Rubric, seed: int, strikes: Strikes, failures: list[str]
) -> dict[str, Any]:
    positions = sample_positions(rubric.players, rubric.rules, seed, rubric.positions)
    asked = legal = answered = skipped = 0
    slowest = 0.0
    for phase, group in positions.items():
        for k, obs in enumerate(group):
            where = f"{PHASE_NAMES[phase]} position {k}"
            if strikes.out:
                skipped += 1
                asked += 1
                continue
            asked += 1
            try:
                bot.reset()
                start = time.perf_counter()
                action = bot.act(obs)
                seconds = time.perf_counter() - start
            except BotFailureError as err:
                strikes.count += 1
                failures.append(f"{spec}: {where}: {err.reason}")
                continue
            except Exception as err:  # an in-process bot (built-in or ONNX) that raises
                strikes.count += 1
                failures.append(f"{spec}: {where}: raised {type(err).__name__}: {err}")
                continue
            answered += 1
            if isinstance(bot, SandboxedBot):
                seconds = bot.last_seconds
            slowest = max(slowest, seconds)
            mask = obs["action_mask"]
            ok = (
                not isinstance(action, bool) and isinstance(action, int) and 0 <= action < len(mask)
            )
            if ok and mask[action]:
                legal += 1
            else:
                strikes.count += 1
                allowed = [int(a) for a in range(len(mask)) if mask[a]]
                failures.append(
                    f"{spec}: {where}: illegal action {action!r} (legal actions: {allowed})"
                )
    if skipped:
        failures.append(
            f"{spec}: {skipped} position(s) not asked: it reached {strikes.limit} forfeit(s)"
        )
    return {
        "legal": {"asked": asked, "legal": legal},
        "speed": {"answered": answered, "asked": asked, "max_seconds": round(slowest, 6)},
    }


def _play(
    spec: str,
    seated: str | Bot,
    crit: Criterion,
    rubric: Rubric,
    seed: int,
    strikes: Strikes,
    failures: list[str],
    record_dir: Path | None = None,
) -> dict[str, Any]:
    assert crit.opponent is not None
    label = spec
    opp_label = crit.opponent if crit.opponent != spec else f"{crit.opponent}#2"
    opponent = seat_bot(crit.opponent, rubric.players, rubric.rules)
    match = play_match(
        [seated, opponent],
        [label, opp_label],
        num_players=rubric.players,
        deals=rubric.rounds,
        seed=seed,
        rules=rubric.rules,
        strikes=[strikes, Strikes(10**9)],
        record_dir=None if record_dir is None else record_dir / safe_name(crit.name),
    )
    failures.extend(match.forfeit_lines)
    records = {} if record_dir is None else {"records": match.record_links(0)}
    return {
        **records,
        "opponent": crit.opponent,
        "rounds": match.played[0],
        "wins": round(match.wins[0], 6),
        "win_rate": round(match.win_rate(0), 6),
        "forfeits": match.forfeits[0],
        "mean_round_score": round(sum(match.points[0]) / len(match.points[0]), 4)
        if match.points[0]
        else 0.0,
    }


def _score(
    crit: Criterion, loaded: bool, load_error: str, measured: dict[str, Any], rubric: Rubric
) -> dict[str, Any]:
    row: dict[str, Any] = {"name": crit.name, "check": crit.check, "max_points": crit.points}
    if crit.check == "loads":
        row.update(points=crit.points if loaded else 0.0, result="loads" if loaded else load_error)
        return row
    if not loaded:
        row.update(points=0.0, result="not graded: the bot did not load")
        return row
    if crit.check == "legal":
        m = measured["legal"]
        ok = m["legal"] == m["asked"]
        row.update(m, points=crit.points if ok else 0.0, result=f"{m['legal']}/{m['asked']} legal")
        return row
    if crit.check == "speed":
        m = measured["speed"]
        all_answered = m["answered"] == m["asked"]
        ok = all_answered and m["max_seconds"] <= rubric.time_limit
        row.update(
            m,
            time_limit=rubric.time_limit,
            points=crit.points if ok else 0.0,
            result=f"slowest decision {m['max_seconds'] * 1000:.1f} ms "
            f"(limit {rubric.time_limit * 1000:.0f} ms)"
            + ("" if all_answered else f"; {m['asked'] - m['answered']} not answered"),
        )
        return row
    m = measured[crit.name]
    earned = 0.0
    for rate, pts in crit.thresholds:
        if m["win_rate"] >= rate:
            earned = max(earned, pts)
    row.update(
        m,
        thresholds=[{"win_rate": r, "points": p} for r, p in crit.thresholds],
        points=earned,
        result=f"win rate {m['win_rate']:.1%} in {m['rounds']} rounds"
        + (f", {m['forfeits']} forfeited" if m["forfeits"] else ""),
    )
    return row


# ----------------------------------------------------------------------------- the command


RECORDS_SHOWN = 5  # lost rounds' records named per criterion in the text report (--json: all)


def format_report(report: dict[str, Any]) -> str:
    """The report as a Markdown table, then the failures (one line each)."""
    lines = [f"**{report['warning']}**", ""] if "warning" in report else []
    lines += [
        f"grade of {report['bot']} (rubric {report['rubric']}, seed {report['seed']}, "
        f"{report['players']} players)",
        "",
        "| criterion | result | points |",
        "|---|---|---:|",
    ]
    for row in report["criteria"]:
        lines.append(
            f"| {row['name']} | {row['result']} | {row['points']:g} / {row['max_points']:g} |"
        )
    lines.append(f"| **total** | | **{report['total']:g} / {report['max_total']:g}** |")
    if report["failures"]:
        lines += ["", "failures:"] + [f"- {line}" for line in report["failures"]]
    lost = [(row["name"], row["records"]["lost"]) for row in report["criteria"] if "records" in row]
    if lost:
        lines += ["", "records of lost rounds (racko replay FILE):"]
        for name, paths in lost:
            shown = ", ".join(paths[:RECORDS_SHOWN]) or "none"
            more = len(paths) - RECORDS_SHOWN
            lines.append(
                f"- {name}: {shown}" + (f" and {more} more (in --json)" if more > 0 else "")
            )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="racko grade",
        description="Grade a bot: it loads, plays legal moves fast enough on sampled positions, "
        "and wins duplicate rounds against the baselines; points from a rubric (YAML).",
    )
    parser.add_argument(
        "bot",
        metavar="BOT",
        help="module:Class or module:act (a .py file in the current folder), or a .onnx bot",
    )
    parser.add_argument(
        "--rubric", type=Path, metavar="FILE", help="rubric YAML (default: shipped)"
    )
    parser.add_argument("--seed", type=int, help="deals and positions seed (default: the rubric's)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the report as JSON")
    parser.add_argument(
        "--record", type=Path, metavar="DIR", help="write a record of every game to DIR (replays)"
    )
    parser.add_argument(
        "--gradescope",
        type=Path,
        metavar="PATH",
        help="also write Gradescope's results.json (racko_apps.gradescope)",
    )
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="run a Python bot without bubblewrap (only for bots you trust; the report says so)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        rubric = load_rubric(args.rubric)
        gradescope = _gradescope_writer() if args.gradescope else None
    except (RubricError, ImportError) as err:
        print(f"racko grade: error: {err}", file=sys.stderr)
        return 2
    try:
        report = grade(
            args.bot,
            rubric,
            seed=args.seed,
            folder=Path.cwd(),
            isolate=not args.no_isolation,
            record_dir=args.record,
        )
    except IsolationUnavailableError as err:
        print(f"racko grade: error: {err}", file=sys.stderr)
        return 2
    print(format_report(report))
    if args.json:
        write_text_atomic(args.json, json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}")
    if gradescope is not None:
        gradescope(args.gradescope, report, rubric)
        print(f"wrote {args.gradescope}")
    return 0


def _gradescope_writer() -> Any:
    """``racko_apps.gradescope.write_report``, imported before any game is played, so that a
    missing extra is said at once (MissingExtraError, one line naming the 'eval' extra)."""
    from agents.extras import needs_extra

    with needs_extra("pydantic", "eval", "racko grade --gradescope"):
        from racko_apps.gradescope import write_report
    return write_report


if __name__ == "__main__":
    sys.exit(main())
