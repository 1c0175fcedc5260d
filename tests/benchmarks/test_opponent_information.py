"""benchmarks/opponent_information.py: what it records, its features by layout version, its AUC."""

from __future__ import annotations

import json

import numpy as np
import pytest

from racko_env.observation import (
    DISCARD_TOP,
    OBS_SIZE,
    OBS_SIZES,
    OPP_SLOT_DRAWN,
    OPP_SLOTS,
    PHASE,
)


@pytest.fixture(scope="module")
def info(benchmark_script):
    return benchmark_script("opponent_information")


def test_records_are_the_bots_view_of_its_own_discard(info) -> None:
    obs, labels, deal = info.collect(deals=3, seed=1)
    assert obs.shape == (len(labels), OBS_SIZE) and len(labels) > 20
    assert set(deal.tolist()) <= {0, 1, 2}
    assert not obs[:, PHASE].any()  # the bot's view after its turn: off turn
    assert (obs[:, DISCARD_TOP] > 0).all()  # its discard lies on top
    assert 0 < labels.mean() < 1
    again = info.collect(deals=3, seed=1)
    np.testing.assert_array_equal(again[0], obs)  # same seed, same games
    np.testing.assert_array_equal(again[1], labels)


def test_features_of_version_1_never_read_version_2_entries(info) -> None:
    obs = np.zeros((2, OBS_SIZE), dtype=np.float32)
    obs[:, DISCARD_TOP] = 17 / 40  # card 17 belongs in slot 4
    obs[1, OPP_SLOT_DRAWN.start + 4] = 1.0
    obs[1, OPP_SLOTS.start + 5] = 21 / 40
    v1, v2 = info.features(obs, 1, 40), info.features(obs, 2, 40)
    assert v1.shape[1] == OBS_SIZES[1] + 3 and v2.shape[1] == OBS_SIZES[2] + 12
    np.testing.assert_array_equal(v1[0, OBS_SIZES[1] :], [0, 0, 0])
    np.testing.assert_array_equal(v1[1, OBS_SIZES[1] :], [0, 0, np.float32(21 / 40)])  # slot 5
    assert v2[1, OBS_SIZES[2] + 3 + 1] == 1.0  # opp_slot_drawn at the discard's own slot
    obs[:, OBS_SIZES[1] :] = 0.5  # anything in the version-2 entries: version 1 sees none of it
    np.testing.assert_array_equal(info.features(obs, 1, 40)[0], v1[0])


def test_auc_and_log_loss(info) -> None:
    labels = np.array([0, 0, 1, 1])
    assert info.auc(np.array([0.1, 0.4, 0.35, 0.8]), labels) == pytest.approx(0.75)
    assert info.auc(np.full(4, 0.3), labels) == pytest.approx(0.5)  # ties count half
    assert info.log_loss(np.full(4, 0.5), labels) == pytest.approx(np.log(2))


def test_script_writes_the_table(info, tmp_path, capsys) -> None:
    out = tmp_path / "info.json"
    info.main(["--deals", "8", "--json", str(out)])
    result = json.loads(out.read_text())
    assert set(result["rows"]) == {"constant", "layout v1", "layout v2"}
    for row in result["rows"].values():
        assert np.isfinite(row["log_loss"]) and 0 <= row["auc"] <= 1
    assert "| layout v2 |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        info.main(["--deals", "2"])
