"""grader.labs.generation: the hypothesis searches that derive a lab's generated cases, and the file they are stored in.

A search leaves nothing behind and takes its turn with others in the same process; the stored file reads back as the
cases that were written, one per line."""

from __future__ import annotations

import threading

from hypothesis import strategies as st
from hypothesis.configuration import storage_directory

from grader.labs import cases, generation


def home() -> object:
    return storage_directory(intent_to_write=False).home_directory


def test_one_search_at_a_time_and_hypothesis_home_is_put_back() -> None:
    before = home()
    other: dict = {}
    blocked: list[bool] = []

    def second() -> None:
        other["found"] = generation.search(st.integers(0, 10), lambda n: n >= 3)

    def first_condition(n: int) -> bool:
        if not blocked:  # while the first search runs, a second one in another thread waits for it
            waiting = threading.Thread(target=second, daemon=True)
            waiting.start()
            waiting.join(1.0)
            blocked.append(waiting.is_alive())
            other["thread"] = waiting
        return n >= 5

    assert generation.search(st.integers(0, 10), first_condition) == 5
    other["thread"].join(60)

    assert blocked == [True], "a second search ran while the first was running"
    assert other["found"] == 3
    # Each search used a home folder of its own and put the one before it back.
    assert home() == before


def test_generated_lists_the_cases_in_the_searchs_order_the_same_every_time() -> None:
    strategy = st.tuples(st.integers(0, 9), st.sampled_from(["a", "b"]))
    first = generation.generated(strategy)
    assert first == generation.generated(strategy)
    assert len(first) > 10
    assert first[0] == (0, "a")  # a search starts from the simplest case
    assert len(cases.distinct(first)) == len(set(first))


def test_stored_cases_read_back_as_written_with_the_hypothesis_that_made_them(tmp_path) -> None:
    kinds = {"one": [(("${V}", "y"), {"V": "1"}, True)], "two": [({}, {"a": {"url": ""}}, {}, {}), ({}, {}, {}, {})]}
    path = tmp_path / "cases.json"
    generation.write_cases(path, kinds)

    back = cases.stored(path)
    assert back["hypothesis"] == generation.hypothesis_version()
    assert back["one"] == [[["${V}", "y"], {"V": "1"}, True]]
    assert back["two"] == [[{}, {"a": {"url": ""}}, {}, {}], [{}, {}, {}, {}]]
    # One case per line, so that a change of the cases reads as a diff of cases.
    assert len(path.read_text().splitlines()) == 2 + 2 + 1 + 2 + 2 + 1
