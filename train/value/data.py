"""The states value iteration learns from: start-of-turn racks of rounds the learner went Rack-O,
with the own turns it then still needed (``collect``), and n-step targets over them
(``bootstrap_targets``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from racko_env.observation import PHASE
from racko_env.rules import deck_size
from train.common.afterstate import EXPERT_PLAN, card_tables, rack_features
from train.common.progress import Phase
from train.value.network import RackValueNet


def state_features(
    obs: np.ndarray, num_cards: int, plans: tuple[tuple[float, float], ...] = (EXPERT_PLAN,)
) -> np.ndarray:
    """The value net's input for each row's own rack as it stands (start of turn)."""
    o = torch.as_tensor(obs, dtype=torch.float32)
    rack = torch.round(o[:, :10] * num_cards).long()[:, None, :]
    cum_a, cum_u = card_tables(o, num_cards)
    return rack_features(rack, cum_a, cum_u, num_cards, plans)[:, 0].numpy()


def collect(
    learner: Any,
    states: int,
    seed: int,
    num_players: int,
    rules: dict[str, Any],
    opponent: str = "random",
    n_envs: int = 512,
    plans: tuple[tuple[float, float], ...] = (EXPERT_PLAN,),
    progress: Phase | None = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """``states`` (features, own turns still needed) pairs from rounds the learner went Rack-O.

    Rounds the learner did not end itself tell nothing about how long it would have needed, so
    they are dropped (against ``random`` opponents there are almost none).
    """
    from train.sb3.vec_env import RackoVecEnv

    n = deck_size(num_players)
    env = RackoVecEnv(n_envs, num_players, opponents=[opponent], seed=seed, **rules)
    obs = env.reset()
    pending: list[list[np.ndarray]] = [[] for _ in range(n_envs)]
    xs: list[np.ndarray] = []
    ts: list[np.ndarray] = []
    total, rounds, dropped = 0, 0, 0
    while total < states:
        masks = env.action_masks()
        drawing = np.flatnonzero(obs[:, PHASE.start] > 0.5)
        if drawing.size:
            feats = state_features(obs[drawing], n, plans)
            for i, f in zip(drawing, feats, strict=True):
                pending[i].append(f)
        obs, rewards, dones, _ = env.step(learner.act_batch(obs, masks))
        for i in np.flatnonzero(dones):
            rounds += 1
            if rewards[i] > 0 and pending[i]:
                k = len(pending[i])
                xs.append(np.stack(pending[i]))
                ts.append(np.arange(k, 0, -1, dtype=np.float32))
                total += k
                if progress is not None:
                    progress.advance(min(k, max(0, states - (total - k))))
            else:
                dropped += 1
            pending[i] = []
    env.close()
    x, t = np.concatenate(xs), np.concatenate(ts)
    return (
        x,
        t,
        {"rounds": rounds, "dropped": dropped, "mean_turns": float(np.mean([a[0] for a in ts]))},
    )


def bootstrap_targets(x: np.ndarray, t: np.ndarray, net: RackValueNet, steps: int) -> np.ndarray:
    """n-step targets: ``steps`` turns plus the value ``net`` gives the rack ``steps`` turns later.

    ``collect`` lists each round's racks in order with turn counts going down to 1, so the rack
    ``steps`` turns later is ``steps`` rows on whenever the count is above ``steps``; rounds that
    end sooner keep their exact count. Far fewer turns of luck in each target than the whole rest
    of the round (Monte Carlo), at the price of trusting ``net``.
    """
    y = t.copy()
    later = np.flatnonzero(t > steps)
    with torch.no_grad():
        v = net(torch.as_tensor(x[later + steps])).numpy()
    y[later] = steps + v
    return y
