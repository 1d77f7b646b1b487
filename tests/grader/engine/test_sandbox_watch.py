"""Where the learner host watches for memory and file-size errors: the learner's code only.

A watch on every Python call (a trace function in the thread that serves MCP) doubled a host's CPU. The serving
thread runs untraced, and so does the cells' load. From Python 3.12 one process-wide event for raised exceptions
watches the answer cells' frames in every thread (``test_grading_limits``: a MemoryError the learner catches still
ends the host); on 3.11 each cell's top level, and what the SDK hands the worker threads, runs under ``escaping``. The
lockdown cannot be undone in a process, so each case runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader.engine.supervisor import EXIT_MEMORY

COURSE = Path(__file__).resolve().parents[3]

PROBE = """
import json, sys, threading
from grader.engine import sandbox

lockdown = sandbox.lock_down(None)
with sandbox.loading(lockdown):
    during = sys.gettrace() is not None
    run_cell = sandbox.cell_runner(lockdown)
    run_cell(compile("x = 1", "<answer cell 1>", "exec"), {})
seen = {}
def worker():
    seen["traced"] = sys.gettrace() is not None
thread = threading.Thread(target=worker)
thread.start()
thread.join()
import anyio.to_thread
monitoring = getattr(sys, "monitoring", None)
print(json.dumps({
    "main_traced": sys.gettrace() is not None,
    "traced_while_loading": during,
    "cells_run": "exec" if run_cell is exec else getattr(getattr(run_cell, "func", None), "__name__", repr(run_cell)),
    "worker_traced": seen["traced"],
    "monitored": lockdown.monitored,
    "tool": monitoring.get_tool(sandbox.MONITORING_TOOL) if monitoring else None,
    "workers_run_escaping": anyio.to_thread.run_sync.__name__ == "run_sync_escaping",
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
    # nor the cells' load: a trace there slowed the SDK's code the cells call (a learner's server builds its tools)
    assert found["traced_while_loading"] is False
    if sys.version_info >= (3, 12):
        # one process-wide event for raised exceptions, filtered to the answer cells' frames
        assert found["monitored"] is True and found["tool"] == "learner host limits"
        assert found["workers_run_escaping"] is False
        assert found["cells_run"] == "exec"
    else:
        assert found["monitored"] is False
        assert found["workers_run_escaping"] is True  # the functions the worker threads run (the learner's)
        assert found["cells_run"] == "escaping"  # and each cell's top level
    assert found["worker_traced"] is False  # a trace there slowed the kit code the learner's functions call


ESCAPING = """
import json, sys
from grader.engine import sandbox
lockdown = sandbox.lock_down(None)
sys.settrace(None)  # as after the cells load: only escaping watches what follows
if lockdown.monitored:
    sys.monitoring.set_events(sandbox.MONITORING_TOOL, 0)
namespace = {}
exec(compile("def hoard(kind):\\n    raise kind('no room')\\n", "<answer cell 1>", "exec"), namespace)
def kit(kind):
    raise kind("no room")
outcome = {}
for name, run in (("kit", kit), ("value", namespace["hoard"])):
    try:
        sandbox.escaping(run, ValueError)
    except ValueError:
        outcome[name] = "raised"
try:
    sandbox.escaping(kit, MemoryError)
except MemoryError:
    outcome["kit memory"] = "raised"  # not the learner's: not the limit
print(json.dumps(outcome), flush=True)
sandbox.escaping(namespace["hoard"], MemoryError)
print("still running")
"""


def test_a_memory_error_escaping_the_learners_function_is_the_limit_and_no_other_error_is() -> None:
    done = subprocess.run([sys.executable, "-c", ESCAPING], cwd=COURSE, capture_output=True, text=True, timeout=60)
    assert json.loads(done.stdout.splitlines()[0]) == {"kit": "raised", "value": "raised", "kit memory": "raised"}
    assert "still running" not in done.stdout
    assert done.returncode == EXIT_MEMORY


DROPPED = """
import json, sys
{before}
from grader.engine import sandbox
{between}
lockdown = sandbox.lock_down(None)
left = sorted(name for name in sys.modules if name == "grader" or name.startswith("grader."))
print(json.dumps({{"walked": lockdown.walked, "left": left}}))
"""


@pytest.mark.parametrize(
    "before, between, walked",
    [
        # a fork server's: everything imported, then remembered
        ("from grader.engine import forkserver\nforkserver.warm()", "", False),
        # a module of the grader loaded after that: every name is read again, and it is dropped too
        ("from grader.engine import forkserver\nforkserver.warm()", "import grader.decisions", True),
        # a host started as a new program: nothing remembered
        ("import grader.decisions", "", True),
    ],
    ids=["remembered", "loaded-since", "new-program"],
)
def test_the_lockdown_drops_every_module_of_the_grader_but_its_own_however_it_finds_them(
    before: str, between: str, walked: bool
) -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-c", DROPPED.format(before=before, between=between)],
        cwd=COURSE,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"walked": walked, "left": ["grader.engine.sandbox", "grader.engine.supervisor"]}


LEARNER_CALLS = """
import json, sys
from grader.engine import sandbox
from servers.learner_host import calls

lockdown = sandbox.lock_down(None)
sandbox.watch_learner_calls(lockdown)
namespace = {"sys": sys}
exec(compile("def answer():\\n    return sys.gettrace() is not None\\n", "<answer cell 1>", "exec"), namespace)
print(json.dumps({
    "monitored": lockdown.monitored,
    "learner_traced": calls.call_learner(namespace, "answer"),
    "harness_traced_after": sys.gettrace() is not None,
    "runs_directly": calls._run_learner is calls.run_directly,
}))
"""


def test_only_the_learners_function_runs_under_the_trace_not_the_harness_around_it() -> None:
    """On Python 3.11 a harness tool's call of the learner's function runs under the trace, and the handler around it
    does not (a trace there paid a Python call for every call the harness made); from 3.12 nothing is traced."""
    done = subprocess.run(
        [sys.executable, "-P", "-c", LEARNER_CALLS], cwd=COURSE, capture_output=True, text=True, timeout=60, check=True
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["harness_traced_after"] is False
    if sys.version_info >= (3, 12):
        assert found == {**found, "monitored": True, "learner_traced": False, "runs_directly": True}
    else:
        assert found == {**found, "monitored": False, "learner_traced": True, "runs_directly": False}
