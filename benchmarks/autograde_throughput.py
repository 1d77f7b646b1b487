"""Benchmark: this grading engine against stock ``nbgrader autograde``, on ordinary submissions first.

    .venv/bin/python benchmarks/autograde_throughput.py                  # the headline, 12, the CPU split, hostile
    .venv/bin/python benchmarks/autograde_throughput.py --cohort 2000 --jobs 2
    .venv/bin/python benchmarks/autograde_throughput.py --cohort 2000 --scheduler local   # a Dask LocalCluster of two workers
    .venv/bin/python benchmarks/autograde_throughput.py --gradebook-growth 2000   # the gradebook's size alone

What it reports, every figure from this one run (timings move with the machine's load: compare the ratios):

- **the headline**: ``--samples`` ordinary (non-hostile) sample submissions of ``tests/submissions`` (30 by
  default, every lab, solutions, blanks and mistakes; ``--samples all`` for every one), graded by this engine
  (``Course.autograde``, the default worker count) and by stock nbgrader (its own autograde preprocessors, the
  notebook executed in a Jupyter kernel, ``Execute.timeout`` = ``--stock-timeout``), one after the other on the
  same released notebooks, each run in a new interpreter (as an instructor's command is), so that neither gains
  from imports or a fork server the other left warm; its wall time is from start to exit, its CPU time that of
  the process and everything it started. The scores must be identical: the run fails (exit status 1) when one
  differs;
- the same for a batch of ``--small`` of them (12 by default), and this engine on it with one worker;
- the per-submission CPU split of this engine on the headline batch (one worker, in this process): the checks
  (the lab's check functions with their MCP round trips), the learner host (supervisor, host and the servers it
  starts: what the fork server reaps), nbgrader's sanitising steps, nbgrader's recording (the gradebook, the
  autograde steps after the checks, the files it writes), and the rest;
- the hostile batch on its own (an endless loop, ``os._exit``, a segfault, a flood of printing, a 2 GB allocation
  in handlers and at the top level): this engine against stock, as a second figure (``--no-hostile`` skips it);
- when otter-grader is installed (the ``otter`` extra), a second baseline in the headline and the smaller batch:
  otter's fastest route without Docker, ``otter.api.grade_submission`` in a loop, in a new interpreter too, with
  otter tests generated from the course's gradebook (every graded cell, visible and hidden checks, each worth its
  points there), so that its scores must be identical as well (``--no-otter`` skips it).

``--cohort N`` grades N submissions instead (the samples repeated, each copy a distinct student), with ``--jobs``
workers here, then on the Dask scheduler given (``--scheduler local`` starts a ``LocalCluster`` of two workers on
ports 9300-9399, in a process of its own, as a deployment's scheduler runs apart from the grader), and reports the
cost per submission of the first 200 against the last 200 of each phase (the recording's also for every 200 in
turn, its growth along the least-squares line through all, and both against a fixed reference workload run beside
it in its thread, which takes the machine's drift out), the grader's and its largest worker's peak
resident memory, and the throughput. ``--plot PNG`` draws throughput against workers (1, 2) from cohort runs and
projects the time for 2,000 learners x 4 labs on 32- and 128-core Dask clusters.

``--gradebook-growth N`` measures what the gradebook's size alone does to the recording (``gradebook_growth``): the
last 200 submissions of a cohort of N recorded both into an empty gradebook and into one that holds the N - 200
before them, 20 at a time, the two taking turns over the same minutes, so that the machine's drift, which moves a
cohort's first and last 200 apart by more than the gradebook does, weighs on both alike.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# The imports below run after the checkout is put on sys.path, so that the benchmark runs from a checkout; the
# grader's first, as `python -m grader` imports it (it keeps a grammar jsonschema would compile out of nbformat).
import grader  # noqa: E402, I001, F401
import nbformat  # noqa: E402

from grader.notebook import is_answer_cell  # noqa: E402
from grader.pipeline import DEFAULT_COURSE, SAMPLE_SUBMISSIONS, Course, _spared_from_collection  # noqa: E402

LABS = ["lab1_error_results", "lab2_scopes_expansion", "lab3_tools_resources", "lab4_server_integration"]

# name -> (lab, the text to find in the solution's answer cells, what to put instead)
HOSTILE = {
    "loop_in_handler": (
        "lab1_error_results",
        "def get_order(desk, order_id):\n",
        "def get_order(desk, order_id):\n    while True:\n        pass\n",
    ),
    "exit_in_handler": (
        "lab1_error_results",
        "def get_order(desk, order_id):\n",
        "def get_order(desk, order_id):\n    import os\n    os._exit(3)\n",
    ),
    "systemexit_at_top": (
        "lab3_tools_resources",
        'server = MCPServer("runbooks")\n',
        'server = MCPServer("runbooks")\nraise SystemExit("bye")\n',
    ),
    "loop_at_top": (
        "lab1_error_results",
        "def text_block(text):\n",
        "while True:\n    pass\n\n\ndef text_block(text):\n",
    ),
    "print_flood": (
        "lab1_error_results",
        "def get_order(desk, order_id):\n",
        "def get_order(desk, order_id):\n    print('x' * 1_000_000)\n",
    ),
    "segfault_in_handler": (
        "lab1_error_results",
        "def get_order(desk, order_id):\n",
        "def get_order(desk, order_id):\n    import ctypes\n    ctypes.string_at(0)\n",
    ),
    "loop_in_expander": (
        "lab2_scopes_expansion",
        "def expand_value(text, env, remote_field=False):\n",
        "def expand_value(text, env, remote_field=False):\n    while True:\n        pass\n",
    ),
    "loop_in_resource_read": (
        "lab3_tools_resources",
        "def catalog() -> str:\n",
        "def catalog() -> str:\n    while True:\n        pass\n",
    ),
    "exit_in_tool": (
        "lab4_server_integration",
        "    try:\n        outline = BLOG.outline(slug)\n",
        "    import os\n    os._exit(4)\n    try:\n        outline = BLOG.outline(slug)\n",
    ),
    "memory_bomb_in_tool": (
        "lab4_server_integration",
        "    try:\n        hits = BLOG.search(query)\n",
        "    hoard = bytearray(2 * 1024**3)\n    try:\n        hits = BLOG.search(query)\n",
    ),
}


# --- the batches ---------------------------------------------------------------------------------


def samples() -> list[tuple[str, str]]:
    """Every ordinary sample submission, (student, lab), sorted."""
    return sorted(
        (p.parent.parent.name, p.parent.name) for p in SAMPLE_SUBMISSIONS.glob("*/*/*.ipynb") if p.parent.name in LABS
    )


def ordinary(count: int | None) -> list[tuple[str, str]]:
    """``count`` ordinary samples (None: all), spread over the labs: each lab's solution and blank first, then the
    catalogued mistakes taken in turn from each lab, in name order. The first ``n`` of a larger pick are its pick of n."""
    by_lab: dict[str, list[str]] = defaultdict(list)
    for student, lab in samples():
        by_lab[lab].append(student)
    queues = {
        lab: sorted(by_lab[lab], key=lambda s: (s not in ("solution", "blank"), s != "solution", s)) for lab in LABS
    }
    picked: list[tuple[str, str]] = []
    while any(queues.values()):
        for lab in LABS:
            if queues[lab]:
                picked.append((queues[lab].pop(0), lab))
    return picked if count is None else picked[:count]


def copy_samples(folder: Path, pairs: list[tuple[str, str]], copies: int = 1) -> list[tuple[str, str]]:
    """The pairs' notebooks under ``folder``, ``copies`` times (each copy a distinct student: ``name__k``)."""
    out = []
    for copy in range(copies):
        for student, lab in pairs:
            name = student if copy == 0 else f"{student}__{copy}"
            shutil.copytree(SAMPLE_SUBMISSIONS / student / lab, folder / name / lab)
            out.append((name, lab))
    return out


def write_hostile(folder: Path) -> list[tuple[str, str]]:
    pairs = []
    for name, (lab, old, new) in HOSTILE.items():
        nb = nbformat.read(str(SAMPLE_SUBMISSIONS / "solution" / lab / f"{lab}.ipynb"), as_version=4)
        (cell,) = [c for c in nb.cells if is_answer_cell(c) and old in c.source]
        cell.source = cell.source.replace(old, new, 1)
        (folder / f"hostile_{name}" / lab).mkdir(parents=True)
        nbformat.write(nb, str(folder / f"hostile_{name}" / lab / f"{lab}.ipynb"))
        pairs.append((f"hostile_{name}", lab))
    return pairs


def build_batch(folder: Path, copies: int = 1) -> list[tuple[str, str]]:
    """Every ordinary sample (``copies`` times) and the hostile submissions, under ``folder``."""
    return copy_samples(folder, ordinary(None), copies) + write_hostile(folder)


def cohort_pairs(folder: Path, size: int) -> list[tuple[str, str]]:
    """``size`` submissions: the ordinary samples repeated in turn, each copy a distinct student.

    Named by their place in the cohort first (``c0001_<sample>``), so that the course, which takes submissions in
    the order of their folders' names, grades them in turn too: the first 200 and the last 200 then hold alike
    mixes of samples. Named by sample first, the copies of one sample would be graded together, and the first and
    last 200 would compare different samples, not the same work early and late in the batch."""
    pool = ordinary(None)
    pairs = []
    width = len(str(size))
    for i in range(size):
        student, lab = pool[i % len(pool)]
        name = f"c{i:0{width}d}_{student}"
        shutil.copytree(SAMPLE_SUBMISSIONS / student / lab, folder / name / lab)
        pairs.append((name, lab))
    return pairs


# --- measuring -----------------------------------------------------------------------------------


def _engine_module(name: str):
    """A module of the grading engine (grader.engine), imported when a measure needs it."""
    import importlib

    return importlib.import_module(f"grader.engine.{name}")


def cpu_seconds() -> float:
    """CPU time of this process, its children that ended, and the hosts its own fork server forked (that ended)."""
    forkserver = _engine_module("forkserver")
    warm = forkserver.started()
    own = sum(
        u.ru_utime + u.ru_stime
        for u in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )
    return own + (warm.cpu_seconds() if warm is not None else 0.0)


def released_course(work: Path, labs: list[str] | None = None) -> Path:
    """The course with ``labs`` (default: every lab) released, once per run."""
    released = work / "released"
    if not released.exists():
        labs = labs or LABS
        released.mkdir(parents=True)
        for lab in labs:
            shutil.copytree(DEFAULT_COURSE / "source" / lab, released / "source" / lab)
        Course(released).release(labs)
    return released


def fresh_course(work: Path, name: str, submissions: Path) -> tuple[Course, list[tuple[str, str]]]:
    shutil.copytree(released_course(work), work / name)
    course = Course(work / name)
    return course, course.collect(submissions)


def scores(course: Course) -> dict[tuple[str, str], float]:
    return {(r["student"], r["lab"]): r["score"] for r in course.gradebook()}


HIDDEN_TEST = """# Hidden check, as a stock nbgrader course runs hidden tests: in the kernel, restored at autograde.
import dataclasses as _dataclasses
from grader.engine.grading import sandboxed as _sandboxed
from grader.labs import lab_checks as _lab_checks
_check = _lab_checks(lab.name)[{name!r}]
def _run(host, _check=_check):
    host.sandboxed = _sandboxed  # as the engine gives its hosts' sessions (lab 2 starts configured servers with it)
    _check.run(host)
lab.checks.checks[{name!r}] = _dataclasses.replace(_check, run=_run)
lab.check({name!r})"""

# A hidden check's graded cell, as the labs release it: its name.
HIDDEN_CELL = re.compile(r'lab\.hidden\("([^"]+)"\)')


def hidden_check(source_cell) -> str | None:
    """The name of the hidden check a released (locked) cell of the gradebook runs, else None."""
    found = HIDDEN_CELL.search(source_cell.source or "") if source_cell.locked else None
    return found.group(1) if found else None


def hidden_tests_in_the_kernel(course: Course) -> int:
    """Give the stock course the hidden checks the way stock nbgrader has hidden tests: the released graded cell's
    source in the gradebook runs the check in the kernel (nbgrader's OverwriteCells puts a locked cell's source back
    from the gradebook at autograde). Without it, stock nbgrader scores a hidden check's cell, which only prints,
    as passed. Returns how many cells it changed."""
    from nbformat.v4 import new_code_cell
    from nbgrader.api import Gradebook
    from nbgrader.utils import compute_checksum

    changed = 0
    with Gradebook(course.db_url, course_id=course.course_id) as gb:
        for assignment in gb.assignments:
            for notebook in assignment.notebooks:
                for source in notebook.source_cells:
                    name = hidden_check(source)
                    if name is None:
                        continue
                    cell = new_code_cell(HIDDEN_TEST.format(name=name))
                    graded = {c.name: c for c in notebook.grade_cells}.get(source.name)
                    cell.metadata["nbgrader"] = {
                        "grade": graded is not None,
                        "grade_id": source.name,
                        "locked": True,
                        "solution": False,
                        "points": float(graded.max_score) if graded is not None else 0.0,
                        "schema_version": 3,
                    }
                    source.source, source.checksum = cell.source, compute_checksum(cell)
                    changed += 1
        gb.db.commit()
    return changed


def run_stock(course: Course, pairs, timeout: int) -> dict:
    """nbgrader autograde with its stock preprocessors, one submission after another."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.root = str(course.root)
    config.CourseDirectory.course_id = course.course_id
    config.Execute.timeout = timeout
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    before, start = cpu_seconds(), time.perf_counter()
    failed = [f"{student}/{lab}" for student, lab in pairs if not api.autograde(lab, student)["success"]]
    return {"seconds": time.perf_counter() - start, "cpu": cpu_seconds() - before, "failed": failed}


def in_a_fresh_process(kind: str, course: Course, pairs, **options) -> dict:
    """One measured grading (``kind`` "engine", "stock" or "otter") in a new interpreter, as an instructor's
    command runs: its wall time from start to exit, and the CPU time of it and of everything it started (each waited
    for before it ends, so the kernel counts them among this process's children). No side gains from imports, a
    fork server or caches a run before it left warm in this process.

    This engine's side is its command itself, ``python -m grader autograde`` on the course's submitted/ folder (the
    pairs already copied in by ``fresh_course``); stock nbgrader's is its API's ``autograde``, one call per
    submission, as its own command makes them; otter's is ``run_otter`` on the ``otter_course`` folder in
    ``options["folder"]``, one ``grade_submission`` per submission."""
    import subprocess

    if kind == "engine":
        command = [sys.executable, "-m", "grader", "autograde", str(course.root / "submitted"), "--course"]
        command += [str(course.root), *(["--jobs", str(options["jobs"])] if options.get("jobs") else [])]
    else:
        python = options.pop("python", None) or sys.executable
        request = json.dumps({"kind": kind, "course": str(course.root), "pairs": pairs, **options})
        command = [python, str(Path(__file__).resolve()), "--measure", request]
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    seconds, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if kind == "engine":
        if done.returncode not in (0, 1):  # 1: some submission not graded, which the figures say
            raise RuntimeError(f"the engine's run failed:\n{done.stderr[-3000:]}")
        graded = {(r["student"], r["lab"]) for r in course.gradebook()}
        return {"seconds": seconds, "cpu": cpu, "failed": [f"{s}/{lab}" for s, lab in pairs if (s, lab) not in graded]}
    if done.returncode != 0:
        raise RuntimeError(f"the {kind} run failed:\n{done.stderr[-3000:]}")
    inner = json.loads(done.stdout.strip().splitlines()[-1])
    figures = {"seconds": seconds, "cpu": cpu, "failed": inner["failed"], "grading_seconds": inner["seconds"]}
    if "scores" in inner:  # otter's: it keeps no gradebook
        figures["scores"] = {tuple(key.split("/")): score for key, score in inner["scores"].items()}
    return figures


def measure_here(request: str) -> int:
    """The child side of ``in_a_fresh_process`` for stock nbgrader or otter: grade, then print what ``run_stock`` or
    ``run_otter`` saw, as JSON."""
    job = json.loads(request)
    pairs = [tuple(p) for p in job["pairs"]]
    if job["kind"] == "otter":
        print(json.dumps(run_otter(Path(job["folder"]), pairs)))
    else:
        print(json.dumps(run_stock(Course(Path(job["course"])), pairs, job["timeout"])))
    return 0


def compare(
    work: Path,
    name: str,
    pairs_of: list[tuple[str, str]],
    *,
    jobs,
    stock_timeout: int,
    one_job: bool = False,
    otter: str | None = None,
) -> dict:
    """This engine and stock nbgrader on the same submissions, one after the other, in fresh copies of the course;
    with ``otter`` (an interpreter that has it, ``otter_python``), otter-grader on them too (``otter_side``)."""
    folder = work / f"{name}-submissions"
    pairs = copy_samples(folder, pairs_of) if not name.startswith("hostile") else write_hostile(folder)
    figures: dict = {"count": len(pairs)}
    engine, engine_pairs = fresh_course(work, f"{name}-engine", folder)
    figures["engine"] = in_a_fresh_process("engine", engine, engine_pairs, jobs=jobs)
    if one_job:
        single, single_pairs = fresh_course(work, f"{name}-one-job", folder)
        figures["engine_one_job"] = in_a_fresh_process("engine", single, single_pairs, jobs=1)
    stock, stock_pairs = fresh_course(work, f"{name}-stock", folder)
    hidden_tests_in_the_kernel(stock)
    figures["stock"] = in_a_fresh_process("stock", stock, stock_pairs, timeout=stock_timeout)
    figures.update(agreement(scores(engine), scores(stock)))
    figures["ratio"] = figures["stock"]["seconds"] / figures["engine"]["seconds"]
    if otter:
        figures["otter"] = otter_side(work, name, folder, pairs, engine, python=otter)
        figures["otter"]["ratio"] = figures["otter"]["seconds"] / figures["engine"]["seconds"]
        figures["otter"]["cpu_ratio"] = figures["otter"]["cpu"] / figures["engine"]["cpu"]
    return figures


def otter_side(work: Path, name: str, folder: Path, pairs, engine: Course, python: str | None = None) -> dict:
    """otter-grader on the submissions of ``folder`` in a new interpreter (``python``, default this one; see
    ``otter_python``), with ``otter_course`` and ``run_otter``, and how its figures and scores compare with this
    engine's, graded already in ``engine``."""
    side = otter_course(Course(released_course(work)), folder, pairs, work / f"{name}-otter")
    figures = in_a_fresh_process("otter", engine, pairs, folder=str(side), python=python)
    figures.update(agreement(scores(engine), figures.pop("scores")))
    return figures


def agreement(ours: dict, theirs: dict) -> dict:
    """How two sides' scores, keyed (student, lab), compare on the submissions both graded: how many agree, of how
    many, and each that differs ("student/lab", ours, theirs)."""
    both = sorted(set(ours) & set(theirs))
    return {
        "agree": sum(ours[p] == theirs[p] for p in both),
        "both": len(both),
        "differ": [(f"{p[0]}/{p[1]}", ours[p], theirs[p]) for p in both if ours[p] != theirs[p]],
    }


def cpu_split(work: Path, pairs_of: list[tuple[str, str]], name: str = "split") -> dict[str, float]:
    """Per-submission CPU seconds of this engine on these submissions, by where it goes (one worker, this process)."""
    from nbconvert.preprocessors import Preprocessor
    from traitlets.config import Config

    from grader.course import configure

    grading = _engine_module("grading")
    folder = work / f"{name}-submissions"
    pairs = copy_samples(folder, pairs_of)
    course, course_pairs = fresh_course(work, name, folder)
    sanitising = tuple(configure(Config()).Autograde.sanitize_preprocessors)
    spent = defaultdict(float)

    original_check = grading.run_check

    def run_check(*args, **kwargs):
        start = time.process_time()
        try:
            return original_check(*args, **kwargs)
        finally:
            spent["checks"] += time.process_time() - start

    original_call = Preprocessor.__call__

    def call(self, nb, resources):
        if not isinstance(self, sanitising):
            return original_call(self, nb, resources)
        start = time.process_time()
        try:
            return original_call(self, nb, resources)
        finally:
            spent["sanitising"] += time.process_time() - start

    from grader.course import BatchAutograde

    original_record = BatchAutograde.record

    def record(self, *args, **kwargs):
        start = time.process_time()
        try:
            return original_record(self, *args, **kwargs)
        finally:
            spent["recording"] += time.process_time() - start

    forkserver = _engine_module("forkserver")
    grading.run_check, Preprocessor.__call__, BatchAutograde.record = run_check, call, record
    try:
        warm = forkserver.shared()  # this process's fork server, started before the clock: once per worker
        host_before = warm.cpu_seconds() if warm else 0.0
        before = time.process_time()
        course.autograde(course_pairs, jobs=1)
        own = time.process_time() - before
        host = (warm.cpu_seconds() if warm else 0.0) - host_before
    finally:
        grading.run_check, Preprocessor.__call__, BatchAutograde.record = original_check, original_call, original_record
    n = len(pairs)
    # One at a time (jobs=1): this process's CPU time is the checks, the recording (the sanitising steps run inside
    # it), or the rest, one after the other, whether a submission is recorded during the checks or after them.
    split = {
        "checks": spent["checks"] / n,
        "learner host": host / n,
        "nbgrader sanitising": spent["sanitising"] / n,
        "nbgrader recording": (spent["recording"] - spent["sanitising"]) / n,
        "rest": (own - spent["checks"] - spent["recording"]) / n,
    }
    split["engine in all"] = sum(split.values())
    split["of the learner host: its start"] = host_start_cpu(pairs, warm)
    split["the checks without the engine"] = checks_without_the_engine(pairs)[0]
    return split


def cpu_split_rounds(work: Path, pairs: list[tuple[str, str]], rounds: int) -> dict[str, Any]:
    """``cpu_split`` ``rounds`` times, one after the other in this process: each figure's median over the rounds, and
    each round's ratio of the engine in all to the checks without the engine (both measured in that round). On this
    noisy 2-core machine one round's denominator moves by a tenth from run to run; the median of rounds moves less."""
    each = [cpu_split(work, pairs, name=f"split{round_}") for round_ in range(1, rounds + 1)]
    split: dict[str, Any] = {key: statistics.median(one[key] for one in each) for key in each[0]}
    split["ratios"] = [one["engine in all"] / one["the checks without the engine"] for one in each]
    return split


def checks_without_the_engine(pairs: list[tuple[str, str]]) -> tuple[float, list[list[bool]]]:
    """Per submission, the CPU of the same checks with no engine around them: the answer cells loaded in this process
    and served by the lab's server in this process (as a lab notebook's ``lab.check`` does, and as stock nbgrader's
    and otter's kernels run them), one server for all of a submission's checks, no sandbox, no second process, no
    nbgrader. The servers a lab 2 configuration starts count too (they start from the fork server, as the engine's
    do). Returns the CPU and each submission's verdicts (for comparing with the engine's). The sample answers are
    trusted code: this runs them unsandboxed."""
    from grader.engine.grading import sandboxed
    from grader.labs import lab_checks
    from grader.notebook import answer_code, read_notebook
    from labkit.checking import logger_level, run_check
    from labkit.lab import _environ
    from servers.client import connect
    from servers.learner_host import build_server
    from servers.learner_host.host import load_learner_code, logging_kept

    def grade(lab: str, code: str) -> list[bool]:
        namespace, _ = load_learner_code(lab, code)
        registry = lab_checks(lab)
        # As Lab.run (lab.check) sets up a check, but with the hidden checks too and the engine's means of starting a
        # lab 2 configuration's servers; the SDK's logs of what the learner's server raised are kept quiet, as there.
        with (
            tempfile.TemporaryDirectory(prefix="lab-state-") as state,
            _environ("LAB_STATE_DIR", state),
            logger_level("mcp", logging.CRITICAL),
            connect(build_server(lab, namespace), timeout=30) as host,
        ):
            host.state_dir, host.sandboxed = Path(state), sandboxed
            return [run_check(registry[name], host).passed for name in registry.checks]

    codes = [(lab, answer_code(read_notebook(SAMPLE_SUBMISSIONS / s / lab / f"{lab}.ipynb"))) for s, lab in pairs]
    # Loading answer cells here sets up logging as a host does (a handler on the root logger): left in place, it
    # would print nbgrader's progress in the split's next round, and charge that round's recording for it.
    # What this process held before the checks (the benchmark's imports, what the engine's last batch left) is set
    # aside from the cycle collector while they run, as a batch sets aside what the grader held, by the same means:
    # a full collection over it, 0.15 s a time, is not the checks' work, and it fell in some rounds and not others.
    with _spared_from_collection(), logging_kept():
        for lab in sorted({lab for lab, _ in codes}):  # each lab's server and checks imported before the clock
            grade(lab, next(code for one, code in codes if one == lab))
        before = cpu_seconds()  # this process, its children, and what its fork server forked
        verdicts = [grade(lab, code) for lab, code in codes]
        spent = cpu_seconds() - before
    return spent / len(codes), verdicts


def host_start_cpu(pairs: list[tuple[str, str]], warm) -> float:
    """Per submission, the learner host's CPU to start and answer one call: the fork, the sandbox, the answer cells
    loaded, one check's call (each submission graded again on its lab's first check alone). The rest of the host's
    CPU is the server side of the checks' calls."""
    from grader.engine.grading import grade_code
    from grader.labs import lab_checks
    from grader.notebook import answer_code, read_notebook

    if warm is None:
        return float("nan")
    spent = 0.0
    for student, lab in pairs:
        code = answer_code(read_notebook(SAMPLE_SUBMISSIONS / student / lab / f"{lab}.ipynb"))
        before = warm.cpu_seconds()
        grade_code(lab, code, [next(iter(lab_checks(lab).checks))])
        spent += warm.cpu_seconds() - before
    return spent / len(pairs)


# --- the learner host's start, and one lab's checks --------------------------------------------------


def first_result_seconds(command: list[str], call) -> float:
    from mcp import StdioServerParameters

    from servers.client import connect

    start = time.perf_counter()
    with connect(StdioServerParameters(command=command[0], args=command[1:], cwd=str(REPO)), timeout=30) as session:
        call(session)
        return time.perf_counter() - start


NAIVE_SERVER = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("naive")
@server.tool()
def echo(text: str) -> str:
    return text
server.run()
"""


def sandboxed_first_result_seconds(code: str, lab: str) -> float:
    """A learner host as grading starts it (supervisor, sandbox, limits), from asking for it to its first tool result."""
    from grader.engine.grading import Hosts, Limits

    with tempfile.TemporaryDirectory(prefix="bench-host-") as scratch:
        scratch = Path(scratch)
        (scratch / "answers.py").write_text(code)
        with open(scratch / "stderr.log", "w") as errlog:
            hosts = Hosts(lab, scratch, Limits(), errlog)
            start = time.perf_counter()
            session = hosts.start()
            try:
                session.call("search_orders", customer_email="nobody@example.com")
                return time.perf_counter() - start
            finally:
                session.close()


def host_figures(work: Path, rounds: int = 5) -> dict[str, float]:
    from grader.engine import forkserver
    from grader.notebook import answer_code, read_notebook

    lab = "lab1_error_results"
    answers = answer_code(read_notebook(SAMPLE_SUBMISSIONS / "solution" / lab / f"{lab}.ipynb"))
    code = work / "answers.py"
    code.write_text(answers)
    naive = work / "naive_server.py"
    naive.write_text(NAIVE_SERVER)
    figures = {}
    server = forkserver.ForkServer()
    start = time.perf_counter()
    server._start()
    figures["fork_server_start"] = time.perf_counter() - start
    server.close()
    forkserver.shared()  # this process's fork server, started before the rounds: it is started once per worker
    sandboxed_first_result_seconds(answers, lab)
    figures["forked"] = statistics.median(sandboxed_first_result_seconds(answers, lab) for _ in range(rounds))
    os.environ["GRADER_HOST_START"] = "exec"
    try:
        figures["started_anew"] = statistics.median(sandboxed_first_result_seconds(answers, lab) for _ in range(rounds))
    finally:
        del os.environ["GRADER_HOST_START"]
    host = [sys.executable, "-m", "servers.learner_host", "--lab", lab, "--code", str(code)]
    figures["bare_host"] = statistics.median(
        first_result_seconds(host, lambda s: s.call("search_orders", customer_email="nobody@example.com"))
        for _ in range(rounds)
    )
    figures["naive"] = statistics.median(
        first_result_seconds([sys.executable, str(naive)], lambda s: s.call("echo", text="hi")) for _ in range(rounds)
    )
    return figures


def cpu_per_lab() -> dict[str, float]:
    """CPU seconds (this process, the learner hosts and the servers it starts) for one lab's checks on its solution."""
    from grader.engine.grading import grade_code
    from grader.labs import LAB_MODULES
    from grader.notebook import answer_code, read_notebook

    figures = {}
    for lab in LAB_MODULES:
        code = answer_code(read_notebook(SAMPLE_SUBMISSIONS / "solution" / lab / f"{lab}.ipynb"))
        grade_code(lab, code)  # warm: imports of the checks' own modules, the fork server's start
        runs = []
        for _ in range(3):
            before = cpu_seconds()
            grade_code(lab, code)
            runs.append(cpu_seconds() - before)
        figures[lab] = statistics.median(runs)
    return figures


# --- otter-grader, when it is installed -----------------------------------------------------------


# otter's fastest route without Docker is ``otter.api.grade_submission``, one call per submission: its own batch
# command (``otter grade``) grades only in containers. Each call unpacks the lab's autograder zip (here its tests/
# folder alone: otter's default configuration, which makes no PDF and uploads nothing) and the notebook into a new
# temporary folder, runs the notebook in a Jupyter kernel (the notebook's own kernelspec, as otter does outside a
# container) with a check after each cell whose otter metadata names a test, then any test not run yet, and pickles
# the results to read them back.
#
# The otter course is generated from this course, not written by hand: a test file per graded cell of the gradebook,
# worth that cell's points, whose one case runs what stock nbgrader's side runs in its kernel for that cell (the
# released source, ``lab.check(name)``; a hidden check's HIDDEN_TEST) in the notebook's namespace. A failed check
# raises, which fails the case, as it fails the cell in nbgrader. A submission is handed to otter as an otter course
# would have it: each graded cell's source is otter's check of its test (a cell with ``{"otter": {"tests":
# [name]}}`` in its metadata, after which otter checks in place), as stock nbgrader puts the released source of a
# locked cell back.

OTTER_TEST = """OK_FORMAT = False

from otter.test_files import test_case

name = {name!r}
points = {points!r}


@test_case(hidden={hidden!r})
def graded_cell(env):
    # What stock nbgrader runs in its kernel for the graded cell {name!r}, in the notebook's namespace.
    exec({code!r}, env)
"""


# Where CI installs the otter extra: a venv of its own inside the course's, since otter brings JupyterLab extensions
# (ipylab, jupytext's) that would change the JupyterLab the course's own tests and learners see.
OTTER_VENV_PYTHON = REPO / ".venv" / "otter" / "bin" / "python"


def otter_python(given: str | None = None) -> str | None:
    """An interpreter that can run otter's side: ``given``, else this one when otter is installed here, else
    ``OTTER_VENV_PYTHON`` when it exists; the course must be installed in it too. None when there is none."""
    import subprocess

    candidates = [given] if given else [sys.executable, str(OTTER_VENV_PYTHON)]
    for python in candidates:
        if Path(python).exists() and (
            subprocess.run([python, "-c", "import otter.api, grader"], capture_output=True, cwd=REPO).returncode == 0
        ):
            return python
    return None


def graded_checks(course: Course) -> dict[str, dict[str, dict]]:
    """lab -> graded cell -> its points, whether it is a hidden check, and the code stock nbgrader's side runs for it
    in the kernel: the released source, a hidden check's HIDDEN_TEST (as ``hidden_tests_in_the_kernel`` puts it)."""
    from nbgrader.api import Gradebook

    checks: dict[str, dict[str, dict]] = defaultdict(dict)
    with Gradebook(course.db_url, course_id=course.course_id) as gb:
        for assignment in gb.assignments:
            for notebook in assignment.notebooks:
                sources = {cell.name: cell for cell in notebook.source_cells}
                for graded in notebook.grade_cells:
                    source = sources[graded.name]
                    hidden = hidden_check(source)
                    checks[assignment.name][graded.name] = {
                        "points": float(graded.max_score),
                        "hidden": hidden is not None,
                        "code": HIDDEN_TEST.format(name=hidden) if hidden else source.source,
                    }
    return dict(checks)


def otter_autograders(checks_of: dict[str, dict[str, dict]], folder: Path) -> dict[str, Path]:
    """Each lab's otter autograder zip under ``folder``, a test file per graded cell (``graded_checks``): lab -> zip."""
    import zipfile

    zips = {}
    folder.mkdir(parents=True, exist_ok=True)
    for lab, checks in checks_of.items():
        zips[lab] = folder / f"{lab}.zip"
        with zipfile.ZipFile(zips[lab], "w") as archive:
            for name, check in checks.items():
                archive.writestr(f"tests/{name}.py", OTTER_TEST.format(name=name, **check))
    return zips


def otter_notebook(source: Path, target: Path, graded: set[str]) -> None:
    """The submission at ``source`` as an otter course has it, at ``target``: each graded cell is otter's check of
    its test instead of the cell's own source."""
    nb = nbformat.read(str(source), as_version=4)
    for cell in nb.cells:
        name = cell.metadata.get("nbgrader", {}).get("grade_id")
        if name in graded:
            cell.source = ""
            cell.metadata["otter"] = {"tests": [name]}
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(target))


def otter_course(course: Course, submissions: Path, pairs, folder: Path) -> Path:
    """The otter side of a batch under ``folder``: autograder/<lab>.zip, and each of ``pairs`` (from
    ``submissions``) as submissions/<student>/<lab>/<lab>.ipynb."""
    checks = graded_checks(course)
    otter_autograders(checks, folder / "autograder")
    for student, lab in pairs:
        notebook = f"{lab}/{lab}.ipynb"
        otter_notebook(submissions / student / notebook, folder / "submissions" / student / notebook, set(checks[lab]))
    return folder


def run_otter(folder: Path, pairs) -> dict:
    """otter's ``grade_submission`` on each submission of an ``otter_course`` folder, one after another."""
    from otter.api import grade_submission

    scores, failed = {}, []
    before, start = cpu_seconds(), time.perf_counter()
    for student, lab in pairs:
        notebook = folder / "submissions" / student / lab / f"{lab}.ipynb"
        try:
            results = grade_submission(str(notebook), str(folder / "autograder" / f"{lab}.zip"), quiet=True)
        except Exception:  # noqa: BLE001 - otter could not grade this one: the figures say so
            failed.append(f"{student}/{lab}")
            continue
        if results.catastrophic_error is not None:
            failed.append(f"{student}/{lab}")
        else:
            scores[f"{student}/{lab}"] = float(results.total)
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - before
    return {"seconds": seconds, "cpu": cpu, "failed": failed, "scores": scores}


# --- the cohort ----------------------------------------------------------------------------------


def dask_cluster_cpu(address: str) -> float:
    """The CPU seconds the Dask cluster at ``address`` has spent so far: every worker's and the scheduler's
    (``cpu_seconds``, run in each of their processes)."""
    from dask.distributed import Client

    with Client(address, timeout=30) as client:
        return sum(client.run(cpu_seconds).values()) + client.run_on_scheduler(cpu_seconds)


def peak_rss_mb() -> float:
    """This process's peak resident memory, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def dask_workers_peak_rss_mb(address: str) -> float:
    """The largest peak resident memory of the Dask cluster's workers at ``address``, in MB (each asked of itself)."""
    from dask.distributed import Client

    with Client(address, timeout=30) as client:
        return max(client.run(peak_rss_mb).values(), default=0.0)


REFERENCE_EVERY = 5  # submissions recorded between two runs of the reference workload


def reference_workload(notebook_text: str) -> float:
    """The thread CPU seconds of a fixed piece of work like the recording's, the same each time: a notebook read, copied
    and written by nbformat, and rows written to and read back from a new SQLite table in memory. Run beside the
    recording in its thread, it slows with the machine (a busy second core, a slower stretch of a shared host) as the
    recording does, but nothing in it grows with the cohort: the recording's cost against it is its own growth."""
    import copy
    import sqlite3

    start = time.thread_time()
    nb = nbformat.reads(notebook_text, as_version=4)
    nbformat.writes(copy.deepcopy(nb))
    with sqlite3.connect(":memory:") as db:
        db.execute("CREATE TABLE grade (id INTEGER PRIMARY KEY, cell TEXT, score REAL)")
        db.executemany("INSERT INTO grade (cell, score) VALUES (?, ?)", [(f"cell-{i}", i / 7) for i in range(200)])
        sum(score for (score,) in db.execute("SELECT score FROM grade WHERE cell LIKE 'cell-1%'"))
    return time.thread_time() - start


def against_reference(recordings: list[float], references: list[tuple[int, float]], edge: int) -> dict[str, Any]:
    """The recording's CPU against the reference workload run beside it, ``edge`` submissions at a time.

    ``references``: (how many submissions had been recorded when it ran, its CPU seconds). For each run of ``edge``
    submissions in turn, the mean recording over the mean reference run during it; ``first`` and ``last`` are the
    reference's own means in the first and last ``edge``; ``ratio`` is the recording's last / first over the
    reference's (the machine's drift taken out); ``growth`` that of the blocks' quotients along their line."""

    def mean_between(lo: int, hi: int) -> float:
        inside = [seconds for done, seconds in references if lo < done <= hi]
        return statistics.mean(inside) if inside else float("nan")

    n = len(recordings)
    each = [mean / mean_between(k * edge, (k + 1) * edge) for k, mean in enumerate(block_means(recordings, edge))]
    first, last = mean_between(0, edge), mean_between(n - edge, n)
    recorded = statistics.mean(recordings[-edge:]) / statistics.mean(recordings[:edge])
    return {
        "first": first,
        "last": last,
        "ratio": recorded / (last / first),
        "each": each,
        "growth": growth(each) if len(each) >= 2 else 0.0,
    }


def run_cohort(work: Path, size: int, jobs: int | None, scheduler: str | None) -> dict:
    batch = _engine_module("batch")
    folder = work / "cohort-submissions"
    if not folder.exists():
        cohort_pairs(folder, size)
    name = f"cohort-{'dask' if scheduler else jobs}"
    course, pairs = fresh_course(work, name, folder)
    from grader.course import BatchAutograde

    stamps: dict[str, list[float]] = defaultdict(list)
    # CPU seconds of each submission's recording, in order: the recording thread's own (time.thread_time), which the
    # gradings beside it in other threads do not inflate as they would its wall time.
    recordings: list[float] = []
    original, original_record = batch.Progress.advance, BatchAutograde.record

    def advance(self, n: int = 1) -> None:
        if self.label == "checks":
            stamps[self.label].extend([time.perf_counter()] * n)
        original(self, n)

    # A reference workload beside the recording, in its thread, every REFERENCE_EVERY submissions: the machine's own
    # drift over the run, to take out of the recording's (against_reference).
    references: list[tuple[int, float]] = []
    sample = (SAMPLE_SUBMISSIONS / "solution" / LABS[0] / f"{LABS[0]}.ipynb").read_text(encoding="utf-8")
    reference_workload(sample)  # its first run imports and fills caches: not measured

    def record(self, *args, **kwargs):
        start = time.thread_time()
        try:
            return original_record(self, *args, **kwargs)
        finally:
            recordings.append(time.thread_time() - start)
            if len(recordings) % REFERENCE_EVERY == 0:
                references.append((len(recordings), reference_workload(sample)))

    batch.Progress.advance, BatchAutograde.record = advance, record
    checks_process = _engine_module("checks_process")
    try:
        with open(os.devnull, "w") as quiet:
            cluster_before = dask_cluster_cpu(scheduler) if scheduler else 0.0
            start = time.perf_counter()
            before = cpu_seconds()
            if not scheduler:
                checks_process.begin()  # as the command does: the checks in a process of their own
            outcomes = course.autograde(pairs, jobs=jobs, scheduler=scheduler, progress=quiet)
            checks_process.close()  # waited for, as the command's exit waits: its CPU and memory count
            seconds = time.perf_counter() - start
            cpu = cpu_seconds() - before
            # On Dask the checks run in the cluster's workers, sent there by its scheduler: their CPU counts too.
            cpu += (dask_cluster_cpu(scheduler) - cluster_before) if scheduler else 0.0
    finally:
        batch.Progress.advance, BatchAutograde.record = original, original_record
    figures = {"size": len(pairs), "seconds": seconds, "cpu": cpu, "graded": sum(o.ok for o in outcomes), "phases": {}}

    def phase(label: str, first: float, last: float, edge: int) -> None:
        figures["phases"][label] = {
            "first": first,
            "last": last,
            "ratio": last / first if first else float("nan"),
            "edge": edge,
        }

    # The checks: the time between results, first 200 against last 200 (the workers' pace, all at once).
    times = stamps.get("checks", [])
    edge = min(200, len(times) // 2)
    if edge >= 2:
        phase("checks", (times[edge - 1] - times[0]) / (edge - 1), (times[-1] - times[-edge]) / (edge - 1), edge)
    # The recording: each submission's own recording CPU (one at a time, while the checks go on), first 200 against last.
    edge = min(200, len(recordings) // 2)
    if edge >= 2:
        phase("record", statistics.mean(recordings[:edge]), statistics.mean(recordings[-edge:]), edge)
        # and the mean of every run of ``edge`` in turn: growth climbs through them, a slow stretch of the machine does not
        figures["phases"]["record"]["each"] = block_means(recordings, edge)
        figures["phases"]["record"]["growth"] = growth(recordings)
        if references:
            figures["phases"]["record"]["reference"] = against_reference(recordings, references, edge)
    figures["rss_self_mb"] = peak_rss_mb()
    # The largest worker: on Dask each worker's own peak, asked of it; here the largest process this one started and
    # waited for (the checks' process, or a worker process).
    figures["rss_worker_mb"] = (
        dask_workers_peak_rss_mb(scheduler)
        if scheduler
        else resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    )
    return figures


def block_means(values: list[float], edge: int) -> list[float]:
    """The mean of every run of ``edge`` values in turn (a last run shorter than ``edge`` left out)."""
    return [statistics.mean(values[i : i + edge]) for i in range(0, len(values) - edge + 1, edge)]


def growth(values: list[float]) -> float:
    """How much ``values`` grow from the first to the last, as a fraction of the first, along the least-squares line
    through them against their place: every value weighs in, not only the first and last 200 (0.0: flat)."""
    slope, intercept = statistics.linear_regression(range(len(values)), values)
    return slope * (len(values) - 1) / intercept


def gradebook_growth(work: Path, size: int, edge: int = 200, turn: int = 20, name: str = "growth") -> dict[str, Any]:
    """What the gradebook's size alone does to the recording, with the machine's drift weighing on both sides alike.

    The last ``edge`` submissions of a cohort of ``size`` are recorded twice: into a gradebook that holds nothing yet
    (as the first ``edge`` of a cohort are) and into one that already holds the cohort's other ``size - edge`` (as
    the last ``edge`` are), ``turn`` at a time, the two taking turns (ABBA), in one process, over the same minutes. Each
    distinct sample's checks are run once, ahead; both courses record from the stored results, as a batch records
    what its workers checked, so no checks run beside either. Each recording's CPU is the recording thread's own
    (``time.thread_time``), the first of each ``turn`` left out (it also makes nbconvert's exporter and writer). A
    cohort of fewer than ``2 * edge`` measures its last half. ``name`` begins the name of each folder made in ``work``."""
    from grader.course import BatchAutograde

    batch = _engine_module("batch")
    edge = min(edge, size // 2)
    turn = max(1, min(turn, edge))
    folder = work / f"{name}-submissions"
    pairs = cohort_pairs(folder, size)
    measured = pairs[size - edge :]
    alone = work / f"{name}-measured"
    for student, lab in measured:
        shutil.copytree(folder / student / lab, alone / student / lab)
    sample = {student: student.split("_", 1)[1] for student, _ in pairs}  # cohort_pairs names c<place>_<sample>

    # The distinct samples' checks, once: their results are every copy's.
    distinct = sorted({(sample[student], lab) for student, lab in pairs})
    copy_samples(work / f"{name}-samples", distinct)
    checked, checked_pairs = fresh_course(work, f"{name}-checked", work / f"{name}-samples")
    checked.autograde(checked_pairs)
    source = batch.ResultStore.of_course(checked.root)
    empty, _ = fresh_course(work, f"{name}-empty", alone)
    full, _ = fresh_course(work, f"{name}-full", folder)
    for course, students in ((empty, measured), (full, pairs)):
        store = batch.ResultStore.of_course(course.root)
        for student, lab in students:
            if source.path(lab, sample[student]).is_file():
                store.path(lab, student).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source.path(lab, sample[student]), store.path(lab, student))
    full.autograde(pairs[: size - edge])  # the cohort before its last ``edge``: recorded only, from the stored results

    recordings: dict[str, list[list[float]]] = {"empty": [], "full": []}
    into: list[float] = []
    original = BatchAutograde.record

    def record(self, *args, **kwargs):
        ready = self._ready  # its exporter and writer made by an earlier call
        start = time.thread_time()
        try:
            return original(self, *args, **kwargs)
        finally:
            if ready:
                into.append(time.thread_time() - start)

    BatchAutograde.record = record
    try:
        for number, first in enumerate(range(0, edge, turn)):
            both = [("empty", empty), ("full", full)]
            for which, course in both if number % 2 == 0 else both[::-1]:
                into = []
                recordings[which].append(into)
                course.autograde(measured[first : first + turn])
    finally:
        BatchAutograde.record = original
    means = {which: statistics.mean(x for one in turns for x in one) for which, turns in recordings.items()}
    return {
        "size": size,
        "edge": edge,
        "turn": turn,
        "empty": means["empty"],
        "full": means["full"],
        "ratio": means["full"] / means["empty"],
        "turns": [
            statistics.mean(f) / statistics.mean(e)
            for e, f in zip(recordings["empty"], recordings["full"], strict=True)
            if e and f
        ],
        "held": {"empty": len(scores(empty)), "full": len(scores(full))},
    }


@contextmanager
def local_cluster() -> Iterator[str]:
    """The address of a Dask ``LocalCluster`` of two workers, started in a process of its own for the ``with`` block.

    A deployment runs its scheduler apart from the grader (``dask scheduler`` on a host of its own, the grader
    connecting with ``--scheduler tcp://...``), so the cluster is not started in the grading process either: the
    scheduler's event loop would run there beside the recording, and charge the recording with its work."""
    import subprocess

    command = [sys.executable, str(Path(__file__).resolve()), "--serve-cluster"]
    serving = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        address = serving.stdout.readline().strip()
        if not address.startswith("tcp://"):
            raise RuntimeError(
                "the Dask LocalCluster did not start (its process said no address; see its errors above)"
            )
        yield address
    finally:
        serving.stdin.close()  # the cluster's process closes the cluster and ends when its input ends
        try:
            serving.wait(timeout=60)
        except subprocess.TimeoutExpired:
            serving.kill()
            serving.wait()


def serve_cluster() -> int:
    """The process of ``local_cluster``: a LocalCluster of two workers, one thread each, on the first free port of
    9300-9399; its address printed, then kept until this process's input ends."""
    from dask.distributed import LocalCluster

    for port in range(9300, 9400):
        try:
            cluster = LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, scheduler_port=port, dashboard_address=None
            )
        except OSError:
            continue
        with cluster:
            print(cluster.scheduler_address, flush=True)
            sys.stdin.read()
        return 0
    print("no free port in 9300-9399 for the Dask scheduler", file=sys.stderr)
    return 1


def plot(points: dict[int, float], path: Path, note: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workers = sorted(points)
    fig, ax = plt.subplots(figsize=(5, 3.4), dpi=120)
    ax.plot(workers, [points[w] for w in workers], marker="o")
    ax.set_xlabel("workers (--jobs)")
    ax.set_ylabel("submissions per second")
    ax.set_xticks(workers)
    ax.set_ylim(bottom=0)
    ax.set_title("Autograde throughput against workers", fontsize=10)
    ax.text(0.02, 0.02, note, transform=ax.transAxes, fontsize=7, va="bottom")
    fig.tight_layout()
    fig.savefig(path)


def projection(per_submission_cpu: float, record_seconds: float, cores: int, submissions: int = 8000) -> float:
    """Seconds to grade ``submissions`` on ``cores`` Dask worker cores: the checks spread over the cores, nbgrader's
    recording one submission at a time beside them (the gradebook is one SQLite file): the slower of the two."""
    return max(submissions * per_submission_cpu / cores, submissions * record_seconds)


# --- main ----------------------------------------------------------------------------------------


def show(name: str, figures: dict) -> None:
    e, s = figures["engine"], figures["stock"]
    print(f"{name} ({figures['count']} submissions):")
    print(
        f"  this engine:    {e['seconds']:7.1f} s  {figures['count'] / e['seconds']:6.2f} /s  CPU {e['cpu']:6.1f} s  not graded: {e['failed'] or 'none'}"
    )
    if "engine_one_job" in figures:
        o = figures["engine_one_job"]
        print(
            f"  one worker:     {o['seconds']:7.1f} s  {figures['count'] / o['seconds']:6.2f} /s  CPU {o['cpu']:6.1f} s"
        )
    print(
        f"  stock nbgrader: {s['seconds']:7.1f} s  {figures['count'] / s['seconds']:6.2f} /s  CPU {s['cpu']:6.1f} s  not graded: {s['failed'] or 'none'}"
    )
    print(f"  ratio (stock / engine): {figures['ratio']:.1f}x; scores agree on {figures['agree']} of {figures['both']}")
    for who, ours, theirs in figures["differ"]:
        print(f"    differ: {who}: engine {ours:g}, stock {theirs:g}")
    if "otter" in figures:
        o = figures["otter"]
        print(
            f"  otter-grader:   {o['seconds']:7.1f} s  {figures['count'] / o['seconds']:6.2f} /s  CPU {o['cpu']:6.1f} s  not graded: {o['failed'] or 'none'}"
        )
        print(
            f"  ratio (otter / engine): {o['ratio']:.1f}x, CPU {o['cpu_ratio']:.1f}x; scores agree on {o['agree']} of {o['both']}"
        )
        for who, ours, theirs in o["differ"]:
            print(f"    differ: {who}: engine {ours:g}, otter {theirs:g}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--samples", default="30", help="Ordinary submissions in the headline batch (default 30; 'all')."
    )
    parser.add_argument("--small", type=int, default=12, help="The smaller batch (default 12; 0 skips it).")
    parser.add_argument("--jobs", type=int, default=None, help="This engine's workers (default: its own default).")
    parser.add_argument("--stock-timeout", type=int, default=30, help="Stock nbgrader's seconds per cell (default 30).")
    parser.add_argument(
        "--no-hostile", action="store_true", help="Skip the hostile batch (stock spends minutes on it)."
    )
    parser.add_argument("--no-split", action="store_true", help="Skip the per-submission CPU split.")
    parser.add_argument(
        "--split-rounds",
        type=int,
        default=3,
        help="Measure the CPU split this many times and report the medians (default 3).",
    )
    parser.add_argument(
        "--no-otter", action="store_true", help="Skip otter-grader's side even when otter is installed."
    )
    parser.add_argument(
        "--otter-python",
        default=None,
        help="The interpreter of a venv with otter and the course installed (default: this one, else .venv/otter's).",
    )
    parser.add_argument(
        "--cohort", type=int, default=0, help="Grade this many submissions instead (the samples repeated)."
    )
    parser.add_argument(
        "--scheduler", default=None, help="With --cohort: a Dask scheduler (tcp://HOST:PORT), or 'local'."
    )
    parser.add_argument(
        "--workers", default=None, help="With --cohort: a list of --jobs to run one after the other, e.g. 1,2."
    )
    parser.add_argument(
        "--plot", type=Path, default=None, help="With --cohort --workers: draw throughput against workers here."
    )
    parser.add_argument(
        "--gradebook-growth",
        type=int,
        default=0,
        metavar="SIZE",
        help="Instead: the last 200 of a cohort of SIZE recorded into an empty gradebook and into one holding the rest, in turns.",
    )
    parser.add_argument("--host-figures", action="store_true", help="Also the learner host's start and each lab's CPU.")
    parser.add_argument("--json", type=Path, default=None, help="Write every figure to this file as JSON too.")
    parser.add_argument("--measure", default=None, help=argparse.SUPPRESS)  # in_a_fresh_process's child
    parser.add_argument("--serve-cluster", action="store_true", help=argparse.SUPPRESS)  # local_cluster's process
    options = parser.parse_args()
    if options.measure:
        return measure_here(options.measure)
    if options.serve_cluster:
        return serve_cluster()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    report: dict = {"load_at_start": os.getloadavg()[0]}

    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        work = Path(tmp)
        if options.gradebook_growth:
            report["gradebook_growth"] = g = gradebook_growth(work, options.gradebook_growth)
            held = g["size"] - g["edge"]
            print(
                f"the gradebook's size alone: the last {g['edge']} of a cohort of {g['size']} recorded into an empty "
                f"gradebook and into one already holding the {held} before them, {g['turn']} at a time in turns:"
            )
            print(
                f"  recording CPU per submission: into the empty one {g['empty']:.4f} s, into the one holding {held} "
                f"{g['full']:.4f} s: {g['ratio']:.2f}"
            )
            print("  each turn's, holding / empty: " + ", ".join(f"{r:.2f}" for r in g["turns"]))
        elif options.cohort:
            runs = {}
            # Here first: the processes this one waits for are then only the checks' (and the workers'), whose peak
            # memory the figures report, not a LocalCluster's that ended before.
            for jobs in (
                [int(j) for j in (options.workers or str(options.jobs or 2)).split(",")]
                if not options.scheduler or options.workers
                else []
            ):
                runs[jobs] = run_cohort(work, options.cohort, jobs, None)
            if options.scheduler == "local":
                with local_cluster() as address:
                    runs["dask"] = run_cohort(work, options.cohort, None, address)
            elif options.scheduler:
                runs["dask"] = run_cohort(work, options.cohort, None, options.scheduler)
            for key, figures in runs.items():
                where = "Dask LocalCluster, 2 workers" if key == "dask" else f"--jobs {key}"
                print(
                    f"cohort of {figures['size']} ({where}): {figures['seconds']:.1f} s, {figures['size'] / figures['seconds']:.2f} /s, "
                    f"CPU {figures['cpu'] / figures['size']:.3f} s per submission, graded {figures['graded']}"
                )
                for label, phase in figures["phases"].items():
                    what = "time between results" if label == "checks" else "CPU of the recording"
                    print(
                        f"  {label} ({what}): per submission, first {phase['edge']}: {phase['first']:.3f} s, "
                        f"last {phase['edge']}: {phase['last']:.3f} s (last / first {phase['ratio']:.2f})"
                    )
                    if "each" in phase:
                        each = ", ".join(f"{x:.4f}" for x in phase["each"])
                        print(f"    each {phase['edge']} in turn: {each}")
                        print(
                            f"    growth along the least-squares line through all {figures['size']}: {phase['growth']:+.1%}"
                        )
                    if "reference" in phase:
                        ref = phase["reference"]
                        print(
                            f"    a fixed reference workload in the same thread (every {REFERENCE_EVERY}th): first "
                            f"{phase['edge']}: {ref['first'] * 1000:.2f} ms, last {phase['edge']}: {ref['last'] * 1000:.2f} ms "
                            f"(last / first {ref['last'] / ref['first']:.2f}: the machine's drift)"
                        )
                        each = ", ".join(f"{x:.2f}" for x in ref["each"])
                        print(f"    the recording against it, each {phase['edge']} in turn: {each}")
                        print(
                            f"    the recording against it: last / first {ref['ratio']:.2f}, growth along the line "
                            f"{ref['growth']:+.1%}"
                        )
                worker = "a Dask worker" if key == "dask" else "the checks' process or a worker process"
                print(
                    f"  peak RSS: grader {figures['rss_self_mb']:.0f} MB, largest worker ({worker}) "
                    f"{figures['rss_worker_mb']:.0f} MB"
                )
            report["cohort"] = {str(k): v for k, v in runs.items()}
            local = {k: v for k, v in runs.items() if k != "dask"}
            if local:
                widest = local[max(local)]
                cpu = widest["cpu"] / widest["size"]
                record = widest["phases"].get("record", {}).get("last", 0.0)
                for cores in (32, 128):
                    seconds = projection(cpu, record, cores)
                    print(
                        f"projection, 2,000 learners x 4 labs on a {cores}-core Dask cluster: {seconds / 60:.0f} min "
                        f"({cpu:.2f} CPU-s per submission spread over {cores} cores; recording {record:.3f} s each, one at a time)"
                    )
                    report.setdefault("projection", {})[cores] = seconds
            if options.plot and local:
                plot(
                    {k: v["size"] / v["seconds"] for k, v in local.items()},
                    options.plot,
                    f"{options.cohort} submissions, {os.cpu_count()} cores, load {report['load_at_start']:.1f} at start",
                )
        else:
            count = None if options.samples == "all" else int(options.samples)
            headline = ordinary(count)
            otter = None if options.no_otter else otter_python(options.otter_python)
            report["headline"] = compare(
                work, "headline", headline, jobs=options.jobs, stock_timeout=options.stock_timeout, otter=otter
            )
            show("the headline: ordinary submissions", report["headline"])
            if options.small:
                report["small"] = compare(
                    work,
                    "small",
                    headline[: options.small],
                    jobs=options.jobs,
                    stock_timeout=options.stock_timeout,
                    one_job=True,
                    otter=otter,
                )
                show("a small batch", report["small"])
            if not options.no_split:
                report["split"] = cpu_split_rounds(work, headline, options.split_rounds)
                s = report["split"]
                rounds = options.split_rounds
                print(
                    "CPU per submission, this engine on the headline batch (one worker)"
                    + (f", the median of {rounds} rounds:" if rounds > 1 else ":")
                )
                for key, value in s.items():
                    if key != "ratios":
                        print(f"  {key:30s} {value:6.3f} s")
                if s["checks"]:
                    print(f"  engine in all / checks: {s['engine in all'] / s['checks']:.2f}")
                    # A check is a conversation: the grader's side, and the learner's server answering it.
                    both_sides = s["checks"] + s["learner host"] - s["of the learner host: its start"]
                    print(f"  engine in all / both sides of the checks' calls: {s['engine in all'] / both_sides:.2f}")
                    ratios = s["ratios"]
                    print(
                        "  engine in all / the checks without the engine: "
                        + (
                            f"{statistics.median(ratios):.2f} (the median of the rounds' ratios: "
                            + ", ".join(f"{r:.2f}" for r in ratios)
                            + ")"
                            if len(ratios) > 1
                            else f"{ratios[0]:.2f}"
                        )
                    )
            if not options.no_hostile:
                report["hostile"] = compare(work, "hostile", [], jobs=options.jobs, stock_timeout=options.stock_timeout)
                show("the hostile batch", report["hostile"])
            if options.host_figures:
                figures = host_figures(work)
                print(
                    f"learner host forked from the warm fork server, asked for to first tool result: {figures['forked']:.3f} s (median of 5)"
                )
                print(
                    f"learner host started anew under its supervisor, same measure:                 {figures['started_anew']:.3f} s (median of 5)"
                )
                print(
                    f"the fork server's own start, once per grading process:                         {figures['fork_server_start']:.3f} s"
                )
                print(
                    f"bare learner host (no supervisor), process start to first tool result:         {figures['bare_host']:.3f} s (median of 5)"
                )
                print(
                    f"plain MCPServer + SDK stdio client, same measure:                              {figures['naive']:.3f} s (median of 5)"
                )
                for lab, seconds in cpu_per_lab().items():
                    print(
                        f"CPU for {lab}'s checks on one submission (grader + learner host + servers): {seconds:.2f} s (median of 3)"
                    )
            if options.no_otter:
                print("otter-grader's comparison is skipped (--no-otter).")
            elif otter is None:
                print(
                    "otter-grader is not installed: its comparison is skipped (pip install -e '.[otter]' adds it, "
                    "here or in a venv of its own given with --otter-python)."
                )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    if options.json:
        options.json.write_text(json.dumps(report, indent=1, default=str))
    differ = [
        f
        for key in ("headline", "small")
        if key in report
        for f in report[key]["differ"] + report[key].get("otter", {}).get("differ", [])
    ]
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
