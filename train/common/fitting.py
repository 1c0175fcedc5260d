"""The one fitting loop of the project: Adam over shuffled minibatches of row indices.

Behaviour cloning of the actor and the critic warm-up (``train.sb3.warmstart``) are each this
loop with their own loss: the caller
gives the parameters to train and ``loss_of(rows)``, the loss of a minibatch of row indices, so
whatever the rows index (observations, masks, targets) stays the caller's. Shuffling is seeded by
a torch generator: the same seed, the same fit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch
from torch import nn


def fit_minibatches(
    params: Iterable[nn.Parameter],
    loss_of: Callable[[torch.Tensor], torch.Tensor],
    rows: int,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    *,
    full_batches_only: bool = False,
    cosine_schedule: bool = False,
    on_epoch: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Train ``params`` with Adam for ``epochs`` passes over ``rows`` rows; the mean loss per row
    of each epoch.

    ``full_batches_only``: drop each epoch's last, smaller minibatch. ``cosine_schedule``: the
    learning rate falls to 0 along a cosine over all the steps. ``on_epoch(epoch, loss)`` is called
    after each epoch (1-based). The caller puts its modules in training mode around the call.
    """
    opt = torch.optim.Adam(params, lr=learning_rate)
    gen = torch.Generator().manual_seed(seed)
    last = rows - batch_size + 1 if full_batches_only else rows
    sched = None
    if cosine_schedule:
        steps = epochs * max(1, rows // batch_size if full_batches_only else -(-rows // batch_size))
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    losses = []
    for epoch in range(epochs):
        perm = torch.randperm(rows, generator=gen)
        total, seen = 0.0, 0
        for start in range(0, max(last, 0), batch_size):
            idx = perm[start : start + batch_size]
            loss = loss_of(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()
            total += float(loss.detach()) * len(idx)
            seen += len(idx)
        losses.append(total / max(seen, 1))
        if on_epoch is not None:
            on_epoch(epoch + 1, losses[-1])
    return losses
