"""PPO on Ray RLlib and the main job on Ray Tune: the RLlib trainer's front door ``run`` (the
script ``train/rllib_ppo.py``, ``racko train-rllib``) and its parts, and ``racko sweep``
(``sweep``: seeds and sweeps of the SB3 main job as Ray Tune trials, on the same Ray start-up)."""
