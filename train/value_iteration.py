"""Train a Rack-O bot by approximate policy iteration on a learned rack value (``train.afterstate``).

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
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import torch

from racko_env.observation import PHASE
from racko_env.rules import deck_size
from train.afterstate import (
    EXPERT_PLAN,
    OnePlyPolicy,
    RackValueNet,
    card_tables,
    describe,
    rack_features,
)
from train.config import ConfigError, ValueConfig, config_data, load_config
from train.files import RunFolderError, write_bytes_atomic, write_json_atomic, write_yaml_atomic
from train.progress import Phase, RunLog
from train.quick_eval import quick_win_rate

ITERATIONS = "iterations"


class TorchOnePly:
    """``OnePlyPolicy`` as a ``BatchPolicy`` (numpy in, actions out), computing the blind-draw
    expectation only for rows that decide whether to draw."""

    name = "one-ply"

    def __init__(self, policy: OnePlyPolicy) -> None:
        self.policy = policy.eval()

    @torch.no_grad()
    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        o = torch.as_tensor(obs, dtype=torch.float32)
        m = torch.as_tensor(masks, dtype=torch.bool)
        out = np.empty(len(obs), dtype=np.intp)
        drawing = obs[:, PHASE.start] > 0.5
        for rows, expect in ((np.flatnonzero(drawing), True), (np.flatnonzero(~drawing), False)):
            if rows.size:
                logits = -self.policy.turns(o[rows], expect_draw=expect)
                logits = torch.where(m[rows], logits, torch.full_like(logits, -1e9))
                out[rows] = logits.argmax(1).numpy()
        return out


def state_features(
    obs: np.ndarray, num_cards: int, plans: tuple[tuple[float, float], ...] = (EXPERT_PLAN,)
) -> np.ndarray:
    """The value net's input for each row's own rack as it stands (start of turn)."""
    o = torch.as_tensor(obs, dtype=torch.float32)
    rack = torch.round(o[:, :10] * num_cards).long()[:, None, :]
    cum_a, cum_u = card_tables(o, num_cards)
    return rack_features(rack, cum_a, cum_u, num_cards, plans)[:, 0].numpy()


def collect(
    learner: Any,
    states: int,
    seed: int,
    num_players: int,
    rules: dict[str, Any],
    opponent: str = "random",
    n_envs: int = 512,
    plans: tuple[tuple[float, float], ...] = (EXPERT_PLAN,),
    progress: Phase | None = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """``states`` (features, own turns still needed) pairs from rounds the learner went Rack-O.

    Rounds the learner did not end itself tell nothing about how long it would have needed, so
    they are dropped (against ``random`` opponents there are almost none).
    """
    from train.sb3_vec_env import RackoVecEnv

    n = deck_size(num_players)
    env = RackoVecEnv(n_envs, num_players, opponents=[opponent], seed=seed, **rules)
    obs = env.reset()
    pending: list[list[np.ndarray]] = [[] for _ in range(n_envs)]
    xs: list[np.ndarray] = []
    ts: list[np.ndarray] = []
    total, rounds, dropped = 0, 0, 0
    while total < states:
        masks = env.action_masks()
        drawing = np.flatnonzero(obs[:, PHASE.start] > 0.5)
        if drawing.size:
            feats = state_features(obs[drawing], n, plans)
            for i, f in zip(drawing, feats, strict=True):
                pending[i].append(f)
        obs, rewards, dones, _ = env.step(learner.act_batch(obs, masks))
        for i in np.flatnonzero(dones):
            rounds += 1
            if rewards[i] > 0 and pending[i]:
                k = len(pending[i])
                xs.append(np.stack(pending[i]))
                ts.append(np.arange(k, 0, -1, dtype=np.float32))
                total += k
                if progress is not None:
                    progress.advance(min(k, max(0, states - (total - k))))
            else:
                dropped += 1
            pending[i] = []
    env.close()
    x, t = np.concatenate(xs), np.concatenate(ts)
    return (
        x,
        t,
        {"rounds": rounds, "dropped": dropped, "mean_turns": float(np.mean([a[0] for a in ts]))},
    )


def bootstrap_targets(x: np.ndarray, t: np.ndarray, net: RackValueNet, steps: int) -> np.ndarray:
    """n-step targets: ``steps`` turns plus the value ``net`` gives the rack ``steps`` turns later.

    ``collect`` lists each round's racks in order with turn counts going down to 1, so the rack
    ``steps`` turns later is ``steps`` rows on whenever the count is above ``steps``; rounds that
    end sooner keep their exact count. Far fewer turns of luck in each target than the whole rest
    of the round (Monte Carlo), at the price of trusting ``net``.
    """
    y = t.copy()
    later = np.flatnonzero(t > steps)
    with torch.no_grad():
        v = net(torch.as_tensor(x[later + steps])).numpy()
    y[later] = steps + v
    return y


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


def _save_net(net: RackValueNet, path: Path) -> None:
    buf = io.BytesIO()
    torch.save(net.state_dict(), buf)
    write_bytes_atomic(path, buf.getvalue())


def new_net(cfg: ValueConfig, iteration: int) -> RackValueNet:
    torch.manual_seed(cfg.seed * 1000 + iteration)
    return RackValueNet(tuple(cfg.net.hidden), tuple(tuple(p) for p in cfg.net.plans))


def policy_of(cfg: ValueConfig, net: RackValueNet) -> OnePlyPolicy:
    return OnePlyPolicy(net, deck_size(cfg.num_players))


def load_net(cfg: ValueConfig, path: Path) -> RackValueNet:
    """The value net from a data-only state dict (``weights_only``: a pickle is refused)."""
    from train.checkpoint import load_torch_data

    net = new_net(cfg, 0)
    state = load_torch_data(path, "value net")
    try:
        net.load_state_dict(state)
    except (RuntimeError, TypeError, AttributeError) as exc:
        first = str(exc).splitlines()[0][:200]
        raise RunFolderError(f"value net {path} does not fit the config's net: {first}") from None
    return net.eval()


def completed_iterations(run_dir: Path) -> list[int]:
    folder = run_dir / ITERATIONS
    if not folder.is_dir():
        return []
    return sorted(int(p.stem.removeprefix("iter_")) for p in folder.glob("iter_*.pt"))


def train(cfg: ValueConfig, run_dir: Path, resume: bool = False) -> Path:
    """Run (or continue) value iteration in ``run_dir``; export the bot; return its ONNX path."""
    from agents.batched import load_batch

    torch.set_num_threads(cfg.torch_threads)
    run_dir.mkdir(parents=True, exist_ok=True)
    history_path = run_dir / "history.json"
    done = completed_iterations(run_dir) if resume else []
    if resume and not done:
        raise RunFolderError(
            f"--resume: no finished iteration in {run_dir / ITERATIONS}; start the run over "
            f"without --resume"
        )
    if not resume and done:
        raise RunFolderError(f"{run_dir} already holds a run: pass --resume or another --out")
    log = RunLog(run_dir / "train.log")
    try:
        return _iterate(cfg, run_dir, done, history_path, log, load_batch)
    finally:
        log.close()


def _iterate(
    cfg: ValueConfig,
    run_dir: Path,
    done: list[int],
    history_path: Path,
    log: RunLog,
    load_batch: Any,
) -> Path:
    log.info(
        f"value iteration in {run_dir}: {cfg.iterations} iteration(s) of {cfg.states:,} states, "
        f"{cfg.fit.epochs} fitting epochs, {cfg.eval.rounds:,} evaluation rounds per opponent"
        + (f"; resuming after iteration {done[-1]}" if done else "")
    )
    history = json.loads(history_path.read_text(encoding="utf-8")) if done else []
    history = history[: len(done)]
    net = load_net(cfg, run_dir / ITERATIONS / f"iter_{done[-1]}.pt") if done else None
    (run_dir / ITERATIONS).mkdir(exist_ok=True)
    rules = cfg.rules_options()
    for it in range(len(done), cfg.iterations):
        t0 = time.time()
        if net is None:
            learner: Any = load_batch(cfg.teacher, cfg.num_players, seed=cfg.seed, **rules)
        else:
            learner = TorchOnePly(policy_of(cfg, net))
        with log.phase(f"iteration {it}: collecting", cfg.states, "states") as phase:
            x, t, info = collect(
                learner,
                cfg.states,
                cfg.seed * 1000 + it,
                cfg.num_players,
                rules,
                cfg.opponent,
                cfg.n_envs,
                tuple(tuple(p) for p in cfg.net.plans),
                progress=phase,
            )
        if cfg.td_steps and net is not None:
            t = bootstrap_targets(x, t, net, cfg.td_steps)
        t1 = time.time()
        net = new_net(cfg, it)
        f = cfg.fit
        with log.phase(f"iteration {it}: fitting", f.epochs, "epochs", every_s=0.0) as phase:
            losses = fit(
                net, x, t, f.epochs, f.batch_size, f.learning_rate, cfg.seed * 1000 + it, phase
            )
        t2 = time.time()
        row: dict[str, Any] = {
            "iteration": it,
            "player": cfg.teacher if it == 0 else f"one-ply over iteration {it - 1}",
            "states": len(x),
            **info,
            "losses": [round(v, 4) for v in losses],
            "collect_seconds": round(t1 - t0, 1),
            "fit_seconds": round(t2 - t1, 1),
        }
        if cfg.eval.rounds:
            policy = TorchOnePly(policy_of(cfg, net))
            row["win_rate"] = {}
            n_opp = len(cfg.eval.opponents)
            with log.phase(f"iteration {it}: evaluating", n_opp, "opponents", 0.0) as phase:
                for opp in cfg.eval.opponents:
                    res = quick_win_rate(
                        policy, opp, cfg.eval.rounds, cfg.eval.seed, cfg.num_players, rules
                    )
                    row["win_rate"][opp] = res["win_rate"]
                    lo, hi = res["ci95"]
                    phase.advance(1, f"vs {opp}: {res['win_rate']:.3f} (95% CI {lo:.3f}-{hi:.3f})")
                    log.info(
                        f"iteration {it}: vs {opp} won {res['win_rate']:.3f} of "
                        f"{res['rounds']:,} rounds (95% CI {lo:.3f}-{hi:.3f})"
                    )
            row["eval_seconds"] = round(time.time() - t2, 1)
        # history first: a crash between the two leaves an extra row that --resume drops
        history.append(row)
        write_json_atomic(history_path, history)
        _save_net(net, run_dir / ITERATIONS / f"iter_{it}.pt")
        log.info(f"iteration {it}: {json.dumps({k: v for k, v in row.items() if k != 'losses'})}")
    if net is None:  # iterations >= 1 by the schema; kept for a clear message
        raise ValueError("no iteration to export: iterations must be at least 1")
    _save_net(net, run_dir / "value_net.pt")
    log.info(f"exporting (checked on {cfg.export_check} observations)")
    onnx_path, _ = export_value_run(run_dir, cfg.export_check)
    log.info(f"exported {onnx_path}")
    return onnx_path


def export_value_run(run_dir: str | Path, check: int = 300) -> tuple[Path, Path]:
    """Export a value-iteration run folder to ``RUN_DIR/bot.onnx`` + ``bot.json``."""
    from train.onnx_export import export_module

    run_dir = Path(run_dir)
    cfg = load_config(run_dir / "config.yaml", ValueConfig)
    net = load_net(cfg, run_dir / "value_net.pt")
    history_path = run_dir / "history.json"
    history = json.loads(history_path.read_text(encoding="utf-8")) if history_path.is_file() else []
    policy = policy_of(cfg, net)
    evaluation = {"win_rate": history[-1].get("win_rate", {})} if history else {}
    if evaluation:
        evaluation["rounds"] = cfg.eval.rounds
    training = {
        "algorithm": (
            f"approximate policy iteration on a learned rack value, one-ply policy "
            f"(train/value_iteration.py; iteration 0 plays {cfg.teacher!r})"
        ),
        "network": describe(policy),
        "config": config_data(cfg),
        "seed": cfg.seed,
        "iterations": [{k: v for k, v in row.items() if k != "losses"} for row in history],
    }
    return export_module(
        policy, run_dir, cfg.num_players, cfg.rules_options(), evaluation, training, check
    )


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


def prepare_value_run(args: argparse.Namespace) -> tuple[ValueConfig, Path]:
    """The config and run folder of the CLI call; the run folder keeps the config it runs.

    A resumed run may only change ``iterations`` (more iterations continue the same run); any
    other difference between ``--config`` and the run's saved config is refused.
    """
    from train.config import config_differences
    from train.files import remove_temp_files

    overrides = {"seed": args.seed, "iterations": args.iterations, "out": args.out}
    if args.resume:
        run_dir = Path(args.out) if args.out else Path(load_config(args.config, ValueConfig).out)
        saved = run_dir / "config.yaml"
        if not saved.is_file():
            raise RunFolderError(f"--resume: {saved} not found: {run_dir} holds no run to resume")
        remove_temp_files(run_dir)
        remove_temp_files(run_dir / ITERATIONS)
        cfg = load_config(saved, ValueConfig, iterations=args.iterations)
        if args.config is not None:
            given = load_config(
                args.config, ValueConfig, out=str(run_dir), iterations=cfg.iterations
            )
            diff = [
                k for k in config_differences(config_data(given), config_data(cfg)) if k != "out"
            ]
            if diff:
                raise RunFolderError(
                    f"--resume: {args.config} differs from the run's {saved} in "
                    f"{', '.join(diff)}; resume with the run's config or start a new run"
                )
        if args.seed is not None and args.seed != cfg.seed:
            raise RunFolderError(
                f"--resume: the run was started with seed {cfg.seed}, not {args.seed}"
            )
        if args.iterations is not None:
            write_yaml_atomic(saved, config_data(cfg))
        return cfg, run_dir
    cfg = load_config(args.config, ValueConfig, **overrides)
    run_dir = Path(cfg.out)
    if completed_iterations(run_dir):
        raise RunFolderError(f"{run_dir} already holds a run: pass --resume or another --out")
    run_dir.mkdir(parents=True, exist_ok=True)
    remove_temp_files(run_dir)
    write_yaml_atomic(run_dir / "config.yaml", config_data(cfg))
    return cfg, run_dir


if __name__ == "__main__":
    raise SystemExit(main())
