"""Checkpoints and weight files of a PPO run, in data-only formats: opening someone else's run
folder must not run their code, so nothing here unpickles.

- ``final_model.pt`` (and ``init_from``): ``{"format", "version", "timesteps", "policy"}``, the
  policy's ``state_dict``, read with ``torch.load(weights_only=True)``; the model is rebuilt from
  the run's validated config and the weights are copied in.
- ``checkpoints/step_000123456/``: ``model.pt`` (policy, optimizer, torch RNG), ``arrays.npz`` (the
  last observation, the numpy RNG, the VecEnv's arrays; no pickle), ``state.json`` (counters, the
  Python RNG, callback and VecEnv state, the config) and ``pool/`` (self-play snapshots), written
  under a temporary name and renamed when whole (``train.common.runs``)."""

from __future__ import annotations

import io
import json
import random
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
import torch

from racko_env.files import write_bytes_atomic
from train.common.files import RunFolderError
from train.common.runs import FINAL_MODEL, Checkpoints
from train.common.snapshot import SnapshotPool

# checkpoints/step_000123456/, complete once state.json (written last) is there
CHECKPOINTS = Checkpoints("step_", ("model.pt", "arrays.npz", "state.json"), digits=12)
FORMAT = "racko-ppo-checkpoint"
WEIGHTS_FORMAT = "racko-ppo-weights"
VERSION = 1


def torch_bytes(obj: Any) -> bytes:
    """``torch.save`` into bytes (tensors and plain containers: what ``load_torch_data`` reads)."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def load_torch_data(path: str | Path, what: str) -> Any:
    """``torch.load(weights_only=True)``: tensors and plain containers only, never code. A file that
    holds anything else (a pickled object, an SB3 ``.zip``) is refused with a ``RunFolderError``
    naming the file; nothing in it is executed."""
    path = Path(path)
    if not path.is_file():
        raise RunFolderError(f"{what}: no file at {path}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # UnpicklingError, RuntimeError (not a torch file), EOFError, ...
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RunFolderError(
            f"{what}: {path} is not a data-only weights file written by this project "
            f"(refused without running it: {first[:200]})"
        ) from None


def save_weights(model: Any, path: str | Path, timesteps: int | None = None) -> Path:
    """Write ``model.policy.state_dict()`` as a data-only ``.pt`` file (atomically)."""
    data = {
        "format": WEIGHTS_FORMAT,
        "version": VERSION,
        "timesteps": int(model.num_timesteps if timesteps is None else timesteps),
        "policy": model.policy.state_dict(),
    }
    return write_bytes_atomic(path, torch_bytes(data))


def load_weights(path: str | Path, what: str = "weights") -> dict[str, Any]:
    """Read a ``save_weights`` file: ``{"policy": state_dict, "timesteps": int, ...}``."""
    data = load_torch_data(path, what)
    if not isinstance(data, dict) or data.get("format") != WEIGHTS_FORMAT:
        raise RunFolderError(f"{what}: {path} is not a racko PPO weights file ({FINAL_MODEL})")
    if data.get("version") != VERSION:
        raise RunFolderError(f"{what}: {path} has version {data.get('version')}, not {VERSION}")
    return data


def copy_policy_weights(model: Any, state_dict: dict[str, Any], source: str) -> None:
    """Load a policy state dict into ``model.policy``; a shape mismatch names both shapes."""
    target = model.policy.state_dict()
    theirs = {k: tuple(v.shape) for k, v in state_dict.items()}
    ours = {k: tuple(v.shape) for k, v in target.items()}
    if theirs != ours:
        diff = sorted(k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k))
        raise RunFolderError(
            f"{source}: its network does not match the config's policy (ppo.net_arch); first "
            "differences: " + ", ".join(f"{k} {theirs.get(k)} vs {ours.get(k)}" for k in diff[:3])
        )
    model.policy.load_state_dict(state_dict)


def save_checkpoint(
    run_dir: Path,
    model: Any,
    pool: SnapshotPool,
    env_state: tuple[dict[str, Any], dict[str, np.ndarray]],
    extra: dict[str, Any],
    config: dict[str, Any],
    keep: int = 3,
) -> Path:
    """Write a checkpoint at the model's current timestep; keep the newest ``keep``. Take it at a
    rollout boundary (the rollout buffer empty, the model just updated): then a resume continues
    exactly as the uninterrupted run would."""
    tensors = {
        "policy": model.policy.state_dict(),
        "optimizer": model.policy.optimizer.state_dict(),
        "torch_rng": torch.get_rng_state(),
    }
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    env_meta, env_arrays = env_state
    arrays: dict[str, np.ndarray] = {
        "model/last_obs": np.asarray(model._last_obs),
        "model/last_episode_starts": np.asarray(model._last_episode_starts),
        "numpy_rng/keys": np.asarray(keys),
        **env_arrays,
    }
    py_version, py_internal, py_gauss = random.getstate()
    state = {
        "format": FORMAT,
        "version": VERSION,
        "timesteps": int(model.num_timesteps),
        "n_updates": int(model._n_updates),
        "episode_num": int(model._episode_num),
        "ep_info_buffer": list(model.ep_info_buffer or []),
        "numpy_rng": {"kind": kind, "pos": int(pos), "has_gauss": int(has_gauss)}
        | {"cached_gaussian": float(cached)},
        "python_rng": {"version": py_version, "internal": list(py_internal), "gauss": py_gauss},
        "env": env_meta,
        "extra": extra,
        "config": config,
    }
    with CHECKPOINTS.write(Path(run_dir), int(model.num_timesteps), keep) as tmp:
        (tmp / "model.pt").write_bytes(torch_bytes(tensors))
        with open(tmp / "arrays.npz", "wb") as f:
            np.savez(f, **arrays)
        (tmp / "state.json").write_text(json.dumps(state, indent=1, allow_nan=False))
        pool.save(tmp / "pool")
    return CHECKPOINTS.path(Path(run_dir), int(model.num_timesteps))


def read_checkpoint_state(ckpt: Path) -> dict[str, Any]:
    """The checkpoint's ``state.json`` (checked to be this format)."""
    try:
        state = json.loads((ckpt / "state.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunFolderError(f"checkpoint {ckpt}: unreadable state.json ({exc})") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise RunFolderError(f"checkpoint {ckpt}: not a {FORMAT} folder")
    if state.get("version") != VERSION:
        raise RunFolderError(f"checkpoint {ckpt}: version {state.get('version')}, not {VERSION}")
    return state


def load_checkpoint(ckpt: Path, model: Any, pool: SnapshotPool) -> dict[str, Any]:
    """Restore a checkpoint into a model freshly built from the run's config. Restores the policy
    and optimizer, the step counters, the last observation and the snapshot pool. Returns the
    state dict: ``extra`` (callback state), the VecEnv's state as ``env_state`` (``(meta,
    arrays)``), and the RNG states for ``restore_rngs`` (call that last)."""
    state = read_checkpoint_state(ckpt)
    tensors = load_torch_data(ckpt / "model.pt", f"checkpoint {ckpt}")
    if not isinstance(tensors, dict) or set(tensors) != {"policy", "optimizer", "torch_rng"}:
        raise RunFolderError(f"checkpoint {ckpt}: model.pt does not hold a checkpoint")
    copy_policy_weights(model, tensors["policy"], f"checkpoint {ckpt}")
    model.policy.optimizer.load_state_dict(tensors["optimizer"])
    try:
        with np.load(ckpt / "arrays.npz", allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise RunFolderError(f"checkpoint {ckpt}: arrays.npz refused ({exc})") from None
    model.num_timesteps = int(state["timesteps"])
    model._n_updates = int(state["n_updates"])
    model._episode_num = int(state["episode_num"])
    model._last_obs = arrays.pop("model/last_obs")
    model._last_episode_starts = arrays.pop("model/last_episode_starts")
    model.ep_info_buffer = deque(state["ep_info_buffer"], maxlen=model._stats_window_size)
    model.ep_success_buffer = deque(maxlen=model._stats_window_size)
    pool.load(ckpt / "pool")
    state["torch_rng"] = tensors["torch_rng"]
    state["numpy_rng_keys"] = arrays.pop("numpy_rng/keys")
    state["env_state"] = (state["env"], arrays)
    return state


def restore_rngs(state: dict[str, Any]) -> None:
    """Put the torch, numpy and Python RNGs of a ``load_checkpoint`` state back (call it last,
    after everything that draws random numbers while the run is being rebuilt)."""
    torch.set_rng_state(state["torch_rng"])
    rng = state["numpy_rng"]
    keys = state["numpy_rng_keys"]
    np.random.set_state((rng["kind"], keys, rng["pos"], rng["has_gauss"], rng["cached_gaussian"]))
    py = state["python_rng"]
    random.setstate((py["version"], tuple(py["internal"]), py["gauss"]))


def resume_run(
    ckpt: Path, cfg: Any, model: Any, pool: SnapshotPool, vec_env: Any
) -> dict[str, Any]:
    """The resume phase of a run (``train.sb3.trainer``): model, optimizer, pool, games and random
    streams as the checkpoint left them; the checkpoint's state (``load_checkpoint``)."""
    state = load_checkpoint(ckpt, model, pool)
    vec_env.set_opponent_pool(*pool.mix(cfg.opponents))
    # the games as they were (``vec_env`` may be wrapped: the feature cache)
    getattr(vec_env, "venv", vec_env).set_state(*state["env_state"])
    restore_rngs(state)
    return state
