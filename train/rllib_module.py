"""The old path of ``train.rllib.module``, kept so that RLlib checkpoints written before the move
(which record the module class as ``train.rllib_module.MaskedActorCritic``) keep loading.

New code imports ``train.rllib.module``.
"""

from train.rllib.module import (
    ExportPolicy,
    MaskedActorCritic,
    MLPEncoder,
    ModuleBot,
    ModulePolicy,
    batch_player,
    build_encoder,
    export_graph,
    load_sb3_state_dict,
    masked_logits,
    module_actions,
    sb3_state_dict,
    to_network,
)

__all__ = [
    "ExportPolicy",
    "MLPEncoder",
    "MaskedActorCritic",
    "ModuleBot",
    "ModulePolicy",
    "batch_player",
    "build_encoder",
    "export_graph",
    "load_sb3_state_dict",
    "masked_logits",
    "module_actions",
    "sb3_state_dict",
    "to_network",
]
