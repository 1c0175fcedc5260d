"""The RLlib trainer's checkpoints (``train/rllib_ppo.py``): ``checkpoints/iter_NNNNNN/``, RLlib's
own files plus the trainer's counters (``trainer.json``), written under a temp name and renamed
when complete (``train.common.runs.Checkpoints``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from train.common.runs import Checkpoints

STATE_FILE = "trainer.json"  # the trainer's counters, in every checkpoint beside RLlib's own files
CHECKPOINTS = Checkpoints("iter_", (STATE_FILE,), digits=6)


def save_checkpoint(
    algo: Any,
    run_dir: Path,
    state: dict[str, Any],
    keep: int,
    log: Any,
    extra: Callable[[Path], None] | None = None,
) -> Path:
    """``checkpoints/iter_NNNNNN`` at ``state["iteration"]``; the newest ``keep`` are kept.
    ``extra(folder)`` adds the trainer's own files (the vector path's snapshots)."""
    number = state["iteration"]
    with CHECKPOINTS.write(run_dir, number, keep) as tmp:
        algo.save_to_path(str(tmp.resolve()))
        if extra is not None:
            extra(tmp)
        (tmp / STATE_FILE).write_text(json.dumps(state, indent=1) + "\n")
    final = CHECKPOINTS.path(run_dir, number)
    log.info(f"checkpoint {final}")
    return final


def read_state(ckpt: Path) -> dict[str, Any]:
    """The trainer's counters a checkpoint holds."""
    return json.loads((ckpt / STATE_FILE).read_text())
