"""The parts of ``train/ppo.py`` (MaskablePPO on stable-baselines3): the run by phase
(``trainer``), the model built from the config or loaded from a run (``model``), its evaluation
(``evaluation``) and export (``export``), the structured network as MaskablePPO's policy (``policy``; the network itself is
``train.network``'s) and its feature cache
(``feature_cache``), the batched engine as an SB3 VecEnv (``vec_env``) and the env factory
(``envs``), self-play snapshots and callbacks (``selfplay``), data-only checkpoints
(``checkpoint``), teacher data (``pretrain``) and the warm start (``warmstart``)."""
