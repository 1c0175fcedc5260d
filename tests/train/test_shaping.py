"""Reward shaping (train/sb3/shaping.py): potential-based, it telescopes and ends at zero."""

from __future__ import annotations

import numpy as np
import pytest

from racko_env.gym_env import RackoGymEnv


def test_shaping_is_potential_based_and_telescopes() -> None:
    """Over whole episodes the discounted shaped terms sum to -coef * phi(s0) (gamma-correct)."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from train.sb3.shaping import RackShaping, ascending_length, potential

    assert ascending_length(np.array([5, 9, 13, 24, 25, 32, 4, 35, 42, 55])) == 9
    assert ascending_length(np.array([3, 2, 1])) == 1

    def make():
        return RackoGymEnv(num_players=2, opponents=["heuristic"], seat=0)

    coef, gamma = 2.0, 0.9
    plain = DummyVecEnv([make])
    shaped = RackShaping(DummyVecEnv([make]), coef=coef, gamma=gamma)
    plain.seed(4)
    shaped.seed(4)
    obs_p, obs_s = plain.reset(), shaped.reset()
    rng = np.random.default_rng(0)
    episodes, t, discounted, phi0 = 0, 0, 0.0, potential(obs_p[0])
    while episodes < 4:
        mask = plain.env_method("action_masks")[0]
        a = np.array([rng.choice(np.flatnonzero(mask))])
        obs_p, r_p, d_p, _ = plain.step(a)
        obs_s, r_s, d_s, _ = shaped.step(a)
        assert np.array_equal(obs_p, obs_s) and d_p[0] == d_s[0]
        discounted += gamma**t * float(r_s[0] - r_p[0])
        t += 1
        if d_p[0]:
            assert discounted == pytest.approx(-coef * phi0, abs=1e-4)
            assert phi0 > 0
            episodes += 1
            t, discounted, phi0 = 0, 0.0, potential(obs_p[0])


def test_shaping_term_ends_at_zero() -> None:
    from train.sb3.shaping import shaping_term

    assert shaping_term(0.3, 0.5, False, 0.99) == pytest.approx(0.99 * 0.5 - 0.3)
    assert shaping_term(0.3, 0.5, True, 0.99) == pytest.approx(-0.3)  # phi = 0 at the end
