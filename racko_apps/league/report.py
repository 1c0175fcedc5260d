"""A league's report: the standings as Markdown, JSON and a self-contained HTML page with a plot.

Every name in a report is a label of the safe alphabet (``submissions``); any other text
from a submission is one line, in a Markdown list item or escaped HTML, so it cannot add a row.
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

from racko_env.files import write_text_atomic
from racko_eval.course_files import write_csv


def game_text(cfg: dict[str, Any]) -> str:
    """The game played: its players and any rules option other than the default."""
    rules = cfg.get("rules") or {}
    options = ", ".join(f"{k.replace('_', '-')} {v}" for k, v in sorted(rules.items()))
    return f"{cfg['players']} players" + (f" ({options})" if options else "")


def seed_text(cfg: dict[str, Any]) -> str:
    """The deals' seed as students may see it: a practice seed, but never a secret one."""
    if cfg.get("seed_secret"):
        return "secret deals (the seed is in the teacher's league.json)"
    return f"seed {cfg['seed']}"


def _cells(report: dict[str, Any]) -> list[list[str]]:
    """The standings table's cells: rank, bot, rating (95% CI), win rate, rounds, forfeits."""
    return [
        [str(i), b["name"], f"{b['mu']:.1f} ({b['ci95'][0]:.1f}-{b['ci95'][1]:.1f})"]
        + [f"{b['win_rate']:.1%}", str(b["rounds"]), str(b["forfeits"])]
        for i, b in enumerate(report["bots"], 1)
    ]


def _notes(report: dict[str, Any]) -> list[str]:
    """The bots left out, then every forfeit's line."""
    skipped = [f"left out: {s}" for s in report["skipped"]]
    return skipped + [line for p in report["pairings"] for line in p["forfeits"]]


def provisional_text(report: dict[str, Any]) -> str | None:
    """The line a provisional report opens with (its schedule was not done), else None."""
    if not report.get("provisional"):
        return None
    why = report.get("provisional_reason") or "the league was stopped before its schedule was done"
    return (
        f"Provisional ranking: {why} before the schedule was done; run the same command again "
        "to go on from the record."
    )


def format_markdown(report: dict[str, Any]) -> str:
    cfg = report["config"]
    provisional = provisional_text(report)
    lines = [f"**{provisional}**", ""] if provisional else []
    lines += [f"**{report['warning']}**", ""] if "warning" in report else []
    lines += [
        f"# League of {len(report['bots'])} bots",
        "",
        f"{game_text(cfg)}, {cfg['rounds']} duplicate deals per pairing in every seating, "
        f"{seed_text(cfg)}. Rating: OpenSkill mu with its 95% interval (mu ± 1.96 sigma); "
        "ranked by mu - 3 sigma.",
        "",
    ]
    sure = report.get("sure")
    if sure:
        lines += [
            f"Adaptive schedule: {len(report['pairings'])} pairings; stopped because "
            f"{sure['stopped']}. How sure: the widest 95% interval is ±"
            f"{sure['widest_half_width']:.2f}; {sure['within_target']} of {len(report['bots'])} "
            f"bots are within ±{cfg['target']:g}; {sure['neighbours_apart']} of "
            f"{sure['neighbours']} neighbours in the ranking have intervals that do not overlap.",
            "",
        ]
    lines += [
        "| rank | bot | rating (95% CI) | win rate | rounds | forfeits |",
        "|---:|---|---|---:|---:|---:|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in _cells(report)]
    notes = _notes(report)
    if notes:
        lines += ["", "## Notes", ""] + [f"- {line}" for line in notes]
    return "\n".join(lines) + "\n"


def plot_png(report: dict[str, Any]) -> bytes:
    """Ratings with their 95% intervals, best on top, as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bots = report["bots"]
    names = [b["name"] for b in bots]
    mus = [b["mu"] for b in bots]
    err = [[b["mu"] - b["ci95"][0] for b in bots], [b["ci95"][1] - b["mu"] for b in bots]]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.45 * max(1, len(bots))))
    ax.errorbar(mus, names, xerr=err, fmt="o", capsize=4, color="tab:blue")
    ax.invert_yaxis()
    ax.set_xlabel("OpenSkill rating mu (95% interval)")
    ax.set_title(f"League: {report['config']['rounds']} duplicate deals per pairing")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def format_html(report: dict[str, Any]) -> str:
    """A self-contained page: the table and the plot (a PNG embedded as base64)."""
    png = base64.b64encode(plot_png(report)).decode()
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
        for row in _cells(report)
    )
    items = "".join(f"<li>{html.escape(n)}</li>" for n in _notes(report))
    cfg = report["config"]
    provisional = provisional_text(report)
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Rack-O league</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
        "td:nth-child(2){text-align:left}</style></head><body>"
        + (f"<p style='font-weight:bold'>{html.escape(provisional)}</p>" if provisional else "")
        + (
            f"<p style='color:#b00;font-weight:bold'>{html.escape(report['warning'])}</p>"
            if "warning" in report
            else ""
        )
        + f"<h1>League of {len(report['bots'])} bots</h1>"
        f"<p>{html.escape(game_text(cfg))}, {cfg['rounds']} duplicate deals per pairing in every "
        f"seating, {seed_text(cfg)}. Rating: OpenSkill mu, 95% interval (mu ± 1.96 sigma).</p>"
        "<table><tr><th>rank</th><th>bot</th><th>rating (95% CI)</th><th>win rate</th>"
        f"<th>rounds</th><th>forfeits</th></tr>{rows}</table>"
        f"<p><img alt='ratings with 95% intervals' src='data:image/png;base64,{png}'></p>"
        + (f"<h2>Notes</h2><ul>{items}</ul>" if items else "")
        + "</body></html>\n"
    )


def write_reports(out: Path, report: dict[str, Any]) -> None:
    """``league.json``, ``league.md`` and ``league.html`` in ``out`` (each written atomically)."""
    out.mkdir(parents=True, exist_ok=True)
    secret = 0o600 if report["config"].get("seed_secret") else None  # the teacher's alone
    write_text_atomic(out / "league.json", json.dumps(report, indent=2) + "\n", secret)
    write_text_atomic(out / "league.md", format_markdown(report))
    write_text_atomic(out / "league.html", format_html(report))


GRADE_COLUMNS = [
    "Name",
    "SID",
    "Email",
    "submission",
    "alias",
    "rank",
    "bots",
    "rating",
    "rating_low",
    "rating_high",
    "win_rate",
    "rounds",
    "forfeits",
    "note",
    "provisional",
]


def grade_rows(report: dict[str, Any], export: list[Any]) -> list[list[Any]]:
    """One row per student of every submission: the bot's rank, rating and totals, or in
    ``note`` why it did not play; ``provisional``: true where the league was stopped before its
    schedule was done (the ranking so far)."""
    ranked = {b["name"]: (i, b) for i, b in enumerate(report["bots"], 1)}
    skipped = {line.partition(":")[0]: line for line in report["skipped"]}
    provisional = "true" if report.get("provisional") else "false"
    rows = []
    for sub in export:
        if sub.alias in ranked:
            rank, b = ranked[sub.alias]
            values = [rank, len(report["bots"]), b["mu"], *b["ci95"], b["win_rate"]]
            values += [b["rounds"], b["forfeits"], ""]
        else:
            note = skipped.get(sub.alias, f"{sub.alias}: did not play")
            values = ["", len(report["bots"]), "", "", "", "", "", "", note]
        values.append(provisional)
        for person in sub.submitters or [None]:
            who = [person.name, person.sid, person.email] if person else ["", "", ""]
            rows.append([*who, sub.folder.name, sub.alias, *values])
    return rows


def write_grades(out: Path, report: dict[str, Any], export: list[Any]) -> Path:
    """``grades.csv`` beside the report: the teacher's, with the students' names (the league's
    pages show only aliases); every cell neutralised against formulas (``csv_cell``)."""
    return write_csv(out / "grades.csv", GRADE_COLUMNS, grade_rows(report, export))
