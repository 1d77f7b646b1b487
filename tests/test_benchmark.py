"""The throughput benchmark's batch: big enough, every lab, and each hostile edit really applied.

The benchmark itself is run by hand (benchmarks/autograde_throughput.py, figures in
docs/performance.md); this keeps its batch from rotting as the labs change.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat

from grader.labs import LAB_MODULES
from grader.notebook import answer_code, read_notebook
from grader.pipeline import SAMPLE_SUBMISSIONS

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "autograde_throughput.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("autograde_throughput", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_batch_holds_at_least_forty_submissions_of_every_lab_with_hostile_ones(tmp_path) -> None:
    bench = load_benchmark()

    pairs = bench.build_batch(tmp_path, copies=1)

    assert len(pairs) >= 40
    assert {lab for _, lab in pairs} == set(LAB_MODULES)
    hostile = [(s, lab) for s, lab in pairs if s.startswith("hostile_")]
    assert len(hostile) == len(bench.HOSTILE) >= 10
    for student, lab in hostile:
        code = answer_code(read_notebook(tmp_path / student / lab / f"{lab}.ipynb"))
        solution = answer_code(read_notebook(SAMPLE_SUBMISSIONS / "solution" / lab / f"{lab}.ipynb"))
        assert code != solution, student
    for student, lab in pairs:
        nbformat.validate(nbformat.read(str(tmp_path / student / lab / f"{lab}.ipynb"), as_version=4))
