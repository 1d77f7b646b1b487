"""``python -m servers.learner_host --lab LAB --code FILE``: serve a submission's code on stdio."""

import argparse
from pathlib import Path

from servers.learner_host.host import build_server, load_learner_code
from servers.toolkit import run_stdio

parser = argparse.ArgumentParser(prog="python -m servers.learner_host", description=__doc__)
parser.add_argument("--lab", required=True, help="The lab whose tools to serve, e.g. lab1_error_results.")
parser.add_argument("--code", required=True, type=Path, help="A Python file holding the learner's answer cells.")
options = parser.parse_args()
namespace, load_error = load_learner_code(options.lab, options.code.read_text(encoding="utf-8"))
run_stdio(build_server(options.lab, namespace, load_error=load_error))
