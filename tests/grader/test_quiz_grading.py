"""Reading a quiz answer cell without running it: what counts as an answer, and what a hostile cell gets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from quiztests import sample_quiz

from grader.quizzes.grading import MAX_CELL_CHARS, Reading, by_theme, grade, read_answer


@pytest.mark.parametrize(
    ("source", "letter"),
    [
        ('answer("q01", "B")', "B"),
        ('answer("q01", "b")', "B"),
        ("answer('q01', ' c ')", "C"),
        ('answer(question_id="q01", letter="D")', "D"),
        ('answer("q01", letter="A")', "A"),
        ('from labkit.quiz import answer\n# my pick\nanswer("q01", "A")', "A"),
        ('answer("q01", "A")\nanswer("q01", "C")', "C"),  # the last call wins
        ('answer("q01", "A")\nanswer("q02", "C")', "A"),  # another question's call is not this one's
        ('answer("q01", "A"); x = 1', "A"),
    ],
)
def test_a_literal_call_is_the_answer(source: str, letter: str) -> None:
    assert read_answer(source, "q01") == Reading(letter=letter)


def test_the_released_cell_is_not_answered_and_says_nothing_is_wrong() -> None:
    assert read_answer('answer("q01", "")', "q01") == Reading()


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ('answer("q01", "E")', "'E' is not one of A, B, C, D"),
        ('answer("q01", "AB")', "'AB' is not one of A, B, C, D"),
        ('answer("q01", "B"', "not valid Python"),
        ('letter = "B"\nanswer("q01", letter)', 'no call answer("q01", "<letter>")'),
        ('answer("q01", f"{chr(66)}")', 'no call answer("q01", "<letter>")'),
        ('answer("q01", "b".upper())', 'no call answer("q01", "<letter>")'),
        ('answer("q01", *["B"])', 'no call answer("q01", "<letter>")'),
        ('answer("q01", "B", "C")', 'no call answer("q01", "<letter>")'),
        ('for _ in range(1):\n    answer("q01", "B")', 'no call answer("q01", "<letter>")'),
        ('labkit.quiz.answer("q01", "B")', 'no call answer("q01", "<letter>")'),
        ('answer("q02", "B")', 'no call answer("q01", "<letter>")'),
        ('answer(b"q01", b"B")', 'no call answer("q01", "<letter>")'),
        ('answer("q01", "B")' + " " * MAX_CELL_CHARS, "longer than"),
        ("(" * 4000 + "1" + ")" * 4000, "not valid Python"),
        ("-" * 9990 + "1", "not valid Python"),
        # Too deep for Python 3.11's and 3.12's parser; Python 3.13 reads it, and finds no answer in it.
        ("a." * 4990 + "b", "not valid Python" if sys.version_info < (3, 13) else 'no call answer("q01", "<letter>")'),
        ("\0", "not valid Python"),
    ],
)
def test_anything_else_is_not_answered_and_says_why(source: str, why: str) -> None:
    reading = read_answer(source, "q01")
    assert reading.letter == ""
    assert why in reading.problem


def test_a_cell_is_never_run(tmp_path: Path) -> None:
    """A cell that would write a file, run or import anything if executed: its letter is read, nothing happens."""
    target = tmp_path / "written"
    source = (
        f"open({str(target)!r}, 'w').write('ran')\n"
        f"__import__('pathlib').Path({str(target)!r}).write_text('ran')\n"
        "import os; os.system('touch ' + " + repr(str(target)) + ")\n"
        'answer("q01", "B")\n'
    )
    assert read_answer(source, "q01") == Reading(letter="B")
    assert not target.exists()
    # And the proof that it would: the same cell, run, writes the file.
    subprocess.run([sys.executable, "-c", "answer = lambda *a: None\n" + source], check=True)
    assert target.exists()


def test_points_per_question_and_per_theme() -> None:
    quiz = sample_quiz("quiz01_structured_tool_errors")
    key = {q.id: f'answer("{q.id}", "{q.answer}")' for q in quiz.questions}
    verdicts = grade(quiz, {**key, "q02": 'answer("q02", "A")', "q04": "nonsense("})
    assert [v.score for v in verdicts] == [1.0, 0.0, 1.0, 0.0]
    assert [(t.title, t.score, t.max_score) for t in by_theme(verdicts)] == [
        ("Structured tool errors", 1.0, 2.0),
        ("Server scopes", 0.0, 2.0),
        ("Variable expansion", 1.0, 1.0),
    ]
    shown = verdicts[2].text()
    assert "right (1 of 1 point)" in shown and "Because the exam guide says so (explanation 3)" in shown
    assert "Claude Code 2.1.332 does this instead: Claude Code keeps the text and warns." in shown
    assert "wrong (0 of 2 points)" in verdicts[1].text() and "Your answer: A. The answer: C." in verdicts[1].text()
    assert "not answered" in verdicts[3].text() and "not valid Python" in verdicts[3].text()
