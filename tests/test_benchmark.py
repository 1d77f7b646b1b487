"""The throughput benchmark: its batches are what it says they are, and on a tiny batch it grades with this engine
and with stock nbgrader (hidden checks run in the kernel, as stock nbgrader runs hidden tests) to the same scores.

The benchmark itself is run by hand (benchmarks/autograde_throughput.py, figures in docs/performance.md); this keeps
it from rotting as the labs change.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest

from grader.labs import LAB_MODULES
from grader.notebook import answer_code, read_notebook
from grader.pipeline import SAMPLE_SUBMISSIONS

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "autograde_throughput.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("autograde_throughput", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_batch_holds_every_ordinary_sample_of_every_lab_and_the_hostile_ones(bench, tmp_path) -> None:
    pairs = bench.build_batch(tmp_path, copies=1)

    assert {lab for _, lab in pairs} == set(LAB_MODULES)
    hostile = [(s, lab) for s, lab in pairs if s.startswith("hostile_")]
    assert len(hostile) == len(bench.HOSTILE) >= 10
    assert len(pairs) - len(hostile) == len(bench.samples())
    for student, lab in hostile:
        code = answer_code(read_notebook(tmp_path / student / lab / f"{lab}.ipynb"))
        solution = answer_code(read_notebook(SAMPLE_SUBMISSIONS / "solution" / lab / f"{lab}.ipynb"))
        assert code != solution, student
    for student, lab in pairs:
        nbformat.validate(nbformat.read(str(tmp_path / student / lab / f"{lab}.ipynb"), as_version=4))


def test_the_headline_batch_of_thirty_spreads_over_every_lab_with_each_solution_and_blank(bench) -> None:
    thirty = bench.ordinary(30)

    assert len(thirty) == len(set(thirty)) == 30
    assert not any(student.startswith("hostile_") for student, _ in thirty)
    assert {lab for _, lab in thirty} == set(LAB_MODULES)
    for lab in LAB_MODULES:
        assert ("solution", lab) in thirty and ("blank", lab) in thirty
    assert bench.ordinary(12) == thirty[:12]
    assert {lab for _, lab in thirty[:12]} == set(LAB_MODULES)


def test_a_cohort_repeats_the_samples_each_copy_a_distinct_student(bench, tmp_path) -> None:
    size = len(bench.samples()) + 3

    pairs = bench.cohort_pairs(tmp_path, size)

    assert len(pairs) == len(set(pairs)) == size
    assert (tmp_path / pairs[-1][0] / pairs[-1][1] / f"{pairs[-1][1]}.ipynb").is_file()
    # Sorted by folder name, as the course takes them, the samples still come in turn.
    assert sorted(pairs) == pairs
    assert [(student.split("_", 1)[1], lab) for student, lab in pairs[: len(bench.samples())]] == bench.ordinary(None)


def test_the_projection_is_bounded_by_the_recording_one_submission_at_a_time(bench) -> None:
    assert bench.projection(1.0, 0.01, 32, submissions=8000) == 8000 / 32
    assert bench.projection(1.0, 0.05, 128, submissions=8000) == 8000 * 0.05


def test_on_a_tiny_batch_the_engine_and_stock_nbgrader_give_the_same_scores(bench, tmp_path) -> None:
    lab = "lab3_tools_resources"
    bench.released_course(tmp_path, [lab])

    figures = bench.compare(tmp_path, "tiny", [("solution", lab), ("blank", lab)], jobs=1, stock_timeout=30)

    assert figures["count"] == figures["both"] == figures["agree"] == 2, figures["differ"]
    assert not figures["engine"]["failed"] and not figures["stock"]["failed"]
    assert figures["engine"]["seconds"] > 0 and figures["stock"]["seconds"] > 0
