"""Train a Rack-O bot by approximate policy iteration on a learned rack value (``train/value/``).

Each iteration plays games with the current policy (the first with ``expert``), records every
start-of-turn rack with the number of own turns the player then needed to go Rack-O, fits
``RackValueNet`` to those counts, and makes the one-ply policy over the new value the next
iteration's player. Playing one ply greedily over the value of the previous policy is a policy
improvement step, so the bot starts where the expert is and moves past it.

``python train/value_iteration.py --config configs/2p_value.yaml`` writes to the run folder:
``config.yaml``, ``iterations/iter_K.pt`` (the value net after iteration K; ``--resume`` continues
after the newest), ``history.json`` (per iteration: rounds, mean turns, losses, win rates),
``value_net.pt`` and the bot file ``bot.onnx`` + ``bot.json`` (all written atomically, weights as
data-only state dicts), and ``train.log``: the run reports every stage from its first second
(collection, each fitting epoch, evaluation) with done/total, rate and ETA, on the terminal (with a
progress bar) and in the log alike. Every iteration is seeded from ``seed`` and its number, so a
resumed run ends with the same network as an uninterrupted one.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

os.environ.setdefault("OMP_NUM_THREADS", "1")

from train.common.config import ConfigError  # noqa: E402
from train.common.files import RunFolderError  # noqa: E402
from train.value.run import prepare_value_run, train  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", help="YAML config (see configs/2p_value.yaml)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out / out")
    parser.add_argument("--seed", type=int, help="override the config's seed")
    parser.add_argument("--iterations", type=int, help="override the number of iterations")
    parser.add_argument("--out", help="override the run folder")
    args = parser.parse_args(argv)
    if args.config is None and not (args.resume and args.out):
        parser.error("give --config FILE (or --resume --out RUN_DIR)")
    try:
        cfg, run_dir = prepare_value_run(args)
        onnx_path = train(cfg, run_dir, resume=args.resume)
    except (ConfigError, RunFolderError, FileNotFoundError) as exc:
        print(f"value_iteration: error: {exc}", file=sys.stderr)
        return 2
    print(f"exported {onnx_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
