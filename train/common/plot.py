"""Plot a run's learning curve: ``racko plot RUN_DIR --out curve.png``.

Any trainer's run folder (``train.common.eval_record``): the evaluation win rates (in solitaire
the mean turns to Rack-O) with their 95% intervals by env steps (iterations for RLlib)
and by wall-clock minutes, and below them the training episodes' mean reward from TensorBoard where the run logged it."""

from __future__ import annotations

import argparse
from pathlib import Path

REWARD_TAGS = ("rollout/ep_rew_mean", "env_runners/episode_return_mean")  # SB3's, RLlib's


def load_curves(run_dir: Path) -> tuple[list[dict], list[tuple[int, float]]]:
    from train.common.eval_record import read_history

    history = read_history(run_dir)
    rewards: list[tuple[int, float]] = []
    tb = run_dir / "tb"
    if tb.is_dir():
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

        # SB3 logs into sub-folders of tb/, the RLlib trainer into tb/ itself
        for sub in [tb, *sorted(p for p in tb.iterdir() if p.is_dir())]:
            acc = EventAccumulator(str(sub))
            acc.Reload()
            for tag in REWARD_TAGS:
                if tag in acc.Tags()["scalars"]:
                    rewards += [(e.step, e.value) for e in acc.Scalars(tag)]
    return history, sorted(rewards)


def plot(run_dir: Path, out: Path, title: str | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from train.common.eval_record import opponents_of

    history, rewards = load_curves(run_dir)
    if not history and not rewards:
        raise FileNotFoundError(f"{run_dir}: no eval_history.json and no TensorBoard rewards")
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(7, 8.5))
    opponents = opponents_of(history)
    solitaire = any(row.get("unit") == "turns" for row in history)
    by_steps = any("timesteps" in row for row in history) or not history
    first = ("timesteps", "env steps") if by_steps else ("iteration", "iterations")
    for axis, x_key, label in ((top, *first), (middle, "minutes", "minutes")):
        for opp in opponents:
            rows = [r for r in history if opp in r and x_key in r]
            x = [r[x_key] for r in rows]
            y = [r[opp] for r in rows]
            err = [
                [r[opp] - r[f"{opp}_ci95"][0] for r in rows],
                [r[f"{opp}_ci95"][1] - r[opp] for r in rows],
            ]
            table = "learner" in opponents  # 3-4 players, solitaire: every bot's figure
            name = opp if table else f"vs {opp}"
            axis.errorbar(x, y, yerr=err, marker="o", capsize=3, label=name)
        if solitaire:  # each bot's mean turns to Rack-O, fewer is better
            axis.set_ylabel("mean turns (95% CI)")
        else:
            axis.axhline(0.5, color="grey", lw=0.8, ls="--")
            axis.set_ylabel("win rate (95% CI)")
            axis.set_ylim(0, 1)
        axis.set_xlabel(label)
        axis.legend()
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
