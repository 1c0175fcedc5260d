"""How well does the observation alone predict the opponent's next take of the bot's discard?

The 2-player bot (``agents/pretrained/racko_2p.onnx``) plays ``expert`` on duplicate deals (each
deal twice, the bot in either seat) on the batched engine. After each of the bot's turns its last
card lies on the discard pile; the label is whether ``expert`` takes it on its next decision. The
inputs are the bot's observation at that moment, nothing else: layout version 1 (its first 177
entries, what ``racko_v0`` gives) against layout version 2 (all of it, ``racko_v1``: each opponent
slot's public history appended). A held-out split by deal says which predicts better (log loss,
AUC), so the number measures what the new public facts tell about the opponent.

The classifier is the same for both: a small torch MLP with early stopping, over the observation
plus the entries of the opponent's slots next to the discard's own slot (the slot a card belongs
in, ``(c - 1) * 10 // N``, and its two neighbours: ``opp_slots`` for version 1; for version 2 also
``opp_slot_drawn``, ``opp_slot_changed``, ``opp_slot_out``). The gather is a fixed function of the
observation (the fact is "is the slot this card belongs in still dealt?", an interaction a small
network learns slowly from the raw vector); a version-1 model gets only version-1 entries.

    python benchmarks/opponent_information.py                 # 1,500 deals (3,000 rounds)
    python benchmarks/opponent_information.py --deals 200 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from agents.batched import BatchExpert  # noqa: E402
from agents.onnx_bot import load_onnx_bot  # noqa: E402
from racko_env.actions import TAKE_DISCARD, Phase  # noqa: E402
from racko_env.observation import (  # noqa: E402
    DISCARD_TOP,
    OBS_SIZES,
    OPP_SLOT_CHANGED,
    OPP_SLOT_DRAWN,
    OPP_SLOT_OUT,
    OPP_SLOTS,
)
from racko_env.rules import RACK_SIZE, deck_size  # noqa: E402
from racko_env.vector import NumpyChance, VectorRacko  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BOT = REPO / "agents" / "pretrained" / "racko_2p.onnx"
NEIGHBOURS = (-1, 0, 1)  # the discard's slot and its two neighbours
SLOT_FIELDS = {1: (OPP_SLOTS,), 2: (OPP_SLOTS, OPP_SLOT_DRAWN, OPP_SLOT_CHANGED, OPP_SLOT_OUT)}


def collect(
    deals: int, seed: int, bot_path: Path = BOT
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observations [R, 270] of the bot after its turns, labels [R] (expert took that discard),
    deal index [R]) from ``deals`` duplicate deals of the bot against ``expert``, 2 players."""
    n_players = 2
    games = 2 * deals
    chance = NumpyChance(seed)
    env = VectorRacko(games, n_players, chance=chance)
    decks = np.repeat(chance.deck_orders(np.arange(deals), deck_size(n_players)), 2, axis=0)
    env.reset(first_dealer=1, deck_orders=decks)  # seat 0 moves first in every game
    bot_seat = np.arange(games) % 2  # game 2i: the bot moves first; 2i + 1: expert does
    bot = load_onnx_bot(bot_path, num_players=n_players)
    expert = BatchExpert(num_players=n_players)
    eng = env.game
    live = np.ones(games, dtype=bool)
    pending = np.full(games, -1, dtype=np.intp)  # row of the bot's last discard awaiting its label
    observations: list[np.ndarray] = []
    labels: list[bool] = []
    deal_of: list[int] = []
    while live.any():
        g = np.flatnonzero(live)
        seat = eng.current[g]
        obs = env.observe(g, seat)
        masks = env.action_masks(g, seat)
        actions = np.empty(len(g), dtype=np.intp)
        mine = seat == bot_seat[g]
        if mine.any():
            actions[mine] = bot.act_batch(obs[mine], masks[mine])
        if (~mine).any():
            actions[~mine] = expert.act_batch(obs[~mine], masks[~mine])
        asked = (~mine) & (eng.phase[g] == int(Phase.DRAW)) & (pending[g] >= 0)
        for i in np.flatnonzero(asked):  # expert's answer to the bot's discard
            labels[pending[g[i]]] = bool(actions[i] == TAKE_DISCARD)
            pending[g[i]] = -1
        result = env.step(actions, g)
        live[g[result.done]] = False
        ended = g[mine & ~result.done & (eng.current[g] != bot_seat[g])]  # the bot's turn ended
        if ended.size:
            after = env.observe(ended, bot_seat[ended])
            for row, game in zip(after, ended, strict=True):
                pending[game] = len(labels)
                observations.append(row)
                labels.append(False)  # set when expert answers
                deal_of.append(int(game) // 2)
    answered = np.ones(len(labels), dtype=bool)
    answered[pending[pending >= 0]] = False  # none should be left: every round ends on a move
    return (
        np.asarray(observations, dtype=np.float32)[answered],
        np.asarray(labels)[answered],
        np.asarray(deal_of)[answered],
    )


def features(obs: np.ndarray, version: int, num_cards: int) -> np.ndarray:
    """Layout ``version``'s view of ``obs``, then that version's opponent-slot entries at the
    discard's slot and its neighbours (0 beyond the rack's ends)."""
    obs = np.asarray(obs, dtype=np.float32)
    top = np.rint(obs[:, DISCARD_TOP] * num_cards).astype(np.intp)
    slot = np.clip((top - 1) * RACK_SIZE // num_cards, 0, RACK_SIZE - 1)
    gathered = []
    for field in SLOT_FIELDS[version]:
        block = obs[:, field.start : field.start + RACK_SIZE]  # the (only) opponent's block
        for d in NEIGHBOURS:
            at = slot + d
            inside = (at >= 0) & (at < RACK_SIZE)
            value = block[np.arange(len(obs)), np.clip(at, 0, RACK_SIZE - 1)]
            gathered.append(np.where(inside, value, 0.0))
    return np.concatenate([obs[:, : OBS_SIZES[version]], np.stack(gathered, axis=1)], axis=1)


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve: P(a positive scores above a negative), ties counted half."""
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores), dtype=np.float64)
    sorted_scores = scores[order]
    # average ranks over ties
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    average = first + (counts - 1) / 2.0 + 1.0
    ranks[order] = np.repeat(average, counts)
    pos = labels.astype(bool)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def log_loss(p: np.ndarray, labels: np.ndarray) -> float:
    p = np.clip(p, 1e-7, 1 - 1e-7)
    y = labels.astype(np.float64)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def fit_predict(
    x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, seed: int, epochs: int = 60
) -> np.ndarray:
    """A small MLP (two hidden layers of 64, Adam, weight decay), early-stopped on a tenth of the
    training rows; returns P(take) for ``x_test``."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(x_train))
    cut = max(1, len(idx) // 10)
    val, fit = idx[:cut], idx[cut:]
    xt = torch.as_tensor(x_train[fit])
    yt = torch.as_tensor(y_train[fit].astype(np.float32))
    xv = torch.as_tensor(x_train[val])
    yv = torch.as_tensor(y_train[val].astype(np.float32))
    net = torch.nn.Sequential(
        torch.nn.Linear(x_train.shape[1], 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 1),
    )
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-4)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    best, best_state, patience = float("inf"), None, 0
    batch = 256
    for _ in range(epochs):
        net.train()
        order = torch.as_tensor(rng.permutation(len(xt)))
        for start in range(0, len(xt), batch):
            rows = order[start : start + batch]
            opt.zero_grad()
            loss = loss_fn(net(xt[rows]).squeeze(1), yt[rows])
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            v = float(loss_fn(net(xv).squeeze(1), yv))
        if v < best - 1e-4:
            best, patience = v, 0
            best_state = {k: t.clone() for k, t in net.state_dict().items()}
        else:
            patience += 1
            if patience >= 6:
                break
    net.load_state_dict(best_state)
    with torch.no_grad():
        return torch.sigmoid(net(torch.as_tensor(x_test)).squeeze(1)).numpy().astype(np.float64)


def measure(deals: int, seed: int, test_share: float = 0.25) -> dict[str, Any]:
    """Collect, split by deal, fit one model per layout version; the table's numbers."""
    t0 = time.time()
    obs, y, deal = collect(deals, seed)
    seconds_play = time.time() - t0
    rng = np.random.default_rng(seed + 1)
    test_deals = rng.permutation(deals)[: max(1, int(deals * test_share))]
    test = np.isin(deal, test_deals)
    n_cards = deck_size(2)
    base = float(y[~test].mean())
    rows: dict[str, dict[str, float]] = {
        "constant": {
            "log_loss": log_loss(np.full(int(test.sum()), base), y[test]),
            "auc": 0.5,
        }
    }
    for version in (1, 2):
        x = features(obs, version, n_cards)
        p = fit_predict(x[~test], y[~test], x[test], seed)
        rows[f"layout v{version}"] = {"log_loss": log_loss(p, y[test]), "auc": auc(p, y[test])}
    return {
        "deals": deals,
        "rounds": 2 * deals,
        "seed": seed,
        "discards": int(len(y)),
        "take_rate": float(y.mean()),
        "test_discards": int(test.sum()),
        "seconds_play": round(seconds_play, 1),
        "seconds_total": round(time.time() - t0, 1),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=1500, help="duplicate deals (2 rounds each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args(argv)
    if args.deals < 4:
        parser.error(f"--deals must be at least 4 (a held-out quarter), got {args.deals}")
    result = measure(args.deals, args.seed)
    print(
        f"{result['deals']} deals ({result['rounds']} rounds), {result['discards']} bot discards, "
        f"expert took {100 * result['take_rate']:.1f}%; held out: {result['test_discards']}"
    )
    print("| what the classifier sees | log loss | AUC |\n|---|---:|---:|")
    for name, row in result["rows"].items():
        print(f"| {name} | {row['log_loss']:.3f} | {row['auc']:.3f} |")
    if args.json is not None:
        from racko_env.files import write_text_atomic

        write_text_atomic(args.json, json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
