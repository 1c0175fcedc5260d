"""The parts of ``train/ppo.py``, MaskablePPO on stable-baselines3 (``trainer`` is the run)."""
