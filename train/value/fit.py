"""The value net's least-squares fit (``train.common.fitting``'s loop)."""

from __future__ import annotations

import numpy as np
import torch

from train.common.fitting import fit_minibatches
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
    """Least squares on the turn counts (their mean is the value): the project's fitting loop
    with whole minibatches and a cosine schedule."""
    xt, tt = torch.as_tensor(x), torch.as_tensor(t)

    def report(epoch: int, loss: float) -> None:
        if progress is not None:
            progress.advance(1, f"loss {loss:.4f}")

    net.train()
    losses = fit_minibatches(
        net.parameters(),
        lambda idx: torch.nn.functional.mse_loss(net(xt[idx]), tt[idx]),
        len(xt),
        epochs,
        batch_size,
        lr,
        seed,
        full_batches_only=True,
        cosine_schedule=True,
        on_epoch=report,
    )
    net.eval()
    return losses
