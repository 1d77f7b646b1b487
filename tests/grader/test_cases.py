"""grader.labs.cases: covering cases, and the shrink of a disagreement to a smallest case, a batch per round trip.

The shrink is tried on integers and lists, where the smallest disagreeing case is known: it is found, every batch is
one call of ``disagree_all``, a learner who agrees everywhere costs exactly one call, and a case is never judged twice.
"""

from __future__ import annotations

from grader.labs import cases


def shrink_lists(case: tuple) -> list[tuple]:
    """Each element left out, or lowered by one."""
    out = [case[:i] + case[i + 1 :] for i in range(len(case))]
    out += [case[:i] + (value - 1,) + case[i + 1 :] for i, value in enumerate(case) if value > 0]
    return out


def by_size(case: tuple) -> tuple:
    return len(case), sum(case), repr(case)


class Judge:
    """A learner's code that is wrong on every list with an element of at least ``bad``; counts its round trips."""

    def __init__(self, bad: int) -> None:
        self.bad = bad
        self.calls: list[list[tuple]] = []

    def __call__(self, batch: list[tuple]) -> list[bool]:
        self.calls.append(batch)
        return [any(value >= self.bad for value in case) for case in batch]


GENERATED = [(9, 1, 4), (0,), (3, 8), (), (12, 12, 2), (5,)]


def test_a_learner_that_agrees_everywhere_costs_one_round_trip() -> None:
    judge = Judge(bad=100)
    assert cases.smallest_disagreement(GENERATED, judge, shrink_lists, by_size) is None
    assert judge.calls == [GENERATED]


def test_a_disagreement_is_shrunk_to_the_smallest_case() -> None:
    judge = Judge(bad=7)
    assert cases.smallest_disagreement(GENERATED, judge, shrink_lists, by_size) == (7,)
    # The generated cases in one call, then one call per step, each of simpler cases only, none judged twice.
    assert judge.calls[0] == GENERATED
    judged = [repr(case) for batch in judge.calls for case in batch]
    assert len(judged) == len(set(judged))
    for batch in judge.calls[1:]:
        assert batch == sorted(batch, key=by_size)
    assert len(judge.calls) <= 8


def test_the_shrink_starts_from_the_simplest_disagreeing_generated_case() -> None:
    judge = Judge(bad=3)
    cases.smallest_disagreement(GENERATED, judge, shrink_lists, by_size)
    # (5,) is the simplest of those that disagree: the first simpler cases judged are its own, but () which was
    # judged with the generated cases.
    assert judge.calls[1] == [(4,)]


def test_the_shrink_ends_within_its_rounds_even_if_every_case_disagrees(monkeypatch) -> None:
    monkeypatch.setattr(cases, "SHRINK_ROUNDS", 3)
    judge = Judge(bad=0)
    found = cases.smallest_disagreement([(50, 50, 50)], judge, shrink_lists, by_size)
    assert len(judge.calls) == 1 + 3
    assert by_size(found) < by_size((50, 50, 50))


def test_covering_cases_show_every_value_of_every_dimension() -> None:
    dimensions = {"status": ["paid", "shipped", "refunded"], "email": ["a", "b"], "page": [1, 2, 3, 4]}
    made = cases.covering(7, dimensions)
    assert len(made) == 4
    for name, values in dimensions.items():
        assert {case[name] for case in made} == set(values)
    assert made == cases.covering(7, dimensions)
