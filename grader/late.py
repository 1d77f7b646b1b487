"""Late-submission penalties in points: a plugin for nbgrader's ``AssignLatePenalties`` step.

nbgrader's own ``LateSubmissionPlugin`` can only take nothing off or everything (``penalty_method`` 'none' or
'zero'). This one takes ``points`` off for each ``per`` (hour or day), or part of one, that a submission is
late, up to ``max_points``. nbgrader decides how late a submission is (its ``timestamp.txt`` against the lab's
due date in the gradebook), records the penalty, and shows it in the gradebook, formgrader, the feedback and
the CSV export; it never takes off more than the notebook scored. Set in the course's ``nbgrader_config.py``::

    c.AssignLatePenalties.plugin_class = "grader.late.LatePenalty"
    c.LatePenalty.points = 2
    c.LatePenalty.per = "day"
    c.LatePenalty.max_points = 10
"""

from __future__ import annotations

import math

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Enum, Float, TraitError, validate

SECONDS = {"hour": 3600, "day": 86400}


class LatePenalty(LateSubmissionPlugin):
    """``points`` off for each hour or day, or part of one, a submission is late; at most ``max_points``."""

    points = Float(0.0, help="Points taken off for each period (or part of one) a submission is late.").tag(config=True)
    per = Enum(tuple(SECONDS), default_value="day", help="The period: 'hour' or 'day'.").tag(config=True)
    max_points = Float(None, allow_none=True, help="The most points lateness can take off (None: no cap).").tag(
        config=True
    )

    @validate("points", "max_points")
    def _not_negative(self, proposal):
        value = proposal["value"]
        if value is not None and not 0 <= value < math.inf:
            raise TraitError(
                f"LatePenalty.{proposal['trait'].name} must be a number of points of 0 or more, not {value!r}"
            )
        return value

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float | None:
        if self.penalty_method == "zero":  # nbgrader's own setting, still honoured
            return super().late_submission_penalty(student_id, score, total_seconds_late)
        return penalty(total_seconds_late, self.points, self.per, self.max_points)


def penalty(seconds_late: float, points: float, per: str, max_points: float | None) -> float:
    """The points lost for being ``seconds_late``: ``points`` per started ``per``, capped at ``max_points``."""
    if seconds_late <= 0 or points <= 0:
        return 0.0
    lost = math.ceil(seconds_late / SECONDS[per]) * points
    return lost if max_points is None else min(lost, max_points)
