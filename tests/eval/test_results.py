"""racko_eval.results: the results files pages render, and the README's headline block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from racko_eval import results
from racko_eval.results import ResultsError

TABLE = {"title": "Speed", "columns": ["env", "steps/s"], "rows": [["racko", 12345.6]]}


def _write(folder: Path, name: str = "demo", **kw) -> Path:
    kw.setdefault("command", "python -m benchmarks.demo")
    kw.setdefault("tables", [TABLE])
    return results.write_results(name, folder=folder, **kw)


def test_a_written_file_records_where_its_figures_come_from(tmp_path: Path) -> None:
    path = _write(tmp_path, figures={"steps": 12345.6})
    assert path == tmp_path / "demo.json"
    data = results.load_results("demo", tmp_path)
    assert data["command"] == "python -m benchmarks.demo"
    assert data["commit"]  # HEAD here, the package version outside a checkout
    assert data["machine"]["cores"] >= 1 and "load_average" in data["machine"]
    assert data["date"].endswith("+00:00")
    assert data["figures"] == {"steps": 12345.6} and data["tables"] == [TABLE]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp_")]


def test_a_recorded_measurement_keeps_its_commit_date_and_machine(tmp_path: Path) -> None:
    machine = {"cores": 2, "load_average": [3.0, 2.0, 1.0], "cpu": "x"}
    _write(tmp_path, commit="abc", date="2026-01-02T03:04:05+00:00", machine=machine)
    data = results.load_results("demo", tmp_path)
    assert (data["commit"], data["date"], data["machine"]) == (
        "abc",
        "2026-01-02T03:04:05+00:00",
        machine,
    )


@pytest.mark.parametrize(
    ("tables", "figures", "message"),
    [
        ([{"title": "t", "columns": ["a", "b"], "rows": [[1]]}], None, "row 0 has not 2 cells"),
        ([{"columns": ["a"], "rows": []}], None, "needs a 'title'"),
        ([{"title": "t", "columns": ["a"], "rows": [[[1, 2]]]}], None, "list is not a number"),
        ([TABLE], {"nested": {"a": 1}}, "figure 'nested'"),
    ],
)
def test_bad_data_is_refused_before_anything_is_written(
    tmp_path: Path, tables: list, figures: dict | None, message: str
) -> None:
    with pytest.raises(ResultsError, match=message):
        _write(tmp_path, tables=tables, figures=figures)
    assert not list(tmp_path.iterdir())


def test_bad_names_and_missing_files_get_one_line(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="lowercase"):
        _write(tmp_path, name="../x")
    with pytest.raises(ResultsError, match="no results file"):
        results.load_results("absent", tmp_path)
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ResultsError, match="not JSON"):
        results.load_results("broken", tmp_path)


def test_rendering_a_table() -> None:
    table = {
        "title": "t",
        "columns": ["bot", "rounds", "win rate"],
        "rows": [["a|b", 2000, "51.2%"]],
    }
    assert results.markdown_table(table).splitlines() == [
        "| bot | rounds | win rate |",
        "|---|---:|---|",
        "| a\\|b | 2,000 | 51.2% |",
    ]
    assert [results.format_cell(x) for x in (0.12345, 1234.5, None)] == ["0.123", "1,234", "-"]


def test_a_caption_names_command_commit_date_and_machine() -> None:
    data = {
        "command": "python -m benchmarks.env_speed",
        "commit": "0123456789abcdef0123456789abcdef01234567",
        "date": "2026-12-02T18:30:00+00:00",
        "machine": {"cores": 2, "load_average": [1.5, 1.0, 0.5], "cpu": "CPU X"},
    }
    assert results.caption(data) == (
        "Measured by `python -m benchmarks.env_speed` at commit 0123456789 on 2026-12-02, "
        "2 cores (CPU X), load average 1.50."
    )


def _headline_files(folder: Path) -> None:
    machine = {"cores": 2, "load_average": [3.14, 2.0, 1.0]}
    _write(folder, "time_to_expert", figures={"minutes": 3.5, "env_steps": 294912}, machine=machine)
    _write(
        folder,
        "shipped_bots",
        figures={"racko_2p_vs_heuristic": 0.851, "racko_2p_vs_expert": 0.491},
    )
    _write(
        folder,
        "env_speed",
        figures={"racko_v1_steps_per_s": 50000.0, "ratio_to_connect_four": 12.0},
    )


def test_the_readme_block_is_regenerated_and_checked(tmp_path: Path) -> None:
    _headline_files(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text("# racko\n\n<!-- results: headline -->\nold\n<!-- /results -->\n\nmore\n")
    assert results.update_readme(readme, tmp_path, check=True)
    assert "old" in readme.read_text()  # check mode writes nothing
    assert results.update_readme(readme, tmp_path)
    text = readme.read_text()
    assert "85.1%" in text and "49.1%" in text and "50,000 steps/s" in text and "12.0x" in text
    assert "(docs/results/training.md)" in text and text.endswith("\n\nmore\n")
    assert "3.5 minutes (294,912 env steps) on 2 cores at load average 3.1 " in text
    assert not results.update_readme(readme, tmp_path, check=True)


def test_a_missing_headline_figure_is_named(tmp_path: Path) -> None:
    _headline_files(tmp_path)
    _write(tmp_path, "env_speed", figures={"racko_v1_steps_per_s": 1.0})
    with pytest.raises(ResultsError, match="env_speed: no number for ratio_to_connect_four"):
        results.headline_lines(tmp_path)


def test_a_readme_without_the_block_is_refused(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# racko\n")
    with pytest.raises(ResultsError, match="no block"):
        results.update_readme(readme, tmp_path)


def test_the_shipped_results_files_are_well_formed() -> None:
    for path in sorted(results.RESULTS_DIR.glob("*.json")):
        results.check_results(json.loads(path.read_text()), str(path))


def test_a_gathering_file_keeps_one_row_per_command(tmp_path: Path) -> None:
    columns = ["bots", "seconds", "command"]
    for command, row in (("cmd a", [40, 12.5]), ("cmd b", [200, 60.0]), ("cmd a", [40, 11.0])):
        results.record_row(
            "scale",
            command=command,
            title="T",
            columns=columns,
            rows=[[*row, command]],
            folder=tmp_path,
        )
    data = results.load_results("scale", tmp_path)
    assert data["tables"][0]["rows"] == [[200, 60.0, "cmd b"], [40, 11.0, "cmd a"]]
    assert data["command"] == "cmd a"
    with pytest.raises(ResultsError, match="ends with its command"):
        results.record_row(
            "scale", command="c", title="T", columns=["x"], rows=[[1]], folder=tmp_path
        )
