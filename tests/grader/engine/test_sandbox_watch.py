"""Where the learner host watches for memory and file-size errors: the learner's code only.

A watch on every Python call (a trace function in the thread that serves MCP) doubled a host's CPU. After the
cells load, the serving thread runs untraced; the learner's calls, which the host runs in worker threads, stay
watched (``test_grading_limits``: a MemoryError the learner catches still ends the host). The lockdown cannot be
undone in a process, so each case runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

COURSE = Path(__file__).resolve().parents[3]

PROBE = """
import json, sys, threading
from grader.engine import sandbox

lockdown = sandbox.lock_down(None)
with sandbox.loading(lockdown):
    during = sys.gettrace() is not None or lockdown.monitored
    exec(compile("x = 1", "<answer cell 1>", "exec"), {})
seen = {}
def worker():
    seen["traced"] = sys.gettrace() is not None
thread = threading.Thread(target=worker)
thread.start()
thread.join()
monitoring = getattr(sys, "monitoring", None)
print(json.dumps({
    "main_traced": sys.gettrace() is not None,
    "watched_while_loading": during,
    "worker_traced": seen["traced"],
    "monitored": lockdown.monitored,
    "tool": monitoring.get_tool(sandbox.MONITORING_TOOL) if monitoring else None,
}))
"""


def probe() -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=COURSE, capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_serving_thread_runs_untraced_and_the_learners_code_stays_watched() -> None:
    found = probe()
    assert found["main_traced"] is False  # the thread that serves MCP pays nothing per call
    assert found["watched_while_loading"] is True  # the cells' top level runs in this thread
    if sys.version_info >= (3, 12):
        # one process-wide event for raised exceptions, filtered to the answer cells' frames
        assert found["monitored"] is True and found["tool"] == "learner host limits"
        assert found["worker_traced"] is False
    else:
        assert found["monitored"] is False
        assert found["worker_traced"] is True  # the threads that run the learner's calls
