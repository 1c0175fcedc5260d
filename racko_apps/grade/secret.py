"""The secret a graded run deals from: a 63-bit seed the teacher keeps, never shown to students.

``racko gradescope-kit`` draws one (``new_secret``) when it builds a kit and stores it only
there, as ``SECRET_FILE`` (readable by its owner only). The autograder grades every submission
on it, so all students meet the same deals, and the teacher's report keeps it, so any grade can
be reproduced (``racko grade BOT --secret FILE``, or ``--seed`` with the report's seed). A run
without a kept secret deals from fresh entropy (``graded_seed``). A regrade after the deadline
is a new kit, with a new secret.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

SECRET_FILE = "secret_seed.json"
SECRET_BITS = 63
SECRET_MODE = 0o600


class SecretError(ValueError):
    """A secret file that cannot be used; one line naming the file."""


def new_secret() -> int:
    """A fresh 63-bit seed from the operating system's entropy."""
    return secrets.randbits(SECRET_BITS)


def secret_text(seed: int) -> str:
    """What ``SECRET_FILE`` holds."""
    return json.dumps({"seed": seed}) + "\n"


def read_secret(path: str | Path) -> int:
    """The seed in a secret file, closed to other users first (``_owner_only``); SecretError
    (one line) when there is none."""
    _owner_only(Path(path))
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SecretError(f"secret file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise SecretError(f"secret file {str(path)!r} cannot be read: {err}") from None
    seed = data.get("seed") if isinstance(data, dict) else None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**SECRET_BITS:
        raise SecretError(f"secret file {str(path)!r} holds no seed (a whole number below 2**63)")
    return seed


def graded_seed(path: str | Path | None) -> tuple[int, str]:
    """The seed of a graded run and its source: the secret in ``path`` when the file exists,
    else fresh entropy (kept only in the teacher's report)."""
    if path is not None and Path(path).exists():
        return read_secret(path), "secret"
    return new_secret(), "entropy"


def _owner_only(path: Path) -> None:
    """Close the secret to other users before any bot runs (an unzip may not keep its mode, and
    a bot isolated as a user of its own can read what other users may read)."""
    try:
        path.chmod(SECRET_MODE)
    except OSError:
        pass  # a read-only kit, or no such file (read_secret says so)
