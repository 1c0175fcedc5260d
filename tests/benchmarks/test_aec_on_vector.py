"""benchmarks/aec_on_vector.py: its prototypes play exactly racko_v0's games, and the check can fail.

The speed numbers themselves are in docs/env.md; nothing here looks at a time.
"""

from __future__ import annotations

import pytest

from benchmarks.aec_on_vector import (
    CHECK_CONFIGS,
    ReferenceChance,
    VectorAECEnv,
    check_same_games,
    main,
    vector_env,
)
from racko_env.engine import RackoGame


@pytest.mark.parametrize("variant", ["numpy", "compiled"])
def test_the_prototypes_play_racko_v0s_games(variant) -> None:
    from benchmarks.aec_on_vector import VARIANTS

    # The options of the benchmark's own check (both episode and reward modes, partners, flip,
    # min_run with bonus), in shorter rounds: truncations, refills and game-mode deals still come.
    configs = [{**cfg, "turn_limit": min(cfg.get("turn_limit", 400), 50)} for cfg in CHECK_CONFIGS]
    assert check_same_games(configs, 1, seed=5, make=VARIANTS[variant]) > 100


class _OtherDeals(VectorAECEnv):
    """A prototype that deals from another seed: the check must notice at the first observation."""

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        super().reset(None if seed is None else seed + 1, options)


def test_the_check_fails_on_a_different_game() -> None:
    with pytest.raises(AssertionError, match="differ"):
        check_same_games([{"num_players": 2}], 1, seed=0, make=_OtherDeals)


def test_reference_chance_deals_what_the_readable_engine_deals() -> None:
    chance = ReferenceChance()
    chance.rng.seed(123)
    dealer = int(chance.first_dealers(None, 3)[0])
    deck = chance.deck_orders(None, 50)[0].tolist()
    game = RackoGame(num_players=3)
    game.new_game(seed=123)
    assert dealer == game.dealer
    again = RackoGame(num_players=3)
    again.new_game(seed=0, first_dealer=dealer, deck_order=deck)
    assert again.racks == game.racks and again.discard == game.discard and again.draw == game.draw


def test_the_wrapped_prototype_ends_an_illegal_move_as_racko_v0_does() -> None:
    env = vector_env("compiled", num_players=2)
    env.reset(seed=1)
    agent = env.agent_selection
    env.step(12)  # keep, at the start of a turn: TerminateIllegalWrapper ends the episode
    assert env.unwrapped.rewards[agent] == -1.0 and all(env.unwrapped.terminations.values())


def test_bad_arguments_are_refused(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--players", "5"])
    assert "--players must be 2, 3 or 4" in capsys.readouterr().err
