"""YAML from a course folder goes through one safe reader, and every CSV cell through one
neutraliser (racko_eval.course_files)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from racko_apps.grade.rubric import RubricError, load_rubric
from racko_apps.league.submissions import read_gradescope_export
from racko_eval.course_files import csv_cell, load_yaml

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("racko_env", "agents", "racko_eval", "train", "racko_apps", "benchmarks", "docs")
READER = "racko_eval/course_files.py"
# every way PyYAML reads a text: only the one reader may call them, or name a loader
READS = re.compile(r"yaml\.(?:(?:safe_|full_|unsafe_)?load(?:_all)?\s*\(|\w*Loader\b)|\bLoader\s*=")


def test_only_the_one_reader_reads_yaml():
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if READS.search(line) and relative != READER:
                    offenders.append(f"{relative}:{n}: {line.strip()}")
    assert offenders == []


def payload(tmp_path: Path) -> tuple[str, Path]:
    """A YAML value that runs a command where a loader builds Python objects."""
    planted = tmp_path / "pwned"
    return f'!!python/object/apply:os.system ["touch {planted}"]', planted


def test_a_python_object_tag_is_refused_by_every_reader(tmp_path):
    value, planted = payload(tmp_path)
    with pytest.raises(yaml.YAMLError, match="python/object/apply:os.system"):
        load_yaml(f"x: {value}\n")
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(f"players: {value}\n")
    with pytest.raises(RubricError, match=r"^rubric .*rubric\.yaml is not valid YAML \(line 1\)$"):
        load_rubric(rubric)
    (tmp_path / "submission_metadata.yml").write_text(f"submission_1: {value}\n")
    with pytest.raises(ValueError, match=r"submission_metadata\.yml: not YAML \(") as err:
        read_gradescope_export(tmp_path)
    assert "\n" not in str(err.value)
    from train.common.config import ConfigError, read_yaml

    config = tmp_path / "config.yaml"
    config.write_text(f"total_steps: {value}\n")
    with pytest.raises(ConfigError, match=r"config file .*config\.yaml is not valid YAML: "):
        read_yaml(config)
    assert not planted.exists()


def test_the_reader_keeps_or_refuses_a_repeated_key_as_asked():
    assert load_yaml("a: 1\na: 2\n") == {"a": 2}
    with pytest.raises(yaml.YAMLError, match=r"duplicate key 'a' \(line 2\)"):
        load_yaml("a: 1\na: 2\n", unique_keys=True)


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t"])
def test_a_cell_that_begins_like_a_formula_is_text(start):
    assert csv_cell(f"{start}SUM(A1)") == f"'{start}SUM(A1)"
    assert csv_cell(f"x{start}") == f"x{start}"


def test_a_carriage_return_is_neutralised_and_quoted_as_a_line_break(tmp_path):
    import csv

    from racko_eval.course_files import write_csv

    assert csv_cell("\r=SUM(A1)") == "'\n=SUM(A1)" and csv_cell("a\r\nb\rc") == "a\nb\nc"
    path = write_csv(tmp_path / "x.csv", ["name", "n"], [["\r=1+1", 1], ["ok\rsplit", 2]])
    with open(path, newline="") as f:
        assert list(csv.reader(f)) == [["name", "n"], ["'\n=1+1", "1"], ["ok\nsplit", "2"]]


def test_numbers_stay_numbers_and_none_is_empty():
    assert [csv_cell(v) for v in (-1.5, 3, None, True, "-3")] == ["-1.5", "3", "", "True", "'-3"]
