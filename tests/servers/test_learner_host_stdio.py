"""The learner host as a program over stdio (where the grader runs it): the learner's function runs in the serving
thread, seeing no event loop, where the in-process host (a lab notebook's) runs it in a worker thread."""

from __future__ import annotations

import sys

from servers.client import connect, connect_params
from servers.learner_host import build_server, load_learner_code

LAB = "lab1_error_results"
# decide reports the thread it runs in, and starts an event loop of its own.
WHERE = """
import asyncio, threading

async def _double(x):
    return 2 * x

def decide(result, attempt=1, max_attempts=3):
    main = threading.current_thread() is threading.main_thread()
    return {"action": "success", "reason": f"main thread {main}, own loop {asyncio.run(_double(21))}"}
"""


def reason(session) -> str:
    return session.call("decide", result={"isError": False, "content": []})["structuredContent"]["decision"]["reason"]


def test_over_stdio_the_learners_function_runs_in_the_serving_thread_and_may_start_its_own_loop(tmp_path) -> None:
    code = tmp_path / "answers.py"
    code.write_text(WHERE, encoding="utf-8")
    args = ["-m", "servers.learner_host", "--lab", LAB, "--code", str(code)]
    with connect_params(sys.executable, args, timeout=20) as host:
        assert reason(host) == "main thread True, own loop 42"
        assert reason(host) == "main thread True, own loop 42"  # the host's own loop is back and serves again


def test_in_process_the_learners_function_runs_in_a_worker_thread() -> None:
    namespace, load_error = load_learner_code(LAB, WHERE)
    assert load_error is None
    with connect(build_server(LAB, namespace), timeout=10) as host:
        assert reason(host) == "main thread False, own loop 42"
