"""Inputs for the labs' checks: deterministic, small, and chosen to cover every variant.

A check tries the learner's code on many inputs of the same kind, not on one example, so a
mistake that hides in another key, another list shape or another value still shows:

- ``covering(seed, dimensions)``: a few cases in which every value of every dimension appears at
  least once, the others drawn with a fixed seed. For checks that pay one round trip per case.
- ``stored(path)`` and ``smallest_disagreement(...)``: cases a hypothesis search generated once
  (``grader.labs.generation``), judged all in one round trip, and on a disagreement shrunk to a
  smallest disagreeing case, a whole batch of simpler cases judged per round trip.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

# A shrink ends after this many rounds even if it could go on (each round is one round trip, and makes the case
# strictly simpler, so a shrink ends anyway; this bounds what it can cost).
SHRINK_ROUNDS = 40


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


def stored(path: Path) -> dict[str, list]:
    """The cases a lab stored, by kind (``grader.labs.generation.write_cases``)."""
    return json.loads(path.read_text(encoding="utf-8"))


def smallest_disagreement(
    cases: Sequence,
    disagree_all: Callable[[list], list[bool]],
    simpler: Callable[[Any], Iterable],
    order: Callable[[Any], tuple],
):
    """A smallest case on which the learner's code disagrees with the reference, or None when it agrees on all.

    ``disagree_all(cases)`` judges a list of cases in one round trip. Every case is judged first;
    on a disagreement, the simplest disagreeing case (by ``order``) is shrunk: all of its one-step
    simplifications (``simpler``) simpler by ``order`` are judged together, the simplest of those
    that still disagree is kept, and so on until none does. The result is the same on every run.
    """
    known: dict[str, bool] = {}  # each case judged once

    def judge(batch: list) -> list:
        fresh = [case for case in batch if repr(case) not in known]
        if fresh:
            for case, wrong in zip(fresh, disagree_all(fresh), strict=True):
                known[repr(case)] = bool(wrong)
        return [case for case in batch if known[repr(case)]]

    failing = judge(distinct(cases))
    if not failing:
        return None
    best = min(failing, key=order)
    for _ in range(SHRINK_ROUNDS):
        bound = order(best)
        found: dict[str, tuple] = {}
        for case in simpler(best):
            rank = order(case)
            if rank < bound:
                found.setdefault(repr(case), (rank, case))
        candidates = [case for _, case in sorted(found.values(), key=lambda pair: pair[0])]
        smaller = judge(candidates) if candidates else []
        if not smaller:
            break
        best = smaller[0]
    return best


def distinct(cases: Iterable) -> list:
    """The cases in their order, each once (a search may try one case more than once)."""
    seen: set[str] = set()
    return [case for case in cases if not (repr(case) in seen or seen.add(repr(case)))]
