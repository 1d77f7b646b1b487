"""Where the course's content is: the lessons, the nbgrader course (the labs' sources and its configuration) and
the sample submissions the demo grades.

Run from a checkout (an editable install included), they are the checkout's own folders. An installed package
(``pip install .``, a wheel) carries a copy of them in ``grader/_content``, laid out as in the checkout, which the
build puts there (setup.py); the copy is never committed. Every path of the course's content is taken from here.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

# What the package carries, as paths relative to the checkout's root: setup.py copies each into PACKAGED.
CONTENT = ("notebooks", "labs/nbgrader_config.py", "labs/source", "tests/submissions")
# Left out of the copy: caches, and the script that regenerates the sample submissions in a checkout.
NOT_CONTENT = ("__pycache__", "*.pyc", ".ipynb_checkpoints", "make_samples.py")
# The copy's folder inside the grader package.
PACKAGED = "_content"

_packaged = Path(str(files("grader") / PACKAGED))
# The checkout the course runs from, or None when it runs from an installed package.
CHECKOUT = None if _packaged.is_dir() else Path(__file__).resolve().parents[1]
ROOT = CHECKOUT or _packaged

LESSONS = ROOT / "notebooks"
COURSE = ROOT / "labs"
SAMPLE_SUBMISSIONS = ROOT / "tests" / "submissions"
# The course folder an installed course's commands use when no --course is given: this folder under the working
# folder, made from the package's copy on the first release. The package's own copy is never written to.
WORKING_COURSE = "labs"


def default_course() -> Path:
    """The course folder commands use when none is given: the checkout's ``labs/``; for an installed course,
    ``./labs`` in the working folder (``WORKING_COURSE``), never the copy inside the package."""
    return COURSE if CHECKOUT is not None else Path.cwd() / WORKING_COURSE
