"""The throughput benchmark: its batches are what it says they are, and on a tiny batch it grades with this engine
and with stock nbgrader (hidden checks run in the kernel, as stock nbgrader runs hidden tests) to the same scores.
Its otter-grader side has a test per graded cell of every lab, worth the cell's points, and, where otter is
installed, otter grades a few samples with those tests to this engine's scores.

The benchmark itself is run by hand (benchmarks/autograde_throughput.py, figures in docs/performance.md); this keeps
it from rotting as the labs change.
"""

from __future__ import annotations

import ast
import gc
import importlib.util
import json
import logging
import os
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from grader.labs import LAB_MODULES
from grader.notebook import answer_code, read_notebook
from grader.pipeline import DEFAULT_COURSE, SAMPLE_SUBMISSIONS

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


def test_a_local_cohort_counts_the_cpu_of_the_checks_process_and_what_it_forked(bench, tmp_path, monkeypatch) -> None:
    """The checks and their learner hosts run in the checks' process, which the batch finishes and leaves to exit:
    the figure waits for that exit, so their CPU counts, not only the grading process's own (mostly the recording)."""
    from grader.engine import checks_process

    monkeypatch.setattr(checks_process, "_shared", None)
    monkeypatch.setattr(bench, "REFERENCE_EVERY", 1)
    figures = bench.run_cohort(tmp_path, 8, jobs=2, scheduler=None)

    assert figures["graded"] == figures["size"] == 8
    record = figures["phases"]["record"]
    recording = min(record["first"], record["last"])
    # the checks and hosts cost several times the recording beside them (the grading process alone: about twice)
    assert figures["cpu"] / figures["size"] > 4 * recording
    # the recording's CPU run by run, each as many submissions as the first and last: here the first 4 and the last 4
    assert record["edge"] == 4 and record["each"] == [record["first"], record["last"]]
    # the reference workload ran beside the recording, every REFERENCE_EVERY (here 1) submissions
    reference = record["reference"]
    assert 0 < reference["first"] < recording and 0 < reference["last"] < recording
    assert reference["ratio"] == pytest.approx(record["ratio"] / (reference["last"] / reference["first"]))
    assert 20 < figures["rss_worker_mb"] < 1024  # the checks' process, asked of the kernel once it ended


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "\nState:\tZ" not in status


def test_a_dask_cohort_runs_on_a_cluster_of_its_own_process_and_counts_the_cluster_cpu(bench, tmp_path) -> None:
    """``--scheduler local``: the LocalCluster runs apart from the grading process, as a deployment's scheduler
    does (in this process its event loop would run beside the recording); the scheduler's and the workers' CPU count
    in the cohort's; the cluster and its workers end with the block."""
    distributed = pytest.importorskip("dask.distributed", reason="the optional Dask extra is not installed")

    with bench.local_cluster() as address:
        with distributed.Client(address, timeout=30) as client:
            scheduler = client.run_on_scheduler(os.getpid)
            workers = list(client.run(os.getpid).values())
            cluster_so_far = client.run_on_scheduler(bench.cpu_seconds) + sum(client.run(bench.cpu_seconds).values())
        counted_so_far = bench.dask_cluster_cpu(address)
        figures = bench.run_cohort(tmp_path, 8, None, address)

    assert scheduler != os.getpid() and len(workers) == 2
    # the scheduler's CPU, about a second of starting the cluster, counts beside the workers'
    assert counted_so_far >= cluster_so_far
    assert figures["graded"] == figures["size"] == 8
    assert figures["cpu"] / figures["size"] > 4 * min(
        figures["phases"]["record"]["first"], figures["phases"]["record"]["last"]
    )
    assert 20 < figures["rss_worker_mb"] < 1024  # asked of each worker
    assert not any(alive(pid) for pid in [scheduler, *workers])


def test_the_recording_against_the_reference_takes_the_machines_drift_out_and_leaves_its_own_growth(bench) -> None:
    slowing = [1.0 + 0.2 * i / 99 for i in range(100)]  # the machine slows by a fifth over the run
    every_fifth = [(i, 0.1 * slowing[i - 1]) for i in range(5, 101, 5)]
    # the recording slows as the machine does, and no more: no growth of its own
    drift = bench.against_reference([0.03 * x for x in slowing], every_fifth, 20)
    assert drift["ratio"] == pytest.approx(1.0, abs=0.01) and abs(drift["growth"]) < 0.01
    assert drift["last"] / drift["first"] > 1.15  # the reference's own: the drift
    assert len(drift["each"]) == 5
    # the machine steady, the recording growing by a tenth: all of it is the recording's
    steady = [(i, 0.1) for i in range(5, 101, 5)]
    grows = bench.against_reference([0.03 * (1 + 0.1 * i / 99) for i in range(100)], steady, 20)
    assert grows["ratio"] == pytest.approx(1 + 0.1 * (89.5 - 9.5) / 99 / (1 + 0.1 * 9.5 / 99), rel=1e-6)
    assert grows["growth"] == pytest.approx(0.1 * 80 / 99 / (1 + 0.1 * 9.5 / 99), rel=0.05)
    # and a recording that grows while the machine slows: the drift comes out, the growth stays
    both = bench.against_reference([0.03 * x * (1 + 0.1 * i / 99) for i, x in enumerate(slowing)], every_fifth, 20)
    assert both["growth"] == pytest.approx(grows["growth"], rel=0.05)


def test_the_gradebooks_size_alone_is_the_same_submissions_recorded_into_an_empty_and_a_fuller_gradebook_in_turns(
    bench, tmp_path, monkeypatch
) -> None:
    figures = bench.gradebook_growth(tmp_path, 8, edge=4, turn=2, name="steady")

    # the last 4 of a cohort of 8, recorded into a gradebook of their own and into the cohort's, which then holds all 8
    assert figures["held"] == {"empty": 4, "full": 8}
    assert len(figures["turns"]) == 2 and all(t > 0 for t in figures["turns"])
    assert 0 < figures["empty"] < 1 and figures["ratio"] == pytest.approx(figures["full"] / figures["empty"])

    # A recording that costs more the fuller its gradebook is shows it, in every turn.
    from grader.course import BatchAutograde

    original = BatchAutograde.record

    def slower_when_full(self, *args, **kwargs):
        if Path(self.coursedir.root).name == "growing-full":
            start = time.thread_time()
            while time.thread_time() - start < 0.05:
                pass
        return original(self, *args, **kwargs)

    monkeypatch.setattr(BatchAutograde, "record", slower_when_full)
    slower = bench.gradebook_growth(tmp_path, 8, edge=4, turn=2, name="growing")
    assert slower["ratio"] > 1.5 and min(slower["turns"]) > 1.5
    assert slower["held"] == {"empty": 4, "full": 8}


def test_the_reference_workload_gives_its_own_cpu_time_each_run(bench) -> None:
    sample = (bench.SAMPLE_SUBMISSIONS / "solution" / bench.LABS[0] / f"{bench.LABS[0]}.ipynb").read_text()
    times = [bench.reference_workload(sample) for _ in range(5)]
    assert all(0 < t < 1 for t in times)


def test_growth_follows_the_line_through_every_value_not_the_two_ends(bench) -> None:
    assert bench.growth([1.0] * 50) == pytest.approx(0.0)
    assert bench.growth([1.0 + 0.1 * i / 99 for i in range(100)]) == pytest.approx(0.1)
    # a slow stretch in the middle is not growth; a step up at the end is
    assert bench.growth([1.0] * 40 + [1.5] * 20 + [1.0] * 40) == pytest.approx(0.0, abs=1e-9)
    assert bench.growth([1.0] * 80 + [1.2] * 20) > 0.1


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


def otter_test(text: str) -> dict:
    """What an otter test file of the benchmark declares: its globals, the hidden flag of its one case, and the code
    the case runs (read from the file's syntax, so that otter is not needed)."""
    module = ast.parse(text)
    found = {
        target.id: ast.literal_eval(node.value)
        for node in module.body
        if isinstance(node, ast.Assign)
        for target in node.targets
    }
    (case,) = [node for node in module.body if isinstance(node, ast.FunctionDef)]
    (decorator,) = case.decorator_list
    found["hidden"] = {k.arg: ast.literal_eval(k.value) for k in decorator.keywords}["hidden"]
    (call,) = [n for n in ast.walk(case) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "exec"]
    found["code"] = ast.literal_eval(call.args[0])
    return found


def test_every_graded_cell_of_every_lab_gets_an_otter_test_worth_its_points(bench, tmp_path) -> None:
    course = bench.Course(bench.released_course(tmp_path))

    zips = bench.otter_autograders(bench.graded_checks(course), tmp_path / "autograder")

    assert set(zips) == set(LAB_MODULES)
    expected = json.loads((SAMPLE_SUBMISSIONS / "expected.json").read_text())
    for lab in LAB_MODULES:
        source = nbformat.read(str(DEFAULT_COURSE / "source" / lab / f"{lab}.ipynb"), as_version=4)
        graded = {c.metadata.nbgrader.grade_id: c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade")}
        with zipfile.ZipFile(zips[lab]) as archive:
            tests = {name: otter_test(archive.read(name).decode()) for name in archive.namelist()}
        assert sorted(tests) == sorted(f"tests/{name}.py" for name in graded), lab
        for name, cell in graded.items():
            test = tests[f"tests/{name}.py"]
            assert test["OK_FORMAT"] is False and test["name"] == name
            assert test["points"] == cell.metadata.nbgrader.points, name
            # A visible check's cell runs as released; a hidden one's check is the grader's, as stock's side runs it.
            assert test["hidden"] == ("lab.hidden(" in cell.source), name
            assert test["code"] == (bench.HIDDEN_TEST.format(name=name) if test["hidden"] else cell.source), name
        if lab in expected:
            assert sum(t["points"] for t in tests.values()) == expected[lab]["max_score"], lab


def test_a_submission_goes_to_otter_with_each_graded_cell_an_otter_check_and_its_answers_as_they_are(
    bench, tmp_path
) -> None:
    lab = "lab3_tools_resources"
    original = SAMPLE_SUBMISSIONS / "solution" / lab / f"{lab}.ipynb"
    graded = {"catalog_is_a_resource", "catalog_at_unseen_sizes"}

    bench.otter_notebook(original, tmp_path / f"{lab}.ipynb", graded)

    before = nbformat.read(str(original), as_version=4)
    after = nbformat.read(str(tmp_path / f"{lab}.ipynb"), as_version=4)
    assert len(after.cells) == len(before.cells)
    for old, new in zip(before.cells, after.cells, strict=True):
        name = old.metadata.get("nbgrader", {}).get("grade_id")
        if name in graded:
            assert new.source == "" and new.metadata["otter"] == {"tests": [name]}
        else:
            assert new.source == old.source and "otter" not in new.metadata


def test_otter_with_the_generated_tests_gives_this_engines_scores(bench, tmp_path) -> None:
    python = bench.otter_python()
    if python is None:
        pytest.skip(
            "otter-grader is installed neither here nor in .venv/otter (.ci/run makes that venv: "
            "pip install -e '.[otter]'), so the benchmark's otter side cannot run"
        )
    # Lab 3's solution, a sample that fails visible and hidden checks, and one that fails hidden checks only (otter
    # without the hidden tests would give it full marks); and lab 2's solution, whose checks start the servers its
    # configuration names in the sandbox, from the kernel's interpreter (which the sandbox must let them reach).
    pairs_of = [
        ("solution", "lab3_tools_resources"),
        ("catalog_with_the_steps", "lab3_tools_resources"),
        ("catalog_capped_at_twenty", "lab3_tools_resources"),
        ("solution", "lab2_scopes_expansion"),
    ]
    bench.released_course(tmp_path, sorted({lab for _, lab in pairs_of}))
    folder = tmp_path / "otter-submissions"
    pairs = bench.copy_samples(folder, pairs_of)
    engine, engine_pairs = bench.fresh_course(tmp_path, "otter-engine", folder)
    bench.in_a_fresh_process("engine", engine, engine_pairs, jobs=1)

    figures = bench.otter_side(tmp_path, "otter", folder, pairs, engine, python=python)

    assert not figures["failed"]
    assert figures["both"] == figures["agree"] == len(pairs_of), figures["differ"]
    expected = json.loads((SAMPLE_SUBMISSIONS / "expected.json").read_text())
    assert bench.scores(engine) == {(s, lab): expected[lab]["samples"][s]["score"] for s, lab in pairs_of}


def test_the_checks_without_the_engine_are_the_engines_checks_with_the_same_verdicts(bench, monkeypatch) -> None:
    """The split's baseline (the same checks, the learner's server in the benchmark's process) runs every check of
    the lab, hidden ones included, to the verdicts the engine gives, so the engine's CPU is compared with the same work."""
    from grader.engine.grading import grade_code

    pairs = [
        ("solution", "lab2_scopes_expansion"),
        ("blank", "lab1_error_results"),
        ("missing_template", "lab3_tools_resources"),
    ]
    root = logging.getLogger()
    before = root.handlers[:], root.level
    gc.unfreeze()  # nothing set aside by an earlier test in this process (a grading thread's warm-up sets aside)
    measure, set_aside = bench.cpu_seconds, []

    def cpu_seconds() -> float:
        set_aside.append(gc.get_freeze_count())
        return measure()

    monkeypatch.setattr(bench, "cpu_seconds", cpu_seconds)
    cpu, verdicts = bench.checks_without_the_engine(pairs)

    assert (root.handlers, root.level) == before  # logging as it was: the split's next round prints nothing more
    # What the process held is set aside from the cycle collector while the clock runs, and given back after.
    assert len(set_aside) == 2 and all(set_aside) and gc.get_freeze_count() == 0

    assert cpu > 0
    for (student, lab), passed in zip(pairs, verdicts, strict=True):
        code = answer_code(read_notebook(SAMPLE_SUBMISSIONS / student / lab / f"{lab}.ipynb"))
        assert passed == [result.passed for result in grade_code(lab, code)], (student, lab)
    assert any(verdicts[0]) and not all(verdicts[1])  # a solution passes checks, a blank fails some


def test_the_cpu_split_in_rounds_reports_each_figures_median_and_each_rounds_own_ratio(bench, monkeypatch) -> None:
    rounds = iter(
        [
            {"engine in all": 0.18, "checks": 0.05, "the checks without the engine": 0.12},
            {"engine in all": 0.15, "checks": 0.04, "the checks without the engine": 0.10},
            {"engine in all": 0.17, "checks": 0.06, "the checks without the engine": 0.11},
        ]
    )
    names = []

    def one_round(work, pairs, name):
        names.append(name)
        return next(rounds)

    monkeypatch.setattr(bench, "cpu_split", one_round)
    split = bench.cpu_split_rounds(Path("unused"), [], rounds=3)

    assert names == ["split1", "split2", "split3"]  # each round grades a course of its own
    assert split["engine in all"] == 0.17 and split["checks"] == 0.05 and split["the checks without the engine"] == 0.11
    assert split["ratios"] == pytest.approx([1.5, 1.5, 0.17 / 0.11])  # each round's own ratio, not one of medians


def test_one_round_of_the_cpu_split_measures_every_part_on_a_real_batch(bench, tmp_path) -> None:
    split = bench.cpu_split(tmp_path, [("solution", "lab1_error_results"), ("blank", "lab4_server_integration")])

    for part in ("checks", "learner host", "nbgrader recording", "the checks without the engine"):
        assert split[part] > 0, part
    parts = ("checks", "learner host", "nbgrader sanitising", "nbgrader recording", "rest")
    assert split["engine in all"] == pytest.approx(sum(split[part] for part in parts))


def test_comparing_two_revisions_recording_alone_shows_a_slower_recording_with_the_same_scores(tmp_path) -> None:
    """``compare_revisions.py --recording``: each tree in processes of its own records the batch again from the
    check results it stored, and the recording's CPU per submission is compared. A tree whose recording burns 50 ms
    more a submission shows it; the scores are the same."""
    import shutil

    spec = importlib.util.spec_from_file_location("compare_revisions", SCRIPT.with_name("compare_revisions.py"))
    compare_revisions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare_revisions)
    repo = SCRIPT.parents[1]
    slowed = tmp_path / "slowed"
    shutil.copytree(
        repo, slowed, ignore=shutil.ignore_patterns(".venv", ".git", "build", "node_modules", "__pycache__", ".*cache")
    )
    course = slowed / "grader" / "course.py"
    record = "    def record(self, assignment_id: str, student_id: str) -> dict:\n"
    assert record in course.read_text()
    burn = "        start = time.thread_time()\n        while time.thread_time() - start < 0.05:\n            pass\n"
    course.write_text(course.read_text().replace(record, record + "        import time\n\n" + burn))
    said: list[str] = []
    with pytest.raises(SystemExit, match="--samples of at least 2"):  # a batch of one has no recording to count
        compare_revisions.compare(repo, slowed, rounds=1, jobs=1, recording=True, samples=1, say=said.append)

    report = compare_revisions.compare(repo, slowed, rounds=1, jobs=1, recording=True, samples=3, say=said.append)

    assert report["count"] == 3 and report["differ"] == []
    assert report["recording"]["ratio"] > 1.5, said
    assert 0.005 < report["recording"]["old"] < 0.05 < report["recording"]["new"]  # seconds per submission
    assert any(line.startswith("recording CPU a submission median") for line in said)
