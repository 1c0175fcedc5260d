"""The model layer every trainer imports: the structured network in plain torch, no trainer inside.

Its features (``features``: ``RackFeatures``, the torch twin of the compiled kernel
``agents.features.rack_features``, kept because the exported graph holds its features), its
heads and the whole actor-critic (``structured``: ``StructuredHeads``, ``StructuredNetwork``, the
exported ``PolicyGraph``) and the frozen batch player of snapshots and evaluations
(``frozen``: ``FrozenPolicy``). The SB3 trainer plugs these into MaskablePPO
(``train/sb3/policy.py``); RLlib's module (``train/rllib/module.py``) holds them directly.
"""
