"""Games a person plays or watches: the terminal game (``cli``, ``table``, ``text``, ``hint``),
``racko replay``, and ``racko web`` with the traces its JS twin of the engine replays.
May import ``racko_env``, ``agents`` and ``racko_eval``; no other part of ``racko_apps``."""
