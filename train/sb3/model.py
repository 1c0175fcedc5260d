"""The PPO model of a run: built from its validated config, started from another run's weights, or
loaded from a run folder; and the frozen snapshot of its policy that self-play and the evaluations
play."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from train.common.config import TrainConfig, load_config
from train.common.files import RunFolderError
from train.common.runs import FINAL_MODEL
from train.common.snapshot import SnapshotPolicy


def policy_spec(cfg: TrainConfig) -> tuple[Any, dict[str, Any]]:
    """The policy class (or SB3 name) and its keyword arguments for ``ppo.policy``: ``structured``
    (train/sb3/policy.py) or ``flat`` (SB3's MLP, the baseline)."""
    import torch

    p = cfg.ppo
    if p.policy == "structured":
        from train.sb3.policy import StructuredPolicy

        rules = _rules(cfg)
        sizes = {"slot_hidden": p.slot_hidden, "trunk_hidden": p.net_arch}
        game = {"num_players": rules.num_players, "rack_size": rules.rack_size}
        return StructuredPolicy, {"num_cards": rules.num_cards, **game, **sizes}
    act = torch.nn.Tanh if p.activation == "tanh" else torch.nn.ReLU
    return "MlpPolicy", {"net_arch": list(p.net_arch), "activation_fn": act}


def make_vec_env(cfg: TrainConfig, opponents: list[Any], weights: list[float]) -> Any:
    """``cfg.n_envs`` games against opponents drawn from the pool by weight (``RackoVecEnv``)."""
    from train.sb3.vec_env import RackoVecEnv

    return RackoVecEnv(
        cfg.n_envs,
        num_players=cfg.num_players,
        opponents=opponents,
        opponent_weights=weights,
        seed=cfg.seed,
        **cfg.model_dump(include={"reward", "episode"}),
        **cfg.rules_options(),
    )


def wrap_features(cfg: TrainConfig, vec_env: Any) -> Any:
    """The structured policy's features computed once per observation (``train.sb3.feature_cache``)."""
    if cfg.ppo.policy != "structured":
        return vec_env
    from racko_env.observation import layout_for
    from train.sb3.feature_cache import FeatureCache

    rules = _rules(cfg)
    return FeatureCache(vec_env, rules.num_cards, layout_for(rules))


def _rules(cfg: TrainConfig) -> Any:
    """The run's game (``RulesConfig``): its sizes size the structured policy's features."""
    from racko_env.config import RulesConfig

    return RulesConfig.from_dict({**cfg.rules_options(), "num_players": cfg.num_players})


def snapshot_from_model(model: Any, name: str = "snapshot") -> SnapshotPolicy:
    """The policy head of a MaskablePPO MLP policy (``ppo.policy: flat``) as a SnapshotPolicy."""
    import torch.nn as nn

    net = model.policy.mlp_extractor.policy_net
    layers = [_linear(m) for m in net if isinstance(m, nn.Linear)]
    activation = "relu" if any(isinstance(m, nn.ReLU) for m in net) else "tanh"
    return SnapshotPolicy([*layers, _linear(model.policy.action_net)], activation, name)


def _linear(module: Any) -> tuple[Any, Any]:
    import numpy as np

    return tuple(t.detach().cpu().numpy().astype(np.float32) for t in (module.weight, module.bias))


def make_snapshot(model: Any, name: str = "snapshot") -> Any:
    """A frozen copy of the learner that plays batches: a self-play opponent, the evaluated bot."""
    from train.network.frozen import FrozenPolicy
    from train.sb3.policy import StructuredPolicy

    if isinstance(model.policy, StructuredPolicy):
        return FrozenPolicy(model.policy, name)
    return snapshot_from_model(model, name)


def _update_threads_class(threads: int | None) -> Any:
    """MaskablePPO, or a subclass whose update (``train()``, the gradient steps) runs on
    ``threads`` torch threads and then restores the rollout's."""
    from sb3_contrib import MaskablePPO

    if threads is None:
        return MaskablePPO

    class ThreadedUpdatePPO(MaskablePPO):
        def train(self) -> None:
            import torch

            before = torch.get_num_threads()
            torch.set_num_threads(threads)
            try:
                super().train()
            finally:
                torch.set_num_threads(before)

    return ThreadedUpdatePPO


def build_model(cfg: TrainConfig, env: Any = None, tensorboard_log: str | None = None) -> Any:
    """A fresh MaskablePPO with the config's hyperparameters and policy (CPU, seeded). Every model
    of a run is built here, also when loading: weights files hold data only, so a saved model is
    this model with its weights copied in (``train.sb3.checkpoint``). ``env=None`` builds on a
    one-game batched env (for loading and exporting, where no training happens)."""
    if env is None:
        from train.sb3.vec_env import RackoVecEnv

        env = wrap_features(
            cfg, RackoVecEnv(1, cfg.num_players, seed=cfg.seed, **cfg.rules_options())
        )
    p = cfg.ppo
    policy, policy_kwargs = policy_spec(cfg)
    kwargs = p.model_dump(exclude={"policy", "net_arch", "slot_hidden", "activation", "anneal_lr"})
    if p.anneal_lr:  # SB3 passes the progress left (1 to 0) of the run's step count, resumes too
        from stable_baselines3.common.utils import LinearSchedule

        kwargs["learning_rate"] = LinearSchedule(p.learning_rate, 0.0, 1.0)
    return _update_threads_class(cfg.update_threads)(
        policy,
        env,
        **kwargs,  # the rest of the section: MaskablePPO's own names
        policy_kwargs=policy_kwargs,
        tensorboard_log=tensorboard_log,
        seed=cfg.seed,
        device="cpu",
        verbose=0,
    )


def init_policy_from(model: Any, path: str | Path) -> None:
    """Copy a run's saved policy weights (actor and critic, ``final_model.pt``) into ``model``. The
    file is read as data only (a pickle inside is refused, never run); a network of another shape is
    refused naming both shapes."""
    from train.sb3.checkpoint import copy_policy_weights, load_weights

    data = load_weights(path, "init_from")
    copy_policy_weights(model, data["policy"], f"init_from {path}")


def load_trained_model(run_dir: Path) -> tuple[TrainConfig, Any]:
    """A PPO run's config and model: ``final_model.pt``, else the newest checkpoint's policy."""
    from train.sb3.checkpoint import CHECKPOINTS, copy_policy_weights, load_torch_data, load_weights

    cfg = load_config(run_dir / "config.yaml")
    model = build_model(cfg)
    final = run_dir / FINAL_MODEL
    if final.is_file():
        data = load_weights(final, "final model")
        copy_policy_weights(model, data["policy"], str(final))
        model.num_timesteps = int(data["timesteps"])
        return cfg, model
    ckpt = CHECKPOINTS.latest(run_dir)
    if ckpt is None:
        raise RunFolderError(f"no {FINAL_MODEL} and no complete checkpoint in {run_dir}")
    tensors = load_torch_data(ckpt / "model.pt", f"checkpoint {ckpt}")
    if not isinstance(tensors, dict) or "policy" not in tensors:
        raise RunFolderError(f"checkpoint {ckpt}: model.pt holds no policy")
    copy_policy_weights(model, tensors["policy"], f"checkpoint {ckpt}")
    model.num_timesteps = int(ckpt.name.removeprefix("step_"))
    return cfg, model
