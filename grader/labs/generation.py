"""Deriving a lab's generated cases with hypothesis, once: the grader reads them from a file and never runs hypothesis.

A maintainers' tool: hypothesis comes with the course's ``test`` extra, not with what learners and graders install.

A lab's strategies (``grader.labs.lab2_strategies``) describe the cases; ``generated(strategy)`` lists
the cases a derandomized search tries, in its order, the same on every run of the same hypothesis.
The lab's module stores them (``write_cases``), and a test fails when the stored cases are not what
the strategies give today. Grading then costs no search per process (hypothesis's import and the
generation were about a second of CPU in every grading process) and no search per wrong answer.

Nothing is left on disk where it runs: hypothesis keeps no example database (``database=None``),
and the cache it writes of the constants in local source files goes to a folder of its own that is
removed as soon as the search ends (``quiet_hypothesis``).
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import hypothesis
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis import strategies as st  # noqa: F401 - the labs' strategies are written with it
    from hypothesis.configuration import set_hypothesis_home_dir, storage_directory
    from hypothesis.errors import NoSuchExample
except ImportError as missing:
    raise ImportError(
        "Deriving a lab's stored cases needs hypothesis, which the course's test extra installs: "
        "pip install -e '.[test]'. Grading reads the stored cases and does not need it."
    ) from missing

SEARCH = settings(
    derandomize=True,
    database=None,
    max_examples=150,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.generate, Phase.shrink],
)


@contextmanager
def quiet_hypothesis():
    """Hypothesis's own files go to a folder that is removed afterwards, not to ``.hypothesis/`` in the working folder."""
    before = storage_directory(intent_to_write=False).home_directory
    with tempfile.TemporaryDirectory(prefix="grader-hypothesis-") as home:
        set_hypothesis_home_dir(home)
        try:
            yield
        finally:
            set_hypothesis_home_dir(before)


# One search at a time in a process: hypothesis's home folder (``quiet_hypothesis``) is the whole process's.
_SEARCHING = threading.Lock()


def search(strategy, condition: Callable[[Any], bool]):
    """The smallest case of ``strategy`` on which ``condition`` holds, or None (derandomized, nothing kept on disk)."""
    with _SEARCHING, quiet_hypothesis():
        try:
            return find(strategy, condition, settings=SEARCH)
        except NoSuchExample:
            return None


def generated(strategy) -> list:
    """The cases the search tries, in its order (the same every run: derandomized)."""
    cases: list = []

    def record(case) -> bool:
        cases.append(case)
        return False

    search(strategy, record)
    return cases


def write_cases(path: Path, kinds: dict[str, list]) -> None:
    """Each kind's cases, one per line (tuples as JSON lists), so that a change reads as a diff of cases, and the
    hypothesis that made them."""
    lines = ["{", f'  "hypothesis": {json.dumps(hypothesis_version())},']
    for k, (kind, cases) in enumerate(kinds.items()):
        lines.append(f"  {json.dumps(kind)}: [")
        lines.extend(
            f"    {json.dumps(case, ensure_ascii=False)}{',' if i < len(cases) - 1 else ''}"
            for i, case in enumerate(cases)
        )
        lines.append("  ]" + ("," if k < len(kinds) - 1 else ""))
    lines.append("}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def hypothesis_version() -> str:
    return hypothesis.__version__
