"""What JupyterLab would render wrong, caught in the lessons' source: math made of `$`, tables that let math in,
widgets that print a second answer, a quiz answered before the learner touches it."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("0*.ipynb") if p.name != "06_mock_exam.ipynb")

# JupyterLab's own masks (rendermime's removeMath): fenced blocks, then code spans on one line, keep their `$`.
FENCE = re.compile(r"^(`{3,}|~{3,})[^`\n]*\n[\s\S]*?^\1[`~]*$", re.MULTILINE)
CODE_SPAN = re.compile(r"(^|[^\\])(`+)([^\n]*?[^`\n])\2(?!`)", re.MULTILINE)


def cells(name: str) -> list:
    return nbformat.read(NOTEBOOKS / name, as_version=4).cells


def outside_code(markdown: str) -> str:
    return CODE_SPAN.sub(r"\1", FENCE.sub("", markdown))


def math_risks(markdown: str) -> list[str]:
    """Why JupyterLab could typeset part of this markdown as math; empty when it cannot."""
    text = outside_code(markdown)
    risks = []
    if text.count("$") > 1:  # a second `$` closes the first; `\$` does not help, JupyterLab typesets it anyway
        risks += [line.strip() for line in text.splitlines() if "$" in line]
    risks += [m.group(0) for m in re.finditer(r"\\\\[(\[]|\\begin\{", text)]
    return risks


def test_the_check_sees_what_jupyterlab_would_typeset() -> None:
    assert math_risks("but $750 breaks the $500 policy")
    assert math_risks("but \\$750 breaks the \\$500 policy")
    assert math_risks("a $750 refund\n\nand a $500 limit")
    assert not math_risks("a $750 refund breaks the policy, whose `limit` is 500")
    assert not math_risks("`${DB_HOST}:${DB_PORT:-5432}` and ``$a` `$b``, and $5")
    assert not math_risks('```bash\nexport A="$B" C="$D"\n```\nthen $1')


@pytest.mark.parametrize("name", LESSONS)
def test_no_markdown_cell_can_be_typeset_as_math(name: str) -> None:
    found = {i: math_risks(c.source) for i, c in enumerate(cells(name)) if c.cell_type == "markdown"}
    assert not {i: risks for i, risks in found.items() if risks}, "write a `$` inside a code span, or only one per cell"


@pytest.mark.parametrize("name", LESSONS)
def test_a_lesson_with_tables_sets_them_up_before_its_first_table(name: str) -> None:
    code = [c.source for c in cells(name) if c.cell_type == "code"]
    if not any("pd." in source for source in code):
        pytest.skip("no tables")
    assert "lessonkit.tables(" in code[0], (
        "the set-up cell must call lessonkit.tables(): pandas HTML without it is typeset"
    )
    assert not any("use_mathjax" in source or "notebook_repr_html" in source for source in code)


@pytest.mark.parametrize("name", LESSONS)
def test_every_widget_shows_one_answer_that_it_updates_in_place(name: str) -> None:
    for source in (c.source for c in cells(name) if c.cell_type == "code"):
        if ".observe(" in source or ".on_click(" in source:
            assert "display_id=True)" in source and ".update(" in source, source[:120]
        assert "widgets.Output(" not in source and "print(update())" not in source, source[:120]


def test_lesson_04s_quiz_is_unanswered_until_the_learner_picks() -> None:
    for source in (c.source for c in cells("04_tools_vs_resources.ipynb") if c.cell_type == "code"):
        assert not re.search(r"picker[s\]\[\"' \w]*\.value\s*=(?!=)", source), source[:120]
