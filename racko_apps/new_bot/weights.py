"""``racko new-bot NAME --weights``: a starter bot that plays a small network from a weights file.

The bot is a package ``NAME/``: ``NAME/__init__.py`` runs the network in numpy, and
``NAME/weights.npz`` holds its layers, named as a torch ``nn.Sequential`` of ``Linear`` layers
and ReLUs names them in its ``state_dict`` (``0.weight``, ``0.bias``, ``2.weight``...), so a
student's own trained network saves straight into it. The weights are loaded as data only
(``np.load(allow_pickle=False)``): a weights file cannot run code.
"""

from __future__ import annotations

import io

import numpy as np

from racko_env.actions import NUM_ACTIONS
from racko_env.observation import OBS_SIZE

HIDDEN = 64  # the starter network's hidden width
WEIGHTS_FILE = "weights.npz"

WEIGHTS_TEMPLATE = '''"""{name}: a Rack-O bot that plays a small neural network from its weights file. Started by
`racko new-bot {name} --weights`: train the network, save its weights here, hand in the folder.

    {name}/__init__.py   this file: the network, in numpy
    {name}/weights.npz   its weights: arrays "0.weight", "0.bias", "2.weight", "2.bias"

A torch ``nn.Sequential`` of ``Linear`` layers and ``ReLU``s (input: the observation's floats;
output: one logit per action) saves straight into it:

    import numpy as np
    np.savez("{name}/weights.npz", **{{k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}})

The starter weights are random: the bot plays legal moves, badly, until you train them.

Try it (from the folder holding {name}/):
    racko play --bots {name}:Bot              # play against it in the terminal
    racko grade {name}:Bot --rubric quick     # a quick grade; drop --rubric quick for the real one
    python -m pytest test_{name}.py

{guide}"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Bot as BaseBot

WEIGHTS = Path(__file__).with_name("{weights}")


def load_layers(path: Path = WEIGHTS) -> list[tuple[np.ndarray, np.ndarray]]:
    """The network's Linear layers in order, as (weight [out, in], bias [out]) pairs. Data only:
    ``allow_pickle=False`` refuses pickled objects, so a weights file cannot run code."""
    with np.load(path, allow_pickle=False) as data:
        prefixes = {{key.rsplit(".", 1)[0] for key in data.files}}
        order = sorted(
            prefixes, key=lambda p: [int(x) if x.isdigit() else -1 for x in p.split(".")]
        )
        return [
            (data[f"{{p}}.weight"].astype(np.float32), data[f"{{p}}.bias"].astype(np.float32))
            for p in order
        ]


class Bot(BaseBot):
    """Plays the legal action with the network's highest logit."""

    name = "{name}"

    def __init__(self, num_players: int = 2, seed: int | None = None) -> None:
        self.layers = load_layers()

    def reset(self) -> None:
        """A new round: the network remembers nothing between moves."""

    def logits(self, observation: Mapping[str, Any]) -> np.ndarray:
        """One logit per action: Linear, ReLU, ..., Linear."""
        h = np.asarray(observation["observation"], dtype=np.float32)
        width = self.layers[0][0].shape[1]
        if h.shape[-1] != width:
            raise ValueError(f"the network reads {{width}} observation entries, got {{h.shape[-1]}}")
        for i, (weight, bias) in enumerate(self.layers):
            h = h @ weight.T + bias
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h

    def act(self, observation: Mapping[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"], dtype=bool)
        return int(np.argmax(np.where(mask, self.logits(observation), -np.inf)))

    def explain(self, observation: Mapping[str, Any]) -> str:
        """One line for the terminal's --hint."""
        return f"action {{self.act(observation)}}: the network's highest legal logit"
'''


def starter_weights(hidden: int = HIDDEN, seed: int = 0) -> bytes:
    """A ``weights.npz`` of a random network (observation -> ``hidden`` -> one logit per action),
    as bytes: the starter plays legal moves until its weights are trained."""
    rng = np.random.default_rng(seed)
    sizes = [(hidden, OBS_SIZE), (NUM_ACTIONS, hidden)]
    arrays: dict[str, np.ndarray] = {}
    for i, (out, inp) in enumerate(sizes):
        arrays[f"{2 * i}.weight"] = (rng.standard_normal((out, inp)) / np.sqrt(inp)).astype(
            np.float32
        )
        arrays[f"{2 * i}.bias"] = np.zeros(out, dtype=np.float32)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()
