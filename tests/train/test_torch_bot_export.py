"""``train.common.onnx_export.export_torch_bot``: any torch policy becomes a bot file that plays."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import agents  # noqa: E402
from racko_apps.referee.match import sandbox_for  # noqa: E402
from racko_env.actions import NUM_ACTIONS  # noqa: E402
from racko_env.observation import OBS_SIZE  # noqa: E402
from train.common.onnx_export import export_torch_bot, sample_observations  # noqa: E402


class StudentNet(torch.nn.Module):
    """A policy of the student's own making: not a plain MLP (a skip connection and a norm)."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = torch.nn.Linear(OBS_SIZE, 32)
        self.norm = torch.nn.LayerNorm(32)
        self.out = torch.nn.Linear(32, NUM_ACTIONS)

    def forward(self, obs):
        h = torch.relu(self.inp(obs))
        return self.out(self.norm(h) + h) * 5.0


def test_a_torch_module_exports_to_a_bot_file_that_plays(tmp_path):
    torch.manual_seed(0)
    net = StudentNet().eval()
    onnx_path, manifest = export_torch_bot(net, tmp_path / "student_net.onnx", 2, check=200)
    assert onnx_path.name == "student_net.onnx" and manifest.name == "student_net.json"
    bot = agents.load(str(onnx_path), num_players=2)
    obs, masks = sample_observations(2, {}, 50, seed=4)
    with torch.no_grad():
        logits = net(torch.as_tensor(obs)).numpy()
    expected = np.argmax(np.where(masks.astype(bool), logits, -np.inf), axis=1)
    played = [
        bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)
    ]
    assert played == expected.tolist()
    # and from the sandbox, as a student's submission
    sandbox = sandbox_for("student_net.onnx", 2, {}, folder=tmp_path)
    with sandbox:
        assert sandbox.act({"observation": obs[0], "action_mask": masks[0]}) == expected[0]


def test_a_bot_file_name_must_end_in_onnx(tmp_path):
    with pytest.raises(ValueError, match="ends in .onnx"):
        export_torch_bot(StudentNet(), tmp_path / "student_net.pt")
