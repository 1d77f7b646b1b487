"""A wrong answer is made by replacing a piece of the formatted solution, written as it reads or on one line: the
piece is found by its code (tokens), whatever the formatter did to its layout, and never by a near miss."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from solution_edits import occurrences, replace_once

REPO = Path(__file__).resolve().parents[1]

WRAPPED = """def refund(order_id, amount_usd):
    if amount_usd <= 0:
        return validation_error(
            f"The refund amount must be positive; got {amount_usd}.", "amount_usd", "must be greater than 0"
        )
    return permission_error(
        f"Role {desk.caller.role} may not refund: it lacks refunds:write.",
        "refunds:write",
        desk.caller.role,
    )
"""
WITHOUT_THE_CHECK = """def refund(order_id, amount_usd):
    return permission_error(f"Role {desk.caller.role} may not refund: it lacks refunds:write.", "refunds:write", desk.caller.role)
"""
ONE_LINE_CHECK = """    if amount_usd <= 0:
        return validation_error(f"The refund amount must be positive; got {amount_usd}.", "amount_usd", "must be greater than 0")
"""


def test_a_piece_written_on_one_line_is_found_where_the_formatter_wrapped_it() -> None:
    assert ONE_LINE_CHECK not in WRAPPED

    edited = replace_once(WRAPPED, ONE_LINE_CHECK, "")

    assert ast.dump(ast.parse(edited)) == ast.dump(ast.parse(WITHOUT_THE_CHECK))


def test_a_trailing_comma_and_the_other_quote_do_not_hide_a_piece() -> None:
    one_line = "return permission_error(f'Role {desk.caller.role} may not refund: it lacks refunds:write.', 'refunds:write', desk.caller.role)"

    edited = replace_once(WRAPPED, one_line, "return None")

    assert edited.endswith("    return None\n")
    compile(edited, "answer", "exec")


def test_the_text_itself_is_replaced_when_it_is_there_even_inside_a_string() -> None:
    edited = replace_once(WRAPPED, "got {amount_usd}.", "got nothing.")

    assert '"The refund amount must be positive; got nothing."' in edited


@pytest.mark.parametrize(
    "near_miss",
    [
        'return validation_error(f"The refund amount must be positive; got {amount_usd}.", "amount_usd", "must be > 0")',
        "if amount_usd < 0:",
        "return permission_error(f'Role {desk.caller.role} may not refund.', 'refunds:write', desk.caller.role)",
    ],
)
def test_a_piece_that_differs_in_its_code_is_not_found(near_miss: str) -> None:
    assert occurrences(WRAPPED, near_miss) == 0
    with pytest.raises(ValueError, match="exactly once, not 0 times"):
        replace_once(WRAPPED, near_miss, "")


def test_a_piece_found_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="exactly once, not 2 times"):
        replace_once(WRAPPED, "desk.caller.role", "desk.caller")


def test_the_sample_submissions_script_finds_every_mistake_in_the_formatted_solutions() -> None:
    # Every (text, replacement) of tests/submissions/make_samples.py occurs exactly once in its lab's answer cells.
    script = f"""
import json, sys
sys.path.insert(0, {str(REPO / "tests" / "submissions")!r})
import make_samples
from grader.notebook import is_answer_cell
from solution_edits import occurrences

bases = make_samples.released_with_solutions(list(make_samples.MISTAKES))
counts = []
for table, base in ((make_samples.MISTAKES, "solution"), (make_samples.PARTIAL_FIXES, "release")):
    for lab, samples in table.items():
        sources = [cell.source for cell in bases[lab][base].cells if is_answer_cell(cell)]
        for sample, edits in samples.items():
            for old, _ in edits:
                counts.append((f"{{lab}}/{{sample}}: {{old[:60]}}", sum(occurrences(source, old) for source in sources)))
print(json.dumps(counts))
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'tests'}"},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    counts = json.loads(done.stdout)
    assert len(counts) >= 74
    assert [(piece, n) for piece, n in counts if n != 1] == []
