"""The main job (``run``: ``train/ppo.py``, ``racko train``), ``racko export`` and ``racko exploit``."""
