"""Benchmarks: scripts that measure speed and strength, run from the repository root as
``python -m benchmarks.NAME`` (each prints its table; the numbers live in docs/)."""
