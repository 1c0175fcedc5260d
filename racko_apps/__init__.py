"""Front ends that seat bots: the ``racko`` command and its subcommands (the apps layer).

This package sits above ``agents``: it may import ``racko_env`` and ``agents`` (and, where a
subcommand trains, ``train``), and nothing below it imports it. See ``racko_apps.cli``.
"""
