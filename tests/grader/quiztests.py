"""A small quiz for the engine's tests, and helpers to grade a quiz notebook through the real nbgrader steps.

``sample_quiz(name)`` stands in for a registered quiz whose questions are not the point of a test (the
``use_sample_quiz`` fixture of a test points the registry at it); the per-quiz tests use the real ones.
"""

from __future__ import annotations

import copy

import nbformat

from grader.quizzes.model import Question, Quiz

EXPLAINED = "Because the exam guide says so"  # every explanation of the sample starts with it


def sample_quiz(name: str) -> Quiz:
    themes = ["errors", "scopes", "expansion", "errors"]
    return Quiz(
        name=name,
        title="Sample quiz: the engine's test",
        intro="Four questions, café and 日本語 included, to test the engine.",
        questions=[
            Question(
                id=f"q{n:02d}",
                theme=theme,
                text=f"Scenario {n}: which option is the best one? (café {n})",
                options={"A": f"Option A{n}", "B": f"Option B{n}", "C": f"Option C{n}", "D": f"Option D{n}"},
                answer="ABCD"[n % 4],
                explanation=f"{EXPLAINED} (explanation {n}); *Exam guide › Exam emphases*.",
                points=2.0 if n == 2 else 1.0,
                claude_code="Claude Code keeps the text and warns." if n == 3 else "",
            )
            for n, theme in enumerate(themes, start=1)
        ],
    )


QUIZ = sample_quiz("quiz01_structured_tool_errors")


def answered(nb: nbformat.NotebookNode, letters: dict[str, str]) -> nbformat.NotebookNode:
    """The released notebook with these letters written in, as a learner writes them."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in letters:
            cell.source = f'answer("{grade_id}", "{letters[grade_id]}")'
    return nb
