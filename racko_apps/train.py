"""``racko train``: the main training job of ``train/ppo.py``, from any folder.

Same options as ``python train/ppo.py`` (``racko train --help``); needs the ``train`` extra
(torch, stable-baselines3), imported only when this subcommand runs.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    try:
        from train.ppo import main as ppo_main
    except ImportError as err:
        print(
            f"racko train: error: training needs the 'train' extra ({err}); "
            "install it with: pip install 'racko[train]'",
            file=sys.stderr,
        )
        return 2
    return int(ppo_main(argv) or 0)


if __name__ == "__main__":
    sys.exit(main())
