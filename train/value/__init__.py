"""The parts of ``train/value_iteration.py`` (approximate policy iteration on a learned rack
value): the value net and the one-ply policy over it (``network``), the states it learns from
(``data``), the least-squares fit (``fit``) and the run itself: run folder, iterations, export
(``run``)."""
