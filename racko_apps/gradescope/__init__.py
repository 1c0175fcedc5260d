"""Gradescope: a grade as its ``results.json`` (``schema``), the autograder that writes it, and
``racko gradescope-kit`` (``kit``), which builds the zip an instructor uploads.
May import ``racko_env``, ``racko_apps.grade``, ``racko_apps.league`` (its submissions),
``racko_apps.referee`` and ``racko_apps.sandbox``."""
