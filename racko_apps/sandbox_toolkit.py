"""What of the toolkit a sandboxed bot sees."""

from __future__ import annotations

from pathlib import Path

# The toolkit's own packages; the rest of a checkout is never shown to a bot.
TOOLKIT_PACKAGES = ("agents", "racko_env", "racko_apps", "racko_eval", "train")


def toolkit_root() -> str:
    """The folder the toolkit's packages are imported from, for the child's PYTHONPATH."""
    return str(Path(__file__).resolve().parents[1])
