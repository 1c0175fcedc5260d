"""Folder submissions: a package with its weights plays from the sandbox, read-only, within a cap."""

from __future__ import annotations

import numpy as np
import pytest

from racko_apps.new_bot.starter import main as new_bot_main
from racko_apps.new_bot.starter import write_bot
from racko_apps.sandbox.bot import SandboxedBot
from racko_apps.sandbox.submission import MAX_SUBMISSION_MB, oversize
from racko_apps.sandbox.wire import BotFailureError
from racko_env import racko_v1

# Tries to change its own files and to leave a file beside them; plays only where it cannot.
WRITER = """
from pathlib import Path

from agents.obs import legal_actions


class Bot:
    def __init__(self, num_players=2, seed=None):
        here = Path(__file__).parent
        done = []
        for target in (here / "weights.npz", here / "planted.py", here.parent / "planted.py"):
            try:
                target.write_bytes(b"x")
                done.append(target.name)
            except OSError:
                pass
        if done:
            raise RuntimeError(f"wrote {done}")

    def act(self, obs):
        return legal_actions(obs)[0]
"""


def observations(count: int = 30) -> list[dict]:
    env = racko_v1.raw_env(num_players=2)
    env.reset(seed=3)
    out = []
    rng = np.random.default_rng(0)
    while len(out) < count:
        if any(env.terminations.values()):
            env.reset(seed=len(out))
        obs = env.observe(env.agent_selection)
        out.append({k: np.array(v) for k, v in obs.items()})
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


def numpy_policy(weights: str, obs: dict) -> int:
    """The starter's network, computed here from its weights file."""
    with np.load(weights, allow_pickle=False) as data:
        h = obs["observation"].astype(np.float32)
        h = np.maximum(h @ data["0.weight"].T + data["0.bias"], 0) @ data["2.weight"].T
        logits = h + data["2.bias"]
    return int(np.argmax(np.where(obs["action_mask"].astype(bool), logits, -np.inf)))


def test_a_folder_with_npz_weights_plays_from_the_sandbox(tmp_path, can_isolate):
    bot_file, _ = write_bot("net_bot", tmp_path, "weights")
    weights = str(bot_file.parent / "weights.npz")
    (tmp_path / "neighbour.py").write_text("SECRET = 1\n")
    for isolate in [False, True] if can_isolate else [False]:
        with SandboxedBot("net_bot:Bot", tmp_path, isolate=isolate) as bot:
            for obs in observations():
                action = bot.act(obs)
                assert obs["action_mask"][action] and action == numpy_policy(weights, obs)


def test_a_submission_is_read_only_in_its_sandbox(tmp_path, isolation):
    package = tmp_path / "writer"
    package.mkdir()
    (package / "__init__.py").write_text(WRITER)
    np.savez(package / "weights.npz", w=np.zeros(3))
    obs = observations(1)[0]
    with SandboxedBot("writer:Bot", tmp_path, isolate=True) as bot:
        assert obs["action_mask"][bot.act(obs)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["writer"]


def test_a_submission_over_the_cap_does_not_start(tmp_path):
    bot_file, _ = write_bot("big_bot", tmp_path, "weights")
    with open(bot_file.parent / "extra.npy", "wb") as f:
        f.truncate((MAX_SUBMISSION_MB + 1) * 1024 * 1024)  # sparse: no disk used
    with pytest.raises(BotFailureError, match=r"over the cap of 50 MB$") as refused:
        SandboxedBot("big_bot:Bot", tmp_path).start()
    assert refused.value.kind == "start" and "\n" not in str(refused.value)
    assert oversize([bot_file.parent], cap_mb=1000) is None


def test_the_starter_loads_data_only(tmp_path, monkeypatch):
    bot_file, _ = write_bot("pickled_bot", tmp_path, "weights")
    np.savez(bot_file.parent / "weights.npz", **{"0.weight": np.array([object()], dtype=object)})
    monkeypatch.syspath_prepend(str(tmp_path))
    from pickled_bot import Bot

    with pytest.raises(ValueError, match="allow_pickle=False"):
        Bot()


def test_new_bot_weights_writes_a_package(tmp_path, capsys):
    assert new_bot_main(["my_net", "--weights", "--dir", str(tmp_path)]) == 0
    assert (tmp_path / "my_net" / "__init__.py").is_file()
    assert (tmp_path / "my_net" / "weights.npz").is_file()
    assert (tmp_path / "test_my_net.py").is_file()
    assert "racko grade my_net:Bot" in capsys.readouterr().out
    assert new_bot_main(["my_net", "--weights", "--dir", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert new_bot_main(["other", "--weights", "--function", "--dir", str(tmp_path)]) == 2
    assert "do not go together" in capsys.readouterr().err
