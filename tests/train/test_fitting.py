"""The one fitting loop (train/common/fitting.py) that cloning and the critic warm-up use: seeded,
minibatched, the loss falls."""

from __future__ import annotations

import ast
from pathlib import Path

import torch

from train.common.fitting import fit_minibatches

REPO = Path(__file__).resolve().parents[2]


def _fit(seed: int, **options) -> tuple[list[float], torch.Tensor]:
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 1)
    x = torch.randn(100, 3)
    y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.3
    seen: list[int] = []
    losses = fit_minibatches(
        net.parameters(),
        lambda idx: (
            seen.append(len(idx)),
            torch.nn.functional.mse_loss(net(x[idx]).squeeze(1), y[idx]),
        )[1],
        len(x),
        epochs=20,
        batch_size=32,
        learning_rate=0.05,
        seed=seed,
        **options,
    )
    assert seen[:4] == [32, 32, 32, 32 if options.get("full_batches_only") else 4]
    return losses, net.weight.detach().clone()


def test_the_loss_falls_and_the_same_seed_gives_the_same_fit() -> None:
    losses, w = _fit(1)
    assert losses[-1] < 0.1 * losses[0]
    again, w2 = _fit(1)
    assert again == losses and torch.equal(w, w2)
    assert not torch.equal(_fit(2)[1], w)


def test_whole_batches_and_a_cosine_schedule() -> None:
    epochs_seen = []
    losses, _ = _fit(1, full_batches_only=True, cosine_schedule=True)
    assert losses[-1] < losses[0]
    torch.manual_seed(0)
    net = torch.nn.Linear(1, 1)
    fit_minibatches(
        net.parameters(),
        lambda idx: net(torch.ones(len(idx), 1)).pow(2).mean(),
        10,
        3,
        5,
        0.1,
        0,
        on_epoch=lambda epoch, loss: epochs_seen.append(epoch),
    )
    assert epochs_seen == [1, 2, 3]


def test_no_other_module_writes_its_own_adam_loop() -> None:
    """Cloning and the critic warm-up fit through this loop; PPO's own update is
    the libraries' (SB3, RLlib), cleanrl_ppo.py is the one-file PPO to read, and torchrl_ppo.py
    hands TorchRL's own PPO loss its optimiser (the library's recipe, shown as it is);
    dqn_features.py is the one-file DQN to read, in cleanrl_ppo.py's style."""
    allowed = {
        "train/common/fitting.py",
        "train/cleanrl_ppo.py",
        "train/torchrl_ppo.py",
        "train/dqn_features.py",
    }
    hits = []
    for path in sorted((REPO / "train").rglob("*.py")):
        rel = str(path.relative_to(REPO))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "Adam" and rel not in allowed:
                hits.append(f"{rel}:{node.lineno}")
    assert hits == []
