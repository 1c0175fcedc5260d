"""Evaluate bots against each other in a duplicate tournament: the front door of
``racko_eval.evaluate`` (``racko evaluate`` runs the same command from any folder).

    python train/evaluate.py --players 2 --rounds 2000 --bots expert heuristic --seed 0 --json out.json
"""

from __future__ import annotations

import sys

from racko_eval.evaluate import main

if __name__ == "__main__":
    sys.exit(main())
