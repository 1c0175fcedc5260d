"""Behaviour cloning warm start: teach the fresh policy to imitate a teacher bot before PPO.

PPO from a random policy against strong bots sees almost no wins, so it learns slowly. Cloning a
teacher (e.g. ``expert``) first gives PPO a competent starting point that self-play and the
baselines then improve. Data: every decision of every seat in games where all seats are the
teacher (played through ``racko_v0.raw_env`` with seeded deals, so it is reproducible).
"""

from __future__ import annotations

import argparse
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

from racko_env import racko_v0

BATCHED_TEACHERS = ("random", "heuristic", "expert")  # have vectorized twins in agents.batched


def collect_teacher_data(
    teacher: str,
    num_players: int,
    rules: dict[str, Any],
    decisions: int,
    seed: int,
    episode: str = "round",
    batched: bool = False,
    n_envs: int = 256,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``decisions`` (observation, mask, action) triples from teacher-vs-teacher games.

    Default: every seat's decisions in ``racko_v0`` games, one game at a time (the data the
    shipped bots were trained on). ``batched=True`` plays ``n_envs`` games at once in
    ``racko_env.vector`` with the teacher's ``agents.batched`` twin (the same decisions, ~3.4x
    more decisions per second here) and records one seat per game (rotating); other data, so
    it is opt-in to keep earlier configs reproducible.
    """
    import agents

    if decisions < 1:
        raise ValueError(f"decisions must be at least 1, got {decisions}")
    if batched:
        return _collect_batched(teacher, num_players, rules, decisions, seed, episode, n_envs)
    bots = [agents.load(teacher, num_players=num_players, **rules) for _ in range(num_players)]
    env = racko_v0.raw_env(num_players=num_players, episode=episode, **rules)
    obs_buf = np.zeros((decisions, 177), dtype=np.float32)
    mask_buf = np.zeros((decisions, 14), dtype=bool)
    act_buf = np.zeros(decisions, dtype=np.int64)
    n, game = 0, 0
    rng = np.random.default_rng(seed)
    while n < decisions:
        env.reset(seed=int(rng.integers(2**63)))
        for bot in bots:
            bot.reset()
        round_number = env.game.round_number
        game += 1
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if env.game.round_number != round_number:
                round_number = env.game.round_number
                for bot in bots:
                    bot.reset()
            seat = env.agent_name_mapping[agent]
            action = int(bots[seat].act(obs))
            obs_buf[n] = obs["observation"]
            mask_buf[n] = obs["action_mask"].astype(bool)
            act_buf[n] = action
            n += 1
            if n == decisions:
                break
            env.step(action)
    return obs_buf, mask_buf, act_buf


def _collect_batched(
    teacher: str,
    num_players: int,
    rules: dict[str, Any],
    decisions: int,
    seed: int,
    episode: str,
    n_envs: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Teacher-vs-teacher games in ``RackoVecEnv``: the learner seat is played by the teacher too."""
    from agents.batched import load_batch
    from train.sb3_vec_env import RackoVecEnv

    if teacher not in BATCHED_TEACHERS:
        raise ValueError(f"batched collection needs one of {BATCHED_TEACHERS}, got {teacher!r}")
    env = RackoVecEnv(
        n_envs, num_players=num_players, opponents=[teacher], seed=seed, episode=episode, **rules
    )
    policy = load_batch(teacher, num_players, seed=seed + 1, **rules)
    obs_buf = np.zeros((decisions, 177), dtype=np.float32)
    mask_buf = np.zeros((decisions, 14), dtype=bool)
    act_buf = np.zeros(decisions, dtype=np.int64)
    obs, n = env.reset(), 0
    while n < decisions:
        masks = env.action_masks()
        actions = np.asarray(policy.act_batch(obs, masks), dtype=np.int64)
        k = min(len(obs), decisions - n)
        obs_buf[n : n + k], mask_buf[n : n + k], act_buf[n : n + k] = (
            obs[:k],
            masks[:k],
            actions[:k],
        )
        n += k
        obs, _, _, _ = env.step(actions)
    env.close()
    return obs_buf, mask_buf, act_buf


def behaviour_clone(
    model: Any,
    obs: np.ndarray,
    masks: np.ndarray,
    actions: np.ndarray,
    epochs: int,
    batch_size: int = 1024,
    lr: float = 1e-3,
    seed: int = 0,
) -> list[float]:
    """Fit the policy head of a MaskablePPO model to the teacher's actions (masked cross-entropy).

    Returns the mean loss per epoch. Uses its own Adam optimizer so PPO's optimizer state starts
    clean; the value head is left to PPO.
    """
    import torch

    policy = model.policy
    params = list(policy.mlp_extractor.policy_net.parameters()) + list(
        policy.action_net.parameters()
    )
    opt = torch.optim.Adam(params, lr=lr)
    rng = np.random.default_rng(seed)
    obs_t = torch.as_tensor(obs)
    act_t = torch.as_tensor(actions)
    losses = []
    policy.set_training_mode(True)
    for _ in range(epochs):
        order = rng.permutation(len(obs))
        total = 0.0
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            dist = policy.get_distribution(obs_t[idx], action_masks=masks[idx])
            loss = -dist.log_prob(act_t[idx]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / len(order))
    policy.set_training_mode(False)
    return losses


def agreement(model: Any, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> float:
    """Share of decisions where the model's deterministic action equals the teacher's."""
    pred, _ = model.predict(obs, action_masks=masks, deterministic=True)
    return float(np.mean(pred == actions))


def collect_on_policy(
    model: Any,
    teacher: str,
    num_players: int,
    rules: dict[str, Any],
    decisions: int,
    seed: int,
    episode: str = "round",
    n_envs: int = 256,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """DAgger data: states the *model* reaches playing against the teacher, labelled by the teacher.

    Cloning alone trains on the teacher's states only; the clone's own mistakes lead it to states
    it never saw (its agreement there drops from ~79% to ~71%). Returns (obs, masks, teacher
    actions, the model's agreement with the teacher on these states).
    """
    from agents.batched import load_batch
    from train.sb3_vec_env import RackoVecEnv
    from train.selfplay import snapshot_from_model

    if decisions < 1:
        raise ValueError(f"decisions must be at least 1, got {decisions}")
    if teacher not in BATCHED_TEACHERS:
        raise ValueError(f"on-policy collection needs one of {BATCHED_TEACHERS}, got {teacher!r}")
    student = snapshot_from_model(model, "student")
    label = load_batch(teacher, num_players, seed=seed + 1, **rules)
    env = RackoVecEnv(
        n_envs, num_players=num_players, opponents=[teacher], seed=seed, episode=episode, **rules
    )
    obs_buf = np.zeros((decisions, 177), dtype=np.float32)
    mask_buf = np.zeros((decisions, 14), dtype=bool)
    act_buf = np.zeros(decisions, dtype=np.int64)
    same, obs, n = 0, env.reset(), 0
    while n < decisions:
        masks = env.action_masks()
        played = np.asarray(student.act_batch(obs, masks), dtype=np.int64)
        wanted = np.asarray(label.act_batch(obs, masks), dtype=np.int64)
        k = min(len(obs), decisions - n)
        obs_buf[n : n + k], mask_buf[n : n + k], act_buf[n : n + k] = obs[:k], masks[:k], wanted[:k]
        same += int(np.sum(played[:k] == wanted[:k]))
        n += k
        obs, _, _, _ = env.step(played)
    env.close()
    return obs_buf, mask_buf, act_buf, same / decisions


def dagger_run(
    config: str,
    out: str | None = None,
    seed: int | None = None,
    iterations: int = 1,
    iter_decisions: int = 400_000,
    iter_epochs: int = 4,
    iter_batch_size: int = 2048,
    iter_learning_rate: float = 5e-4,
) -> Path:
    """A bot by cloning plus DAgger (no PPO): a run folder that ``train/export.py`` exports.

    Uses the config's ``pretrain`` (batched teacher data, epochs, batch size, learning rate),
    ``ppo.net_arch``/``activation`` and ``seed``; then ``iterations`` rounds of: collect
    ``iter_decisions`` on-policy states (:func:`collect_on_policy`), add them to the data set,
    refit ``iter_epochs`` epochs. Writes config.yaml, dagger.json, final_model.zip,
    final_eval.json and the exported bot.onnx + bot.json.
    """
    import torch

    from train.export import export_run
    from train.ppo import build_model, final_evaluation, prepare_run
    from train.sb3_vec_env import RackoVecEnv

    cfg, run_dir = prepare_run(config, out, seed, None, False)
    pre = cfg.pretrain
    if pre.decisions == 0:
        raise ValueError("pretrain.decisions must be positive for a DAgger run")
    torch.set_num_threads(cfg.torch_threads)
    rules = cfg.rules_options()
    env = RackoVecEnv(8, num_players=cfg.num_players, opponents=["random"], seed=cfg.seed, **rules)
    model = build_model(cfg, env)
    log: dict[str, Any] = {
        "iterations": iterations,
        "iter_decisions": iter_decisions,
        "iter_epochs": iter_epochs,
        "iter_batch_size": iter_batch_size,
        "iter_learning_rate": iter_learning_rate,
        "steps": [],
    }
    t0 = time.time()
    data = collect_teacher_data(
        pre.teacher, cfg.num_players, rules, pre.decisions, cfg.seed, cfg.episode, batched=True
    )
    t1 = time.time()
    losses = behaviour_clone(model, *data, pre.epochs, pre.batch_size, pre.learning_rate, cfg.seed)
    log["steps"].append(
        {
            "kind": "clone",
            "decisions": pre.decisions,
            "collect_seconds": round(t1 - t0, 1),
            "fit_seconds": round(time.time() - t1, 1),
            "losses": losses,
        }
    )
    print(f"cloned {pre.teacher}: loss {losses[-1]:.4f}", flush=True)
    for i in range(iterations):
        t0 = time.time()
        *new, on_policy = collect_on_policy(
            model,
            pre.teacher,
            cfg.num_players,
            rules,
            iter_decisions,
            cfg.seed + 1000 * (i + 1),
            cfg.episode,
        )
        data = tuple(np.concatenate([old, add]) for old, add in zip(data, new, strict=True))
        t1 = time.time()
        losses = behaviour_clone(
            model, *data, iter_epochs, iter_batch_size, iter_learning_rate, cfg.seed + i + 1
        )
        log["steps"].append(
            {
                "kind": "dagger",
                "decisions": iter_decisions,
                "on_policy_agreement": on_policy,
                "collect_seconds": round(t1 - t0, 1),
                "fit_seconds": round(time.time() - t1, 1),
                "losses": losses,
            }
        )
        print(f"DAgger {i + 1}: on-policy agreement {on_policy:.3f}, loss {losses[-1]:.4f}")
    (run_dir / "dagger.json").write_text(json.dumps(log, indent=1))
    model.save(run_dir / "final_model.zip")
    if cfg.final_eval.rounds:
        final_evaluation(model, cfg, run_dir)
    onnx_path, _ = export_run(run_dir)
    return onnx_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Clone a teacher bot, then DAgger (no PPO).")
    parser.add_argument("--config", required=True, help="YAML config (its pretrain section)")
    parser.add_argument("--out", help="override the run folder")
    parser.add_argument("--seed", type=int, help="override the config's seed")
    parser.add_argument("--iterations", type=int, default=1, help="DAgger rounds")
    parser.add_argument("--iter-decisions", type=int, default=400_000)
    parser.add_argument("--iter-epochs", type=int, default=4)
    parser.add_argument("--iter-batch-size", type=int, default=2048)
    parser.add_argument("--iter-learning-rate", type=float, default=5e-4)
    args = parser.parse_args(argv)
    onnx_path = dagger_run(
        args.config,
        args.out,
        args.seed,
        args.iterations,
        args.iter_decisions,
        args.iter_epochs,
        args.iter_batch_size,
        args.iter_learning_rate,
    )
    print(f"exported {onnx_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
