"""``python -m servers.learner_host --lab LAB --code FILE``: serve a submission's code on stdio.

Grading does not start the host this way: it runs ``python -m grader.engine.lockedhost``, which locks the
host down before the answer cells load, then serves it exactly as here.
"""

import argparse
from pathlib import Path

from servers.learner_host.host import load_learner_code, serve

parser = argparse.ArgumentParser(prog="python -m servers.learner_host", description=__doc__)
parser.add_argument("--lab", required=True, help="The lab whose tools to serve, e.g. lab1_error_results.")
parser.add_argument("--code", required=True, type=Path, help="A Python file holding the learner's answer cells.")
options = parser.parse_args()
namespace, load_error = load_learner_code(options.lab, options.code.read_text(encoding="utf-8"))
serve(options.lab, namespace, load_error)
