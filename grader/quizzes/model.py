"""What a quiz is: scenario questions with four options, a key, points, a theme and an explanation.

The questions and their keys live here, on the grading side, with the hidden checks: the notebook a
learner answers in is generated from them (``grader.quizzes.build``) and carries the questions and the
options, never the key or the explanations. Quizzes are keyed to the exam guide; where Claude Code (the
version the conformance tests pin) behaves differently, ``claude_code`` says what it does instead, and
feedback shows it with the explanation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The exam's themes, in the course's order: a question's ``theme`` is one of these keys.
THEMES: dict[str, str] = {
    "errors": "Structured tool errors",
    "scopes": "Server scopes",
    "expansion": "Variable expansion",
    "primitives": "Tools, resources and prompts",
    "integration": "Server integration",
}

LETTERS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class Question:
    id: str  # "q01", "q02", ... unique in its quiz, in order
    theme: str  # a key of THEMES
    text: str  # Markdown: the scenario and the question, without the options
    options: dict[str, str]  # exactly the letters A-D -> option text (Markdown, one line)
    answer: str  # the key: one of LETTERS, as the exam guide would answer
    explanation: str  # Markdown: why the key is right and the others wrong, citing a source by name (docs/sources.md)
    points: float = 1.0
    claude_code: str = ""  # where Claude Code behaves differently from the exam guide's answer: what it does instead

    def __post_init__(self) -> None:
        if self.theme not in THEMES:
            raise ValueError(f"{self.id}: unknown theme {self.theme!r}; one of {', '.join(THEMES)}")
        if tuple(self.options) != LETTERS:
            raise ValueError(f"{self.id}: options must be exactly {', '.join(LETTERS)}, in order")
        if self.answer not in LETTERS:
            raise ValueError(f"{self.id}: the key must be one of {', '.join(LETTERS)}")
        if self.points <= 0:
            raise ValueError(f"{self.id}: a question is worth more than 0 points")


@dataclass(frozen=True)
class Quiz:
    name: str  # the nbgrader assignment, e.g. "quiz01_structured_tool_errors" or "mock_exam"
    title: str  # e.g. "Quiz 1: Structured tool errors"
    intro: str  # Markdown shown above the first question
    questions: list[Question] = field(default_factory=list)

    def __post_init__(self) -> None:
        ids = [q.id for q in self.questions]
        if len(set(ids)) != len(ids):
            raise ValueError(f"{self.name}: question ids repeat")

    @property
    def max_score(self) -> float:
        return sum(q.points for q in self.questions)
