"""Gradescope's ``results.json``, as pydantic models: what ``autograder`` writes.

The models follow Gradescope's autograder specification ("Output format",
https://gradescope-autograders.readthedocs.io/en/latest/specs/, and "Leaderboards", .../leaderboards/)
field by field, and refuse anything else (``extra="forbid"``): a misspelt key would otherwise be
dropped by Gradescope without a word, and a student would see a grade without its explanation.
Every results.json racko writes is built through ``Results`` (so an invalid one is never
written), and the tests check the files ``run_autograder`` writes against it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# When a test (or the whole result, or the autograder's stdout) is shown to students.
Visibility = Literal["hidden", "after_due_date", "after_published", "visible"]
# How Gradescope renders a text field ("Output String Formatting").
TextFormat = Literal["text", "simple_format", "html", "md", "ansi"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Case(_Strict):
    """One test case ("tests" in the file): here, one criterion of the rubric with its points."""

    score: float | None = None  # required unless the results have a top-level score
    max_score: float | None = Field(default=None, ge=0)
    status: Literal["passed", "failed"] | None = None  # default: passed when score == max_score
    name: str | None = None
    name_format: TextFormat | None = None
    number: str | None = None  # ordering on Gradescope; default: order of the list
    output: str | None = None  # placed in a <pre> tag, collapsed by default
    output_format: TextFormat | None = None
    tags: list[str] | None = None
    visibility: Visibility | None = None  # default "visible"
    extra_data: dict[str, Any] | None = None


class LeaderboardEntry(_Strict):
    """One column of the assignment's leaderboard; ``order`` "desc" (default): higher ranks higher."""

    name: str = Field(min_length=1)
    value: float | str
    order: Literal["asc", "desc"] | None = None


class Results(_Strict):
    """The whole ``results.json``. ``score`` overrides the sum of the tests' scores."""

    score: float | None = None
    execution_time: int | None = Field(default=None, ge=0)  # whole seconds
    output: str | None = None
    output_format: TextFormat | None = None  # default "simple_format"
    test_output_format: TextFormat | None = None  # default "text"
    test_name_format: TextFormat | None = None  # default "text"
    visibility: Visibility | None = None
    stdout_visibility: Visibility | None = None  # default: stdout is shown to instructors only
    extra_data: dict[str, Any] | None = None
    tests: list[Case] | None = None
    leaderboard: list[LeaderboardEntry] | None = None

    @model_validator(mode="after")
    def _scored(self) -> Results:
        """The score is required at the top unless every test has one (the specification)."""
        if self.score is None and not (self.tests and all(t.score is not None for t in self.tests)):
            raise ValueError("results need a top-level score unless every test has a score")
        return self
