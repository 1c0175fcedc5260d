"""The structured network in plain torch, with no trainer inside: its features (``features``),
heads and actor-critic (``structured``) and the frozen batch player (``frozen``)."""
