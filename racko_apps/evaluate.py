"""``racko evaluate``: the duplicate tournament of ``train/evaluate.py``, from any folder.

Same options as ``python train/evaluate.py`` (``racko evaluate --help``). It needs no torch: the
tournament uses only bots and envs. ``module:Class`` bots are found in the current folder.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from racko_eval.evaluate import main as evaluate_main

    return int(evaluate_main(argv) or 0)


if __name__ == "__main__":
    sys.exit(main())
