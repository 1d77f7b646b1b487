"""The in-notebook side of a quiz: record an answer.

A quiz notebook's answer cell calls ``answer("q01", "B")``. Nothing is checked here, and there is no key on
this side: the grader reads the letter in each answer cell when the notebook is submitted, and the feedback
explains every answer.
"""

from __future__ import annotations

LETTERS = ("A", "B", "C", "D")


def _number(question_id: str) -> str:
    digits = question_id[1:] if question_id[:1] in ("q", "Q") else ""
    return str(int(digits)) if digits.isdigit() else question_id


def answer(question_id: str, letter: str) -> None:
    """Record ``letter`` (A, B, C or D; "" while you have not answered) as your answer to ``question_id``."""
    if not isinstance(question_id, str) or not isinstance(letter, str):
        print('Not recorded: write the question id and the letter in quotes, for example answer("q01", "B").')
        return
    shown = letter.strip().upper()
    question = f"Question {_number(question_id)}"
    if not shown:
        print(f"{question}: not answered yet. Put A, B, C or D between the quotes and run this cell again.")
        return
    if shown not in LETTERS:
        print(
            f"{question}: {letter!r} is not an answer, so nothing is recorded: write A, B, C or D between the quotes."
        )
        return
    print(
        f"{question}: your answer {shown} is recorded. It is graded when you submit; the feedback explains every answer."
    )
