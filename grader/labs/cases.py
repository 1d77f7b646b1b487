"""Generated inputs for the labs' checks: deterministic, small, and chosen to cover every variant.

A check tries the learner's code on many inputs of the same kind, not on one example, so a
mistake that hides in another key, another list shape or another value still shows:

- ``covering(seed, dimensions)``: a few cases in which every value of every dimension appears at
  least once, the others drawn with a fixed seed. For checks that pay one round trip per case.
- ``generated(strategy)`` and ``smallest_disagreement(...)``: a hypothesis search, derandomized,
  judged in one round trip and shrunk to the smallest case only on a disagreement.

Grading leaves nothing on disk where it runs: hypothesis keeps no example database here
(``database=None``), and the cache it writes of the constants in local source files goes to a
folder of its own that is removed as soon as the search ends (``quiet_hypothesis``).
"""

from __future__ import annotations

import random
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.configuration import set_hypothesis_home_dir, storage_directory
from hypothesis.errors import NoSuchExample

SEARCH = settings(
    derandomize=True,
    database=None,
    max_examples=150,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.generate, Phase.shrink],
)


def covering(seed: int, dimensions: Mapping[str, Sequence[Any]], cases: int | None = None) -> list[dict[str, Any]]:
    """``cases`` cases (at least the size of the largest dimension), each a dict with one value per
    dimension, such that every value of every dimension appears in some case; the same every run."""
    rng = random.Random(seed)
    n = max([len(values) for values in dimensions.values()] + [cases or 0])
    columns = {}
    for name, values in dimensions.items():
        column = list(values)
        rng.shuffle(column)
        columns[name] = column + [rng.choice(list(values)) for _ in range(n - len(column))]
    return [{name: column[i] for name, column in columns.items()} for i in range(n)]


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


# One search at a time in a process: the grading process grades several submissions at once in threads, and
# hypothesis's home folder (``quiet_hypothesis``) is the whole process's.
_SEARCHING = threading.Lock()


def search(strategy, condition: Callable[[Any], bool]):
    """The smallest case of ``strategy`` on which ``condition`` holds, or None (derandomized, nothing kept on disk)."""
    with _SEARCHING, quiet_hypothesis():
        try:
            return find(strategy, condition, settings=SEARCH)
        except NoSuchExample:
            return None


@cache
def generated(strategy) -> list:
    """The cases the search tries, in its order (the same every run: derandomized, so computed once per process)."""
    cases: list = []

    def record(case) -> bool:
        cases.append(case)
        return False

    search(strategy, record)
    return cases


def smallest_disagreement(strategy, disagrees: Callable[[Any], bool], agree_all: Callable[[list], bool] | None = None):
    """The smallest generated case on which ``disagrees`` holds, or None.

    ``agree_all(cases)``, when given, judges every generated case in one round trip first; only
    when some case disagrees does the search run case by case to shrink it.
    """
    if agree_all is not None and agree_all(generated(strategy)):
        return None
    return search(strategy, disagrees)
