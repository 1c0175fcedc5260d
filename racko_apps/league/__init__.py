"""``racko league DIR``: the bots of a folder (``submissions``), the schedule, the clock per
pairing, the pool that plays pairings, the SQLite record, the ratings and the reports.
May import ``racko_env``, ``agents``, ``racko_eval`` and ``racko_apps.referee`` and ``.sandbox``."""
