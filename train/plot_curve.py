"""Plot a run's learning curve: ``python train/plot_curve.py RUN_DIR --out docs/curve.png``.

Top: the periodic evaluation win rates (``eval_history.json``, deterministic play against each
evaluation bot on fixed deals). Bottom: the training episodes' mean reward from TensorBoard
(``rollout/ep_rew_mean``; with ``reward: win`` that is 2 * win rate - 1 in 2-player games).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def load_curves(run_dir: Path) -> tuple[list[dict], list[tuple[int, float]]]:
    history_path = run_dir / "eval_history.json"
    history = json.loads(history_path.read_text()) if history_path.is_file() else []
    rewards: list[tuple[int, float]] = []
    tb = run_dir / "tb"
    if tb.is_dir():
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

        for sub in sorted(p for p in tb.iterdir() if p.is_dir()):
            acc = EventAccumulator(str(sub))
            acc.Reload()
            if "rollout/ep_rew_mean" in acc.Tags()["scalars"]:
                rewards += [(e.step, e.value) for e in acc.Scalars("rollout/ep_rew_mean")]
    return history, sorted(rewards)


def plot(run_dir: Path, out: Path, title: str | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    history, rewards = load_curves(run_dir)
    if not history and not rewards:
        raise FileNotFoundError(f"{run_dir}: no eval_history.json and no TensorBoard rewards")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    opponents = sorted({k for row in history for k in row if k != "timesteps"})
    for opp in opponents:
        pts = [(r["timesteps"], r[opp]) for r in history if opp in r]
        top.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"vs {opp}")
    top.axhline(0.5, color="grey", lw=0.8, ls="--")
    top.set_ylabel("evaluation win rate")
    top.set_ylim(0, 1)
    top.legend()
    if rewards:
        bottom.plot([r[0] for r in rewards], [r[1] for r in rewards], lw=0.8)
    bottom.set_ylabel("training ep_rew_mean")
    bottom.set_xlabel("env steps")
    fig.suptitle(title or f"learning curve: {run_dir.name}")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, required=True, help="PNG file to write")
    parser.add_argument("--title")
    args = parser.parse_args(argv)
    plot(args.run_dir, args.out, args.title)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
