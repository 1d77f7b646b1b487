"""grader.labs.cases: the hypothesis searches behind the labs' hidden checks, as the grading process runs them,
several submissions at once in threads."""

from __future__ import annotations

import threading

from hypothesis import strategies as st
from hypothesis.configuration import storage_directory

from grader.labs import cases


def home() -> object:
    return storage_directory(intent_to_write=False).home_directory


def test_one_search_at_a_time_and_hypothesis_home_is_put_back() -> None:
    before = home()
    other: dict = {}
    blocked: list[bool] = []

    def second() -> None:
        other["found"] = cases.search(st.integers(0, 10), lambda n: n >= 3)

    def first_condition(n: int) -> bool:
        if not blocked:  # while the first search runs, a second one in another thread waits for it
            waiting = threading.Thread(target=second, daemon=True)
            waiting.start()
            waiting.join(1.0)
            blocked.append(waiting.is_alive())
            other["thread"] = waiting
        return n >= 5

    assert cases.search(st.integers(0, 10), first_condition) == 5
    other["thread"].join(60)

    assert blocked == [True], "a second search ran while the first was running"
    assert other["found"] == 3
    # Each search used a home folder of its own and put the one before it back.
    assert home() == before
