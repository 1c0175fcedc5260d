"""The parts of ``train/distill.py``: a bot file that plays like the search bot without searching
(expert iteration: the search labels the states the network visits, the network imitates it)."""
