"""``racko new-bot NAME``: the starter bot and its test (``starter``), the weights starter and
the solitaire starter.
May import ``racko_env`` and ``agents``; no other part of ``racko_apps``."""
