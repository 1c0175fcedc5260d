"""Which isolation a sandboxed bot runs under, and what a report must say about it.

``ISOLATIONS``, strongest first: ``bwrap`` (racko_apps.sandbox.bwrap), ``user``
(racko_apps.sandbox.user), ``none``. ``choose_isolation`` picks the strongest that works here
(or checks the one asked for) and gives the warning line every report of the run states.
"""

from __future__ import annotations

import argparse

from racko_apps.sandbox.bwrap import INSTALL_BWRAP, check_isolation, isolation_available
from racko_apps.sandbox.user import check_user, granted_note, user_available

# What every report of a grade or league run with --no-isolation says at its top.
NOT_ISOLATED = (
    "WARNING: the bots were not isolated (--no-isolation): a submission could read or change "
    "anything the user can, other submissions and the results included; install bubblewrap "
    f"({INSTALL_BWRAP}) and run again"
)
# How a bot's child runs, strongest first: under bubblewrap (its own namespaces: sees only its
# files, no network), as a user of its own (file permissions and resource limits only; root
# needed), or as the grader's own process (a guard against mistakes, not against malice).
ISOLATIONS = ("bwrap", "user", "none")
# What a report says at its top when the bots ran under the "user" or "none" isolation.
USER_WARNING = (
    "WARNING: the bots ran as unprivileged users of their own with resource limits "
    "(isolation 'user'), which is weaker than bubblewrap: a submission could read any file "
    "other users may read and reach the network; install bubblewrap "
    f"({INSTALL_BWRAP}) where namespaces are allowed"
)
NO_ISOLATION_WARNING = (
    "WARNING: the bots were not isolated (isolation 'none'): a submission could read or change "
    "anything the user can, other submissions and the results included; install bubblewrap "
    f"({INSTALL_BWRAP}) and run again"
)
_WARNINGS = {"bwrap": None, "user": USER_WARNING, "none": NO_ISOLATION_WARNING}


def add_isolation_arguments(
    parser: argparse.ArgumentParser,
    choices: tuple[str, ...],
    default: str,
    help: str | None = None,
    none_help: str = "none",
) -> None:
    """``--isolation CHOICE`` and its shorthand ``--no-isolation`` (``--isolation none``), one
    or the other: the grade and Gradescope commands' shared pair (each its own help)."""
    isolation = parser.add_mutually_exclusive_group()
    isolation.add_argument("--isolation", choices=choices, default=default, help=help)
    isolation.add_argument(
        "--no-isolation", dest="isolation", action="store_const", const="none", help=none_help
    )


def choose_isolation(requested: str | None) -> tuple[str, str | None]:
    """The isolation to run bots under, and the warning line every report must state (None for
    bubblewrap). ``requested`` None (or ``"auto"``): bubblewrap where it can create namespaces,
    else the user backend where this process is root (and Python is readable by other users),
    else none. A named one is checked: IsolationUnavailableError (one line) where it cannot run;
    ValueError for a name not in ``ISOLATIONS``."""
    if requested in (None, "auto"):
        if isolation_available():
            return "bwrap", None
        if user_available():
            return "user", _user_warning()
        return "none", NO_ISOLATION_WARNING
    if requested not in ISOLATIONS:
        raise ValueError(
            f"isolation must be one of {', '.join(ISOLATIONS)} or auto, got {requested!r}"
        )
    if requested == "bwrap":
        check_isolation()
    elif requested == "user":
        check_user()
        return requested, _user_warning()
    return requested, _WARNINGS[requested]


def _user_warning() -> str:
    """``USER_WARNING``, with the folders the user backend opened for passage where it did."""
    note = granted_note()
    return USER_WARNING if note is None else f"{USER_WARNING}; {note}"
