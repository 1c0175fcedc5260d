"""Shared test setup: one torch thread (2-core machines collapse under load otherwise)."""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the environment tests need no torch
    pass
