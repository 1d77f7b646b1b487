"""The learner host: runs a learner's lab code behind MCP so trusted checks can call it.

The grader never imports learner code. At grading time the code of a submission's
answer cells runs only in this server's process, started over stdio; in a notebook
the same server is built in process around the kernel's namespace, so a learner's
own check run and the grader's run go through the same MCP calls.
"""

__all__ = ["build_server", "load_learner_code"]


def __getattr__(name: str):
    """The host's entry points, imported on first use: importing this package alone (for ``cells``, say) does not
    import the host and the MCP SDK."""
    if name in __all__:
        from servers.learner_host import host

        return getattr(host, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
