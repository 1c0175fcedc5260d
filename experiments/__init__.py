"""Experiments that lost or wait for a use, run as ``python -m experiments.NAME`` (README.md says
what each tried and found)."""
