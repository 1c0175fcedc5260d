"""The one-file references to read, each run as ``python train/reference/NAME.py``."""
