"""Rack-O on TorchRL and Tianshou's PettingZoo wrappers: ``python train/examples/NAME.py``."""
