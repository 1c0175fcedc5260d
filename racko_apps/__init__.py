"""Front ends that seat bots: the ``racko`` command and its subcommands (the apps layer).

It may import every layer below (``racko_env``, ``agents``, ``racko_eval``, ``train``), and nothing
below imports it. ``cli`` dispatches; each concern is a subpackage whose docstring says its imports.
"""
