"""Matches where a misbehaving bot forfeits the round: seating bots (``match``), the book of a
match's rounds, and rounds played side by side (``lockstep``). Shared by grade and league.
May import ``racko_env``, ``agents``, ``racko_eval`` and ``racko_apps.sandbox``."""
