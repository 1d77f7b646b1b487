"""labkit.quiz: the learner's side of a quiz records a letter, says so, and knows no key."""

from __future__ import annotations

import ast
import inspect

import pytest

import labkit.quiz
from labkit.quiz import answer


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("q01", "B"),
            "Question 1: your answer B is recorded. It is graded when you submit; the feedback explains every answer.",
        ),
        (
            ("q12", " d "),
            "Question 12: your answer D is recorded. It is graded when you submit; the feedback explains every answer.",
        ),
        (("q02", ""), "Question 2: not answered yet. Put A, B, C or D between the quotes and run this cell again."),
        (
            ("q03", "E"),
            "Question 3: 'E' is not an answer, so nothing is recorded: write A, B, C or D between the quotes.",
        ),
        (("q04", 2), 'Not recorded: write the question id and the letter in quotes, for example answer("q01", "B").'),
    ],
)
def test_answer_says_what_it_recorded(capsys, args, said: str) -> None:
    assert answer(*args) is None
    assert capsys.readouterr().out == said + "\n"


def test_no_key_on_the_learners_side() -> None:
    tree = ast.parse(inspect.getsource(labkit.quiz))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert all(name == "__future__" for name in imported), imported
