"""nbgrader's settings in every learner's pod (the learner image copies this to /etc/jupyter/nbgrader_config.py).

They must match the course's own labs/nbgrader_config.py: the same course id, the same exchange (the shared
volume every pod mounts there) and the same timezone.
"""

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file
c.CourseDirectory.course_id = "mcp-claude-code"
c.Exchange.root = "/srv/nbgrader/exchange"
c.Exchange.timezone = "UTC"
