"""Package-level contracts: the engine stands alone, and the commands share one set of rules flags."""

import argparse
import subprocess
import sys

import pytest

from racko_env.cli import add_rules_arguments, flag_names, rules_options
from racko_env.config import RulesConfig


def test_rules_engine_needs_no_numpy_gym_pettingzoo_or_torch():
    """The engine is pure Python: with those packages made unimportable it still plays a game."""
    code = """
import sys
for name in ("numpy", "gymnasium", "pettingzoo", "torch"):
    sys.modules[name] = None  # any import of them now raises ImportError
from racko_env import RackoGame, rules
game = RackoGame(num_players=3, empty_pile="flip")
game.new_game(seed=5)
while not game.round_over:
    game.apply(game.legal_actions()[-1])
assert rules.deck_size(3) == 50
print("ok", game.turn)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok")


def test_rules_flags_are_shared_and_name_the_flag_in_errors():
    parser = argparse.ArgumentParser()
    add_rules_arguments(parser)
    args = parser.parse_args(["--empty-pile", "flip", "--turn-limit", "50", "--bonus"])
    options = rules_options(args)
    assert RulesConfig(num_players=2, **options) == RulesConfig(
        num_players=2, empty_pile="flip", turn_limit=50, bonus=True
    )
    with pytest.raises(ValueError) as err:
        RulesConfig(num_players=2, **{**options, "turn_limit": 0})
    assert flag_names(str(err.value)).startswith("--turn-limit must be at least 1")
