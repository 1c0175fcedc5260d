"""The warm start PPO fine-tunes from: clone the teacher's moves, then teach the critic what they
win. Cloning a teacher (``expert``) gives PPO a competent actor where a random one would see
almost no wins; but PPO follows ``return - V(s)``, and a critic that knows nothing would push the
clone around with noise, so the critic is then fitted alone to the returns the clone gets against
the training opponents. Both work on the policy's inputs as the training env hands them out."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from racko_env import racko_v1
from racko_env.config import RulesConfig
from racko_env.observation import layout_for
from train.common.files import write_json_atomic
from train.common.snapshot import MASKED_LOGIT

Progress = Callable[[int], None]  # the units done so far (epochs, env steps)

CRITIC_PREFIXES = ("value_net.", "mlp_extractor.value_net.", "mlp_extractor.critic.")
BATCHED_TEACHERS = ("random", "heuristic", "expert")  # have vectorized twins in agents.batched


def critic_parameters(policy: nn.Module) -> list[nn.Parameter]:
    """The critic's own weights: SB3's ``value_net`` and the value tower of the extractor."""
    return [p for name, p in policy.named_parameters() if name.startswith(CRITIC_PREFIXES)]


def actor_parameters(policy: nn.Module) -> list[nn.Parameter]:
    """Everything that shapes the action distribution (all weights but the critic's)."""
    return [p for name, p in policy.named_parameters() if not name.startswith(CRITIC_PREFIXES)]


def policy_logits(policy: Any, inputs: torch.Tensor) -> torch.Tensor:
    """The 14 unmasked logits of an SB3 actor-critic policy for a batch of its inputs."""
    features = policy.extract_features(inputs, policy.pi_features_extractor)
    return policy.action_net(policy.mlp_extractor.forward_actor(features))


def policy_values(policy: Any, inputs: torch.Tensor) -> torch.Tensor:
    """V(s) (B,) of an SB3 actor-critic policy."""
    features = policy.extract_features(inputs, policy.vf_features_extractor)
    return policy.value_net(policy.mlp_extractor.forward_critic(features)).squeeze(-1)


def _masked(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    return torch.where(masks, logits, torch.full_like(logits, MASKED_LOGIT))


def agreement(policy: Any, inputs: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> float:
    """Share of decisions where the policy's masked argmax is the teacher's action."""
    hits = 0
    with torch.no_grad():
        for i in range(0, len(inputs), 4096):
            x = torch.as_tensor(inputs[i : i + 4096])
            m = torch.as_tensor(masks[i : i + 4096])
            pred = _masked(policy_logits(policy, x), m).argmax(1).numpy()
            hits += int((pred == actions[i : i + 4096]).sum())
    return hits / max(len(inputs), 1)


def _fit(
    policy: Any,
    params: list[nn.Parameter],
    loss_of: Callable[[torch.Tensor], torch.Tensor],
    rows: int,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    progress: Progress | None,
) -> list[float]:
    """Adam on ``params`` only over seeded shuffled minibatches of row indices (``loss_of(idx)``
    is a minibatch's loss), the policy in training mode; the mean loss per row of each epoch."""
    opt = torch.optim.Adam(params, lr=learning_rate)
    gen = torch.Generator().manual_seed(seed)
    policy.set_training_mode(True)
    losses = []
    for epoch in range(1, epochs + 1):
        perm = torch.randperm(rows, generator=gen)
        total = 0.0
        for start in range(0, rows, batch_size):
            idx = perm[start : start + batch_size]
            loss = loss_of(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / max(rows, 1))
        if progress is not None:
            progress(epoch)
    policy.set_training_mode(False)
    return [round(v, 5) for v in losses]


def clone_actor(
    policy: Any,
    inputs: np.ndarray,
    masks: np.ndarray,
    actions: np.ndarray,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    holdout: float = 0.1,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Behaviour cloning of the actor only (masked cross-entropy); the critic is left alone. The
    first ``holdout`` of the rows (whole games of the teacher's play, in collection order) is
    held out: the returned ``agreement`` is measured there, so it says how well the clone
    generalises, not how well it memorised."""
    n_val = int(len(inputs) * holdout)
    x = torch.as_tensor(inputs[n_val:])
    m = torch.as_tensor(masks[n_val:])
    a = torch.as_tensor(actions[n_val:], dtype=torch.long)

    def loss(idx: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(_masked(policy_logits(policy, x[idx]), m[idx]), a[idx])

    fit = (len(x), epochs, batch_size, learning_rate, seed, progress)
    losses = _fit(policy, actor_parameters(policy), loss, *fit)
    held = slice(0, n_val) if n_val else slice(0, len(inputs))
    return {
        "losses": losses,
        "agreement": agreement(policy, inputs[held], masks[held], actions[held]),
        "holdout": n_val,
    }


def rollout_returns(
    policy: Any,
    vec_env: Any,
    steps: int,
    gamma: float,
    seed: int,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, discounted returns) of every decision in whole episodes the policy plays. The policy
    samples its moves as PPO will; ``steps`` counts env steps, and only episodes that ended are kept
    (their returns are exact, nothing is bootstrapped)."""
    gen = torch.Generator().manual_seed(seed)
    obs = vec_env.reset()
    n_envs = vec_env.num_envs
    open_obs: list[list[np.ndarray]] = [[] for _ in range(n_envs)]
    open_rew: list[list[float]] = [[] for _ in range(n_envs)]
    xs, gs = [], []
    done_steps = 0
    while done_steps < steps:
        masks = torch.as_tensor(vec_env.action_masks())
        with torch.no_grad():
            logits = _masked(policy_logits(policy, torch.as_tensor(obs)), masks)
            actions = torch.multinomial(torch.softmax(logits, dim=1), 1, generator=gen).squeeze(1)
        new_obs, rewards, dones, _ = vec_env.step(actions.numpy())
        for i in range(n_envs):
            open_obs[i].append(obs[i])
            open_rew[i].append(float(rewards[i]))
            if dones[i]:
                g, returns = 0.0, []
                for r in reversed(open_rew[i]):
                    g = r + gamma * g
                    returns.append(g)
                xs.extend(open_obs[i])
                gs.extend(reversed(returns))
                open_obs[i], open_rew[i] = [], []
        obs = new_obs
        done_steps += n_envs
        if progress is not None:
            progress(min(done_steps, steps))
    return np.stack(xs).astype(np.float32), np.asarray(gs, dtype=np.float32)


def warm_critic(
    policy: Any,
    inputs: np.ndarray,
    returns: np.ndarray,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    holdout: float = 0.1,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Fit the critic alone (value loss, actor frozen) to observed returns. Returns the held-out
    value loss before and after (the last ``holdout`` of the rows, whole episodes), so a warm-up
    that did not help shows it."""
    n_val = max(1, int(len(inputs) * holdout))
    x_fit, g_fit = torch.as_tensor(inputs[:-n_val]), torch.as_tensor(returns[:-n_val])
    x_val, g_val = torch.as_tensor(inputs[-n_val:]), torch.as_tensor(returns[-n_val:])

    def held_out_loss() -> float:
        with torch.no_grad():
            return float(nn.functional.mse_loss(policy_values(policy, x_val), g_val))

    def loss(idx: torch.Tensor) -> torch.Tensor:
        return nn.functional.mse_loss(policy_values(policy, x_fit[idx]), g_fit[idx])

    before = held_out_loss()
    fit = (len(x_fit), epochs, batch_size, learning_rate, seed, progress)
    _fit(policy, critic_parameters(policy), loss, *fit)
    return {"value_loss_before": before, "value_loss_after": held_out_loss(), "rows": len(inputs)}


def _width(num_players: int, rules: dict[str, Any]) -> int:
    """The observation width of the game (its layout: ``OBS_SIZE`` by the rule book)."""
    return layout_for(RulesConfig.from_dict({**rules, "num_players": num_players})).size


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
    """``decisions`` (observation, mask, action) triples from teacher-vs-teacher games. By default
    every seat's decisions in seeded ``racko_v1`` games, one game at a time (any bot).
    ``batched=True`` (a teacher of ``BATCHED_TEACHERS``) plays ``n_envs`` games at once in the
    batched engine with the teacher's ``agents.batched`` twin and records the learner seat's
    decisions: the same kind of data, several times faster, but other games."""
    import agents

    if decisions < 1:
        raise ValueError(f"decisions must be at least 1, got {decisions}")
    if batched:
        return _collect_batched(teacher, num_players, rules, decisions, seed, episode, n_envs)
    bots = [agents.load(teacher, num_players=num_players, **rules) for _ in range(num_players)]
    env = racko_v1.raw_env(num_players=num_players, episode=episode, **rules)
    obs_buf = np.zeros((decisions, _width(num_players, rules)), dtype=np.float32)
    mask_buf = np.zeros((decisions, 14), dtype=bool)
    act_buf = np.zeros(decisions, dtype=np.int64)
    n = 0
    rng = np.random.default_rng(seed)
    while n < decisions:
        env.reset(seed=int(rng.integers(2**63)))
        for bot in bots:
            bot.reset()
        round_number = env.game.round_number
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if env.game.round_number != round_number:
                round_number = env.game.round_number
                for bot in bots:
                    bot.reset()
            action = int(bots[env.agent_name_mapping[agent]].act(obs))
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
    """The learner seat's decisions in ``RackoVecEnv`` games, the teacher in every seat."""
    from agents.batched import load_batch
    from train.sb3.vec_env import RackoVecEnv

    if teacher not in BATCHED_TEACHERS:
        raise ValueError(f"batched collection needs one of {BATCHED_TEACHERS}, got {teacher!r}")
    env = RackoVecEnv(
        n_envs, num_players=num_players, opponents=[teacher], seed=seed, episode=episode, **rules
    )
    label = load_batch(teacher, num_players, seed=seed + 1, **rules)
    obs_buf = np.zeros((decisions, _width(num_players, rules)), dtype=np.float32)
    mask_buf = np.zeros((decisions, 14), dtype=bool)
    act_buf = np.zeros(decisions, dtype=np.int64)
    obs, n = env.reset(), 0
    while n < decisions:
        masks = env.action_masks()
        actions = np.asarray(label.act_batch(obs, masks), dtype=np.int64)
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


def clone_teacher(cfg: Any, model: Any, vec_env: Any, log: Any, run_dir: Any) -> dict[str, Any]:
    """Clone the actor from the config's ``pretrain.teacher``, the first half of a new run's warm
    start; its record, also written to warmstart.json (empty when ``pretrain.decisions`` is 0).
    The decisions are collected in seeded chunks of 10,000, so that progress shows."""
    pre = cfg.pretrain
    if pre.decisions == 0:
        return {}
    t0 = time.time()
    parts, chunk = [], 10_000
    with log.phase(f"teacher decisions ({pre.teacher})", pre.decisions, "decisions") as ph:
        while ph.done < pre.decisions:
            k = min(chunk, pre.decisions - ph.done)
            parts.append(
                collect_teacher_data(
                    pre.teacher,
                    cfg.num_players,
                    cfg.rules_options(),
                    k,
                    cfg.seed + ph.done // chunk,
                    cfg.episode,
                    batched=pre.teacher in BATCHED_TEACHERS,
                )
            )
            ph.advance(k)
    obs, masks, actions = (np.concatenate(x) for x in zip(*parts, strict=True))
    augment = getattr(vec_env, "augment", None)
    inputs = obs
    if augment is not None:  # the structured policy's features, once per decision
        parts = []
        with log.phase("features of the decisions", len(obs), "decisions") as ph:
            for i in range(0, len(obs), 8192):
                parts.append(augment(obs[i : i + 8192]))
                ph.advance(len(parts[-1]))
        inputs = np.concatenate(parts)
    collect_seconds = time.time() - t0
    t1 = time.time()
    with log.phase("cloning the actor", pre.epochs, "epochs", every_s=0.0) as ph:
        info = clone_actor(
            model.policy,
            inputs,
            masks,
            actions,
            pre.epochs,
            pre.batch_size,
            pre.learning_rate,
            cfg.seed,
            progress=ph.update,
        )
    record = {
        "teacher": pre.teacher,
        "decisions": pre.decisions,
        "collect_seconds": round(collect_seconds, 1),
        "fit_seconds": round(time.time() - t1, 1),
        **info,
    }
    write_json_atomic(run_dir / "warmstart.json", record)
    log.info(
        f"cloned {pre.teacher}: agreement {record['agreement']:.1%} on {record['holdout']:,} "
        "held-out decisions"
    )
    return record


def warm_up_critic(
    cfg: Any, model: Any, vec_env: Any, log: Any, run_dir: Any, record: dict[str, Any]
) -> None:
    """Fit the critic alone to the returns the (cloned) actor gets in the training env, the
    second half of a new run's warm start; adds ``critic`` to ``record`` (warmstart.json)."""
    pre = cfg.pretrain
    if pre.critic_steps == 0:
        return
    t0 = time.time()
    with log.phase("critic warm-up: playing", pre.critic_steps, "env steps") as ph:
        inputs, returns = rollout_returns(
            model.policy, vec_env, pre.critic_steps, cfg.ppo.gamma, cfg.seed, ph.update
        )
    with log.phase("critic warm-up: fitting", pre.critic_epochs, "epochs", 0.0) as ph:
        info = warm_critic(
            model.policy,
            inputs,
            returns,
            pre.critic_epochs,
            1024,
            1e-3,
            cfg.seed,
            progress=ph.update,
        )
    record["critic"] = {**info, "seconds": round(time.time() - t0, 1)}
    write_json_atomic(run_dir / "warmstart.json", record)
    log.info(
        f"critic warm-up: held-out value loss {info['value_loss_before']:.3f} -> "
        f"{info['value_loss_after']:.3f} ({info['rows']:,} decisions)"
    )
