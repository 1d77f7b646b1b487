"""The learner host: runs a learner's lab code behind MCP so trusted checks can call it.

The grader never imports learner code. At grading time the code of a submission's
answer cells runs only in this server's process, started over stdio; in a notebook
the same server is built in process around the kernel's namespace, so a learner's
own check run and the grader's run go through the same MCP calls.
"""

from servers.learner_host.host import build_server, load_learner_code

__all__ = ["build_server", "load_learner_code"]
