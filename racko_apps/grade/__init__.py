"""``racko grade BOT``: the rubric (shipped ones in ``rubrics/``), the run, the sampled positions,
the matches, scoring, the report, the secret seed, the agreement check and solitaire's grading.
May import ``racko_env``, ``agents``, ``racko_eval``, ``racko_apps.referee`` and
``racko_apps.sandbox``; only ``cli`` imports ``racko_apps.gradescope`` (for ``--gradescope``)."""
