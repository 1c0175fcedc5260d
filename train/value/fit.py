"""The value net's least-squares fit."""

from __future__ import annotations

import numpy as np
import torch

from train.common.progress import Phase
from train.value.network import RackValueNet


def fit(
    net: RackValueNet,
    x: np.ndarray,
    t: np.ndarray,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int,
    progress: Phase | None = None,
) -> list[float]:
    """Least squares on the turn counts (their mean is the value), Adam with a cosine schedule."""
    gen = torch.Generator().manual_seed(seed)
    xt, tt = torch.as_tensor(x), torch.as_tensor(t)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    steps = epochs * max(1, len(xt) // batch_size)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    losses = []
    net.train()
    for _ in range(epochs):
        perm = torch.randperm(len(xt), generator=gen)
        tot, k = 0.0, 0
        for i in range(0, len(xt) - batch_size + 1, batch_size):
            idx = perm[i : i + batch_size]
            loss = torch.nn.functional.mse_loss(net(xt[idx]), tt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot, k = tot + float(loss.detach()), k + 1
        losses.append(tot / max(k, 1))
        if progress is not None:
            progress.advance(1, f"loss {losses[-1]:.4f}")
    net.eval()
    return losses
