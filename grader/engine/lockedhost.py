"""``python -m grader.engine.lockedhost --lab LAB --code FILE``: the learner host, locked down.

What grading starts under the supervisor for each submission: the learner host of ``servers.learner_host``,
with ``sandbox``'s lockdown switched on after the host has imported what it needs and before the answer
cells load (each cell's top level under ``--cell-seconds``). The host itself knows nothing of the engine.
"""

import argparse
from pathlib import Path

from grader.engine import sandbox
from servers.learner_host.host import call_here, load_learner_code, serve

parser = argparse.ArgumentParser(prog="python -m grader.engine.lockedhost", description=__doc__)
parser.add_argument("--lab", required=True, help="The lab whose tools to serve, e.g. lab1_error_results.")
parser.add_argument("--code", required=True, type=Path, help="A Python file holding the learner's answer cells.")
parser.add_argument(
    "--cell-seconds", type=float, default=None, help="How long the top level of one answer cell may run while it loads."
)
options = parser.parse_args()
code = options.code.read_text(encoding="utf-8")
sandbox.prepare(options.lab)
lockdown = sandbox.lock_down(options.cell_seconds)
with sandbox.loading(lockdown):
    namespace, load_error = load_learner_code(options.lab, code, sandbox.cell_runner(lockdown))
sandbox.watch_learner_calls(lockdown)
serve(options.lab, namespace, load_error, call_here)
