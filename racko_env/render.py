"""A plain-text table of the game, from one seat's view or all of them (for ``render``)."""

from __future__ import annotations

from collections.abc import Callable

from racko_env.actions import Phase
from racko_env.engine import RackoGame

SLOT_LABELS = tuple(str(5 * (i + 1)) for i in range(10))
_PHASE_TEXT = {
    Phase.DRAW: "draw or take the discard",
    Phase.KEEP_OR_DISCARD: "keep or discard the drawn card",
    Phase.PLACE: "choose a slot for the held card",
    Phase.ROUND_OVER: "round over",
    Phase.GAME_OVER: "game over",
}


def _rack_line(name: str, rack: list[int]) -> str:
    return f"{name:>10} | " + " ".join(f"{c:>3}" for c in rack)


def render_table(game: RackoGame, names: list[str], viewer: int | str | None = None) -> str:
    """Racks of the viewer (None = the player on turn, a seat, or "all"), piles, turn and scores."""
    shown = (
        range(game.num_players)
        if viewer == "all"
        else [game.current if viewer is None else int(viewer)]
    )
    lines = [
        f"Round {game.round_number}, turn {game.turn} (limit {game.config.turn_limit}), "
        f"dealer {names[game.dealer]}",
        f"On turn: {names[game.current]} - {_PHASE_TEXT[game.phase]}",
        f"Discard top: {game.discard_top:>3}    Draw pile: {len(game.draw)} cards",
    ]
    if game.held is not None and game.current in shown:
        source = "discard pile" if game.held_from_discard else "draw pile"
        lines.append(f"Held card: {game.held} (from the {source})")
    labels = SLOT_LABELS[: len(game.racks[0])]
    lines.append(f"{'slot':>10} | " + " ".join(f"{s:>3}" for s in labels))
    for p in shown:
        lines.append(_rack_line(names[p], game.racks[p]))
    lines.append("Scores: " + ", ".join(f"{names[p]} {s}" for p, s in enumerate(game.scores)))
    return "\n".join(lines)


def render_in(mode: str | None, text: Callable[[], str]) -> str | None:
    """An env's ``render()`` in ``render_mode`` ``mode``: the ``text()`` table for "ansi", None
    after printing it for "human", None with Gymnasium's warning for no mode."""
    if mode is None:
        import gymnasium

        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'.")
        return None
    if mode == "human":
        print(text())
        return None
    return text()
