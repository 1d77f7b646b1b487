"""``python -m servers.learner_host --lab LAB --code FILE``: serve a submission's code on stdio."""

import argparse
import os
import sys
from pathlib import Path

from servers.learner_host.host import build_server, load_learner_code
from servers.toolkit import run_stdio

parser = argparse.ArgumentParser(prog="python -m servers.learner_host", description=__doc__)
parser.add_argument("--lab", required=True, help="The lab whose tools to serve, e.g. lab1_error_results.")
parser.add_argument("--code", required=True, type=Path, help="A Python file holding the learner's answer cells.")
parser.add_argument(
    "--sandbox",
    action="store_true",
    help="Lock the host down before the answer cells run (grading does): see grader/engine/sandbox.py.",
)
parser.add_argument(
    "--cell-seconds",
    type=float,
    default=None,
    help="With --sandbox: how long the top level of one answer cell may run while it loads.",
)
options = parser.parse_args()
code = options.code.read_text(encoding="utf-8")
if options.sandbox:
    from grader.engine import sandbox

    sandbox.prepare(options.lab)
    lockdown = sandbox.lock_down(options.cell_seconds)
    with sandbox.loading(lockdown):
        namespace, load_error = load_learner_code(options.lab, code)
else:
    namespace, load_error = load_learner_code(options.lab, code)
try:
    run_stdio(build_server(options.lab, namespace, load_error=load_error))
except SystemExit as exc:  # sys.exit in a tool of a learner-written server ends the serving loop from inside
    status = exc.code if isinstance(exc.code, int) else 1
else:
    status = 0
# End now: a worker thread still running learner code (a handler that loops, or one the exit cut
# short) must not keep the process alive after its session is over.
sys.stdout.flush()
sys.stderr.flush()
os._exit(status)
