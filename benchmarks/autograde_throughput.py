"""Benchmark: this grading engine against stock ``nbgrader autograde`` on the same batch, in one run.

    .venv/bin/python benchmarks/autograde_throughput.py [--copies N] [--jobs N] [--stock-timeout S]

The batch: every sample submission of ``tests/submissions`` (all labs; correct, partly wrong,
blank), ``--copies`` times under other student names, plus hostile submissions made here
(an endless loop and ``os._exit`` in a handler, ``SystemExit`` and an endless loop at the top
level, a flood of printing). Both engines grade the same released notebooks:

- this engine: ``grader.pipeline.Course.autograde`` (checks in worker processes, learner code in
  a learner-host process, nbgrader records the scores);
- stock: nbgrader's own autograde preprocessors (the notebook executed in a Jupyter kernel,
  each graded cell's ``lab.check(...)`` running there, a cell that raises scoring 0), with
  ``Execute.timeout`` set to ``--stock-timeout`` seconds per cell.

It prints the wall time and throughput of each, their ratio, and where the scores agree. Then
figures of this engine: a learner host as grading starts it (supervisor, sandbox and limits), from
asking for it to its first tool result, forked from the warm fork server and started as new
programs (``GRADER_HOST_START=exec``); the fork server's own start, once per grading process; a
bare host and a plain ``MCPServer`` with the SDK's stdio client from process start to first result,
for comparison; and the CPU seconds one lab's checks take on one submission, counting this process,
its children and every host and server the fork server forked. Timings are wall-clock on whatever
machine runs this; compare the ratios, which come from one run. The figures recorded are in
``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import nbformat

from grader.notebook import is_answer_cell
from grader.pipeline import DEFAULT_COURSE, SAMPLE_SUBMISSIONS, Course

# name -> (lab, the text to find in the solution's answer cells, what to put instead)
HOSTILE = {
    "loop_in_handler": ("lab1_error_results", "def get_order(desk, order_id):\n", "def get_order(desk, order_id):\n    while True:\n        pass\n"),
    "exit_in_handler": ("lab1_error_results", "def get_order(desk, order_id):\n", "def get_order(desk, order_id):\n    import os\n    os._exit(3)\n"),
    "systemexit_at_top": ("lab3_tools_resources", 'server = MCPServer("runbooks")\n', 'server = MCPServer("runbooks")\nraise SystemExit("bye")\n'),
    "loop_at_top": ("lab1_error_results", "def text_block(text):\n", "while True:\n    pass\n\n\ndef text_block(text):\n"),
    "print_flood": ("lab1_error_results", "def get_order(desk, order_id):\n", "def get_order(desk, order_id):\n    print('x' * 1_000_000)\n"),
    "segfault_in_handler": (
        "lab1_error_results", "def get_order(desk, order_id):\n", "def get_order(desk, order_id):\n    import ctypes\n    ctypes.string_at(0)\n",
    ),
    "loop_in_expander": (
        "lab2_scopes_expansion", "def expand_value(text, env, remote_field=False):\n",
        "def expand_value(text, env, remote_field=False):\n    while True:\n        pass\n",
    ),
    "loop_in_resource_read": ("lab3_tools_resources", "def catalog() -> str:\n", "def catalog() -> str:\n    while True:\n        pass\n"),
    "exit_in_tool": (
        "lab4_server_integration", "    try:\n        outline = BLOG.outline(slug)\n",
        "    import os\n    os._exit(4)\n    try:\n        outline = BLOG.outline(slug)\n",
    ),
    "memory_bomb_in_tool": (
        "lab4_server_integration", "    try:\n        hits = BLOG.search(query)\n",
        "    hoard = bytearray(2 * 1024**3)\n    try:\n        hits = BLOG.search(query)\n",
    ),
}


def build_batch(folder: Path, copies: int) -> list[tuple[str, str]]:
    pairs = []
    samples = sorted((p.parent.parent.name, p.parent.name) for p in SAMPLE_SUBMISSIONS.glob("*/*/*.ipynb"))
    for copy in range(copies):
        for student, lab in samples:
            name = student if copy == 0 else f"{student}__{copy}"
            shutil.copytree(SAMPLE_SUBMISSIONS / student / lab, folder / name / lab)
            pairs.append((name, lab))
    for name, (lab, old, new) in HOSTILE.items():
        nb = nbformat.read(str(SAMPLE_SUBMISSIONS / "solution" / lab / f"{lab}.ipynb"), as_version=4)
        (cell,) = [c for c in nb.cells if is_answer_cell(c) and old in c.source]
        cell.source = cell.source.replace(old, new, 1)
        (folder / f"hostile_{name}" / lab).mkdir(parents=True)
        nbformat.write(nb, str(folder / f"hostile_{name}" / lab / f"{lab}.ipynb"))
        pairs.append((f"hostile_{name}", lab))
    return pairs


def scores(course: Course) -> dict[tuple[str, str], float]:
    return {(r["student"], r["lab"]): r["score"] for r in course.gradebook()}


def stock_autograde(course: Course, pairs, timeout: int) -> list[str]:
    """nbgrader autograde with its stock preprocessors; returns the pairs it could not grade."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    from grader.course import (
        COURSE_ID,  # the release registered each lab in the gradebook
    )

    config = Config()
    config.CourseDirectory.root = str(course.root)
    config.CourseDirectory.course_id = COURSE_ID
    config.Execute.timeout = timeout
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    failed = []
    for student, lab in pairs:
        if not api.autograde(lab, student)["success"]:
            failed.append(f"{student}/{lab}")
    return failed


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
    from grader.notebook import answer_code, read_notebook
    from grader.engine import forkserver

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
        first_result_seconds(host, lambda s: s.call("search_orders", customer_email="nobody@example.com")) for _ in range(rounds)
    )
    figures["naive"] = statistics.median(first_result_seconds([sys.executable, str(naive)], lambda s: s.call("echo", text="hi")) for _ in range(rounds))
    return figures


def cpu_seconds() -> float:
    """CPU time of this process, its children, and the hosts its fork server forked (and that have ended)."""
    from grader.engine import forkserver

    warm = forkserver.shared()
    own = sum(
        u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )
    return own + (warm.cpu_seconds() if warm is not None else 0.0)


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=1, help="Times the sample matrix enters the batch (default 1).")
    parser.add_argument("--jobs", type=int, default=None, help="This engine's worker processes (default: the number of cores).")
    parser.add_argument("--stock-timeout", type=int, default=30, help="Stock nbgrader's seconds per cell (default 30).")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        work = Path(tmp)
        pairs = build_batch(work / "submissions", options.copies)
        print(f"batch: {len(pairs)} submissions of {len({lab for _, lab in pairs})} labs, {len(HOSTILE)} of them hostile")
        released = work / "released"
        shutil.copytree(DEFAULT_COURSE / "source", released / "source")
        Course(released).release()
        courses = {}
        for name in ("engine", "stock"):
            shutil.copytree(released, work / name)
            courses[name] = Course(work / name)
            courses[name].collect(work / "submissions")

        start = time.perf_counter()
        outcomes = courses["engine"].autograde(pairs, jobs=options.jobs)
        engine_seconds = time.perf_counter() - start
        engine_failed = [f"{o.student}/{o.lab}" for o in outcomes if not o.ok]

        start = time.perf_counter()
        stock_failed = stock_autograde(courses["stock"], pairs, options.stock_timeout)
        stock_seconds = time.perf_counter() - start

        ours, theirs = scores(courses["engine"]), scores(courses["stock"])
        both = sorted(set(ours) & set(theirs))
        agree = [p for p in both if ours[p] == theirs[p]]
        print(f"this engine:    {engine_seconds:7.1f} s  {len(pairs) / engine_seconds:6.2f} submissions/s  not graded: {engine_failed or 'none'}")
        print(f"stock nbgrader: {stock_seconds:7.1f} s  {len(pairs) / stock_seconds:6.2f} submissions/s  not graded: {stock_failed or 'none'}")
        print(f"throughput ratio (engine / stock): {stock_seconds / engine_seconds:.1f}x")
        print(f"scores agree on {len(agree)} of {len(both)} submissions both graded")
        for p in both:
            if ours[p] != theirs[p]:
                print(f"  differ: {p[0]}/{p[1]}: engine {ours[p]:g}, stock {theirs[p]:g}")

        figures = host_figures(work)
        print(f"learner host forked from the warm fork server, asked for to first tool result: {figures['forked']:.3f} s (median of 5)")
        print(f"learner host started anew under its supervisor, same measure:                 {figures['started_anew']:.3f} s (median of 5)")
        print(f"the fork server's own start, once per grading process:                         {figures['fork_server_start']:.3f} s")
        print(f"bare learner host (no supervisor), process start to first tool result:         {figures['bare_host']:.3f} s (median of 5)")
        print(f"plain MCPServer + SDK stdio client, same measure:                              {figures['naive']:.3f} s (median of 5)")
        for lab, seconds in cpu_per_lab().items():
            print(f"CPU for {lab}'s checks on one submission (grader + learner host + servers): {seconds:.2f} s (median of 3)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
