"""The error the course's pipeline raises for bad input, apart from the pipeline so that the command line can catch
it without importing nbgrader before it starts its work (``autograde`` starts the fork server first)."""


class PipelineError(Exception):
    """A problem with the pipeline's input; the message says what to do."""
