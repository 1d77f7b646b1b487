"""Grading a quiz: the answers read from the submitted notebook without running it, each scored against the key.

An answer cell holds ``answer("q01", "B")``. Its source is parsed (``ast.parse``), never executed: only a
statement of its own that calls ``answer`` with two literal strings counts, the first being the cell's own
question id; the last such call in the cell wins. Anything else (another expression, a name, an f-string, a
call hidden in a loop, a syntax error, a cell too large or too deeply nested to parse) leaves the question
not answered, and the verdict says why. A question is worth its points when the letter is the key, else 0.
"""

from __future__ import annotations

import ast
import html
from dataclasses import dataclass

from grader.quizzes.model import LETTERS, THEMES, Question, Quiz

MAX_CELL_CHARS = 10_000  # an answer cell is one line; a longer one is not read at all
CLAUDE_CODE_VERSION = "2.1.332"  # the version the conformance tests pin, named in "does this instead" notes


@dataclass(frozen=True)
class Reading:
    """What an answer cell says: the letter ("" when none), and why none could be read ("" when one was, or the
    cell is still as released)."""

    letter: str = ""
    problem: str = ""


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _call(statement: ast.stmt) -> tuple[str, str] | None:
    """(question id, letter) of a statement ``answer("q01", "B")`` with literal strings; None for anything else."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return None
    call = statement.value
    if not (isinstance(call.func, ast.Name) and call.func.id == "answer"):
        return None
    args = list(call.args)
    for keyword in call.keywords:
        if keyword.arg not in ("question_id", "letter"):
            return None
    named = {k.arg: k.value for k in call.keywords}
    if any(isinstance(a, ast.Starred) for a in args) or len(args) + len(named) != 2:
        return None
    if len(args) == 2:
        question, letter = args
    elif len(args) == 1 and "letter" in named:
        question, letter = args[0], named["letter"]
    elif not args and set(named) == {"question_id", "letter"}:
        question, letter = named["question_id"], named["letter"]
    else:
        return None
    question_id, text = _literal(question), _literal(letter)
    if question_id is None or text is None:
        return None
    return question_id, text


def read_answer(source: str, question_id: str) -> Reading:
    """The letter an answer cell gives ``question_id``, read without running anything."""
    if not isinstance(source, str):
        return Reading(problem="the cell holds no text")
    if len(source) > MAX_CELL_CHARS:
        return Reading(problem=f"the cell is longer than {MAX_CELL_CHARS:,} characters, so it was not read")
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return Reading(problem="the cell is not valid Python, so no answer could be read from it")
    letters = [text for question, text in filter(None, map(_call, module.body)) if question == question_id]
    if not letters:
        return Reading(problem=f'the cell has no call answer("{question_id}", "<letter>") with the letter in quotes')
    letter = letters[-1].strip().upper()
    if letter == "":
        return Reading()
    if letter not in LETTERS:
        return Reading(problem=f"{capped_letter(letters[-1])} is not one of {', '.join(LETTERS)}")
    return Reading(letter=letter)


def capped_letter(text: str) -> str:
    shown = text if len(text) <= 20 else text[:20] + "…"
    return repr(shown)


@dataclass(frozen=True)
class Verdict:
    question: Question
    number: int  # 1, 2, ... in the quiz's order
    reading: Reading

    @property
    def right(self) -> bool:
        return self.reading.letter == self.question.answer

    @property
    def score(self) -> float:
        return self.question.points if self.right else 0.0

    def status(self) -> str:
        points = f"{self.score:g} of {self.question.points:g} point{'s' if self.question.points != 1 else ''}"
        if self.right:
            return f"right ({points})"
        if not self.reading.letter:
            return f"not answered ({points})"
        return f"wrong ({points})"

    def answered(self) -> str:
        if self.reading.letter:
            return self.reading.letter
        return f"none ({self.reading.problem})" if self.reading.problem else "none"

    def markdown(self) -> str:
        q = self.question
        head = f"**Question {self.number}: {self.status()}.** Your answer: {self.answered()}. The answer: "
        lines = [
            head + f"**{q.answer}**. {q.options[q.answer]}",
            "",
            q.explanation.strip(),
        ]
        if q.claude_code.strip():
            lines += ["", f"*Claude Code {CLAUDE_CODE_VERSION} does this instead:* {q.claude_code.strip()}"]
        return "\n".join(lines) + "\n"

    def text(self) -> str:
        q = self.question
        head = f"Question {self.number}: {self.status()}. Your answer: {self.answered()}. The answer: {q.answer}. "
        lines = [
            head + q.options[q.answer],
            "",
            q.explanation.strip(),
        ]
        if q.claude_code.strip():
            lines += ["", f"Claude Code {CLAUDE_CODE_VERSION} does this instead: {q.claude_code.strip()}"]
        return "\n".join(lines) + "\n"


def grade(quiz: Quiz, sources: dict[str, str]) -> list[Verdict]:
    """Each question's verdict, from ``sources``: question id -> its answer cell's source (missing: not answered)."""
    verdicts = []
    for number, question in enumerate(quiz.questions, start=1):
        source = sources.get(question.id)
        reading = Reading() if source is None else read_answer(source, question.id)
        verdicts.append(Verdict(question, number, reading))
    return verdicts


@dataclass(frozen=True)
class ThemeScore:
    theme: str
    title: str
    score: float
    max_score: float
    questions: int


def by_theme(verdicts: list[Verdict]) -> list[ThemeScore]:
    """Points per theme, out of its maximum, in the course's order of themes."""
    found = []
    for theme, title in THEMES.items():
        mine = [v for v in verdicts if v.question.theme == theme]
        if mine:
            found.append(
                ThemeScore(theme, title, sum(v.score for v in mine), sum(v.question.points for v in mine), len(mine))
            )
    return found


def breakdown_text(verdicts: list[Verdict]) -> str:
    total = sum(v.score for v in verdicts)
    most = sum(v.question.points for v in verdicts)
    lines = [f"Your score: {total:g} of {most:g} points. Per theme:"]
    for t in by_theme(verdicts):
        share = 100 * t.score / t.max_score if t.max_score else 0
        lines.append(f"  {t.title}: {t.score:g} of {t.max_score:g} ({share:.0f} %)")
    return "\n".join(lines) + "\n"


def breakdown_html(verdicts: list[Verdict]) -> str:
    total = sum(v.score for v in verdicts)
    most = sum(v.question.points for v in verdicts)
    pad = ' style="padding:0.2em 1em 0.2em 0;text-align:left"'
    rows = "".join(
        f"<tr><td{pad}>{html.escape(t.title)}</td><td{pad}>{t.score:g} of {t.max_score:g}</td>"
        f"<td{pad}>{(100 * t.score / t.max_score if t.max_score else 0):.0f} %</td></tr>"
        for t in by_theme(verdicts)
    )
    return (
        f"<p><strong>Your score: {total:g} of {most:g} points.</strong> Per theme:</p>"
        f"<table><thead><tr><th{pad}>Theme</th><th{pad}>Points</th><th{pad}>Share</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )
