"""What a learner installs for the labs: ``Lab`` (``lab.check``), the labs' visible checks and the vocabulary
of checks. It holds no reference solution and no hidden check; those are the grader's (``grader.labs``)."""

from labkit.lab import Lab

__all__ = ["Lab"]
