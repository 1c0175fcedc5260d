"""The RLlib trainer's config schema (train/rllib/config.py): the shipped configs, one line per bad
key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from train.common.config import ConfigError, load_config
from train.rllib.config import RLlibConfig

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["smoke_rllib", "smoke_rllib_multiagent", "2p_rllib"])
def test_shipped_configs_validate(name: str) -> None:
    cfg = load_config(REPO / "configs" / f"{name}.yaml", RLlibConfig)
    assert cfg.num_players == 2
    assert cfg.env == ("multi_agent" if name.endswith("multiagent") else "vector")


def test_learner_module_ids_are_rllibs() -> None:
    from ray.rllib.core import DEFAULT_MODULE_ID

    from train.rllib.env import MAIN

    cfg = load_config(REPO / "configs" / "smoke_rllib.yaml", RLlibConfig)
    assert cfg.learner_module == DEFAULT_MODULE_ID
    assert cfg.model_copy(update={"env": "multi_agent"}).learner_module == MAIN


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"bogus": 1}, "bogus: unknown key"),
        ({"ppo": {"lr": -1}}, "ppo.lr:"),
        ({"ppo": {"minibatch_size": 512, "train_batch_size": 256}}, "minibatch_size"),
        ({"resources": {"env_runners": -1}}, "resources.env_runners:"),
        ({"resources": {"env_runner_resources": {"x": 0}}}, "env_runner_resources"),
        ({"opponents": {"grandmaster": 1.0}}, "grandmaster"),
        ({"opponents": {"self": 0.0}}, "positive sum"),
        ({"model": {"encoder": "mlp"}}, "model.encoder:"),
        ({"eval": {"opponents": ["self"]}}, "eval"),
        ({"rules": {"empty_pile": "burn"}}, "rules.empty_pile:"),
        ({"seed": -1}, "seed:"),  # seeds in range, as in every trainer's config
        ({"iterations": "3"}, "iterations:"),  # strict: no coercion of '3' to 3
        ({"eval": {"seed": 2**40}}, "eval.seed:"),
        ({"final_eval": {"opponents": ["nobody"]}}, "final_eval.opponents:"),
        ({"kind": "ppo"}, "kind:"),
        ({"env": "subproc"}, "env:"),
        ({"opponents": {"self": 0.5, "heuristic": 0.5}}, "needs env: multi_agent"),
        ({"opponents": {"league": 1.0}}, "needs a bot"),
        ({"league": {"latest_weight": 2}}, "league.latest_weight:"),
        ({"ppo": {"use_kl_loss": "no"}}, "ppo.use_kl_loss:"),
    ],
)
def test_bad_configs_name_the_key(tmp_path: Path, data: dict, key: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_config(path, RLlibConfig)
    assert key in str(err.value)
    assert "bad.yaml" in str(err.value)
