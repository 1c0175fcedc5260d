"""The run log (train/common/progress.py): timestamped lines with rate and ETA, on the
terminal and in train.log alike."""

from __future__ import annotations

import torch

PLAN = 3 * 10 + 2  # feature index of log1p(plan cost)
torch.set_num_threads(1)


def test_progress_lines_report_rate_and_eta_to_the_log_file(tmp_path):
    import io

    from train.common.progress import RunLog

    stream = io.StringIO()
    log = RunLog(tmp_path / "train.log", stream)
    with log.phase("collecting", 100, "states", every_s=0.0) as phase:
        phase.advance(40, "note")
        phase.advance(60)
    log.close()
    text = (tmp_path / "train.log").read_text()
    assert text == stream.getvalue()
    lines = text.splitlines()
    assert lines[0].endswith("collecting: started (100 states)")
    assert "collecting: 40/100 states (40%)" in lines[1] and "ETA" in lines[1]
    assert lines[1].endswith("; note")
    assert "collecting: done, 100 states in" in lines[2] and len(lines) == 3
