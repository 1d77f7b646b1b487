"""nbgrader configuration for the course; run nbgrader commands from this folder.

The settings live in grader.course.configure, shared with `python -m grader`.
"""

from grader.course import configure

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file
configure(c)
