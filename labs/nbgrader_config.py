"""nbgrader configuration of the course: nbgrader's own commands (run from this folder) and `python -m grader`
both read it, so what is set here holds for both.

The grading engine's steps come from grader.course.configure; everything else is the course's to set.
"""

from grader.course import configure

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file
configure(c)

# The course's id: the exchange keeps the course's labs and submissions under it.
c.CourseDirectory.course_id = "mcp-claude-code"

# Where labs are released to and collected from (`python -m grader release LAB --exchange`, `collect LAB`);
# nbgrader's default is /usr/local/share/nbgrader/exchange.
# c.Exchange.root = "/srv/nbgrader/exchange"

# The timezone due dates without one are read in (`release LAB --due "2026-12-10 17:00"`) and shown in
# (nbgrader's formgrader too), and the one learners' submission times are recorded in.
c.NbGraderAPI.timezone = "UTC"
c.Exchange.timezone = "UTC"

# Late submissions lose points for each day (or hour) or part of one past the lab's due date, up to a cap
# (grader.late.LatePenalty; nbgrader's own plugin knows only "none" and "zero"). 0 points: no penalty.
c.AssignLatePenalties.plugin_class = "grader.late.LatePenalty"
c.LatePenalty.points = 0.0
c.LatePenalty.per = "day"
# c.LatePenalty.max_points = 10
