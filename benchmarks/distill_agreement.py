"""What a distillation run learned of its teacher: on the decisions where the search bot chose
otherwise than ``expert``, how often does the distilled network play the search's move?

    python -m benchmarks.distill_agreement runs/distill_2p

Reads the run's labelled decisions (``data/iter_K.npz``) and its final ``policy.pt``
(``train/distill.py``), asks ``expert`` for its move on every one, and prints, for the rows the
fit held out (the first tenth, as ``train.sb3.warmstart.clone_actor`` holds them out) and for the
rows it was fitted on: how many labels differ from ``expert``'s move, and on those, the share where
the network plays the search's move and where it plays ``expert``'s. Per decision phase too.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

PHASES = ("draw", "keep", "place")


def measure(run_dir: str | Path) -> dict[str, Any]:
    import torch

    from agents.batched import BatchExpert
    from racko_env.observation import PHASE
    from train.common.config import load_config
    from train.distillation.config import DistillConfig
    from train.distillation.data import policy_inputs
    from train.distillation.run import DATA, POLICY, load_data, load_policy
    from train.network.frozen import FrozenPolicy

    run_dir = Path(run_dir)
    cfg = load_config(run_dir / "config.yaml", DistillConfig)
    files = sorted((run_dir / DATA).glob("iter_*.npz"), key=lambda p: int(p.stem[5:]))
    obs, masks, labels = (np.concatenate(x) for x in zip(*map(load_data, files), strict=True))
    torch.set_num_threads(1)
    net = FrozenPolicy(load_policy(cfg, run_dir / POLICY), "distilled")
    played = net.act_features(policy_inputs(obs, cfg.num_players)[:, obs.shape[1] :], masks)
    expert = BatchExpert(cfg.num_players).act_batch(obs, masks)
    phase = obs[:, PHASE].argmax(axis=1)
    held = np.arange(len(labels)) < int(len(labels) * 0.1)
    changed = labels != expert
    out: dict[str, Any] = {"run": str(run_dir), "rows": len(labels)}
    for name, rows in (("held_out", held), ("fitted", ~held)):
        c = changed & rows
        out[name] = {
            "rows": int(rows.sum()),
            "search_not_expert": int(c.sum()),
            "net_plays_search_there": float((played[c] == labels[c]).mean()) if c.any() else None,
            "net_plays_expert_there": float((played[c] == expert[c]).mean()) if c.any() else None,
            "net_agrees_with_search": float((played[rows] == labels[rows]).mean()),
            "net_agrees_with_expert": float((played[rows] == expert[rows]).mean()),
        }
    out["search_not_expert_by_phase"] = {
        p: float(changed[phase == i].mean()) if (phase == i).any() else None
        for i, p in enumerate(PHASES)
    }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", help="a folder written by train/distill.py")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.run_dir), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
