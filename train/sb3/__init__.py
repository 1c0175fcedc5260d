"""The main job, MaskablePPO on stable-baselines3: its front door ``run`` (the script
``train/ppo.py``, ``racko train``; ``trainer`` is the run), and the commands built on its trainer:
``racko export`` (``export``) and ``racko exploit`` (``exploit``)."""
