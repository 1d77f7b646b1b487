"""grader.labs.generation: the hypothesis searches that derive a lab's generated cases, and the file they are stored in.

A search leaves nothing behind and takes its turn with others in the same process; the stored file reads back as the
cases that were written, one per line."""

from __future__ import annotations

import subprocess
import sys
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


def test_grading_needs_no_hypothesis_and_deriving_cases_without_it_says_what_to_install() -> None:
    """hypothesis is the test extra's: a grader without it grades lab 2 (whose hidden checks read the stored cases and
    shrink a wrong answer's case within them), and only the maintainers' derivation of the cases refuses, naming the
    extra."""
    probe = (
        "import sys\n"
        "sys.modules['hypothesis'] = None  # as where it is not installed\n"
        "from grader.content import SAMPLE_SUBMISSIONS\n"
        "from grader.engine.grading import grade_code\n"
        "from grader.notebook import answer_code, read_notebook\n"
        "import grader.cli, grader.pipeline, grader.course, grader.report\n"
        "lab = 'lab2_scopes_expansion'\n"
        "for sample in ('solution', 'bare_dollar_expanded'):  # a wrong answer's smallest case is found too\n"
        "    code = answer_code(read_notebook(SAMPLE_SUBMISSIONS / sample / lab / f'{lab}.ipynb'))\n"
        "    results = grade_code(lab, code)\n"
        "    print(sum(r.points for r in results if r.passed), sum(r.points for r in results))\n"
        "try:\n"
        "    import grader.labs.lab2_strategies\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    solution, wrong, refusal = out.stdout.split("\n", 2)
    scored, out_of = map(float, solution.split())
    wrong_scored, _ = map(float, wrong.split())

    assert scored == out_of > 0
    assert 0 < wrong_scored < out_of
    assert "pip install -e '.[test]'" in refusal
