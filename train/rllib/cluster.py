"""Ray for the RLlib trainer and the sweep: a local instance of their own or a running cluster,
and nothing of either written to the user's home. Imports no Ray at load: Ray reads its
authentication settings when first imported, so ``keep_home_clean`` must come first."""

from __future__ import annotations

import os
import secrets
import socket
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CODE_PACKAGES = ("racko_env", "racko_eval", "agents", "train")  # what a job's workers import


class UserError(Exception):
    """A problem with the command line, config or cluster: printed as one line, no traceback."""


def check_reachable(address: str) -> None:
    """Fail fast and clearly on ``host:port`` nobody listens on (ray.init would retry a while)."""
    if address in ("auto", "local") or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"--address {address!r}: expected 'auto' or HOST:PORT of a Ray head node")
    try:
        with socket.create_connection((host, int(port)), timeout=5):
            pass
    except OSError as exc:
        raise UserError(f"cannot reach a Ray cluster at {address}: {exc.strerror or exc}") from None


def keep_home_clean(run_dir: Path, joining: bool) -> None:
    """Ray 2.60 would save a new local cluster's token in ``~/.ray/auth_token`` (here it lives in
    this process's environment, inherited by Ray's processes), and onnxruntime its device id under
    ``~/.cache`` (here the run folder's ``.cache``)."""
    os.environ["XDG_CACHE_HOME"] = str((run_dir / ".cache").resolve())
    if joining:  # the cluster's own authentication settings apply
        return
    if not any(
        os.environ.get(k) for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
    ):
        os.environ["RAY_AUTH_MODE"] = "token"
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)


def start_ray(
    address: str | None, run_dir: Path, temp_dir: Path, num_cpus: int, num_gpus: int | None
) -> None:
    """Join the cluster at ``address`` (``auto``, HOST:PORT; the repository's packages travel to
    every node with the job), or start a new local instance (never a cluster left running) whose
    workers import this checkout; ``temp_dir`` takes its session files."""
    keep_home_clean(run_dir, joining=bool(address))
    import ray

    if address:
        check_reachable(address)
        try:
            ray.init(
                address=address,
                runtime_env={"py_modules": [str(REPO / p) for p in CODE_PACKAGES]},
                logging_level="ERROR",
                log_to_driver=False,
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise UserError(f"cannot join the Ray cluster at {address}: {exc}") from None
        return
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
    )
    ray.init(
        address="local",
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        include_dashboard=False,
        _temp_dir=str(temp_dir),
        logging_level="ERROR",
        log_to_driver=False,
    )
