"""The one fitting loop (train/sb3/warmstart.py) that cloning and the critic warm-up use: seeded,
minibatched, the loss falls."""

from __future__ import annotations

import ast
from pathlib import Path

import torch

from train.sb3.warmstart import _fit

REPO = Path(__file__).resolve().parents[2]


class _Policy(torch.nn.Linear):
    def set_training_mode(self, mode: bool) -> None:
        self.train(mode)


def _run(seed: int) -> tuple[list[float], torch.Tensor, list[int], list[int]]:
    torch.manual_seed(0)
    net = _Policy(3, 1)
    x = torch.randn(100, 3)
    y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.3
    seen: list[int] = []
    epochs: list[int] = []

    def loss_of(idx: torch.Tensor) -> torch.Tensor:
        seen.append(len(idx))
        return torch.nn.functional.mse_loss(net(x[idx]).squeeze(1), y[idx])

    losses = _fit(
        net,
        list(net.parameters()),
        loss_of,
        len(x),
        20,
        32,
        0.05,
        seed,
        epochs.append,
    )
    return losses, net.weight.detach().clone(), seen, epochs


def test_the_loss_falls_and_the_same_seed_gives_the_same_fit() -> None:
    losses, w, seen, epochs = _run(1)
    assert seen[:4] == [32, 32, 32, 4] and epochs == list(range(1, 21))
    assert losses[-1] < 0.1 * losses[0]
    again, w2, _, _ = _run(1)
    assert again == losses and torch.equal(w, w2)
    assert not torch.equal(_run(2)[1], w)


def test_no_other_module_writes_its_own_adam_loop() -> None:
    """Cloning and the critic warm-up fit through this loop; PPO's own update is
    the libraries' (SB3, RLlib), cleanrl_ppo.py is the one-file PPO to read, and torchrl_ppo.py
    hands TorchRL's own PPO loss its optimiser (the library's recipe, shown as it is);
    dqn_features.py is the one-file DQN to read, in cleanrl_ppo.py's style."""
    allowed = {
        "train/sb3/warmstart.py",
        "train/reference/cleanrl_ppo.py",
        "train/examples/torchrl_ppo.py",
        "train/reference/dqn_features.py",
    }
    hits = []
    for path in sorted((REPO / "train").rglob("*.py")):
        rel = str(path.relative_to(REPO))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "Adam" and rel not in allowed:
                hits.append(f"{rel}:{node.lineno}")
    assert hits == []
