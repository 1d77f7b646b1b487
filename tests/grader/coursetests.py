"""Shared helpers of the tests that grade for real: a throw-away course, a few sample submissions, a page's text."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

from grader.cli import main
from grader.pipeline import DEFAULT_COURSE, SAMPLE_SUBMISSIONS, Course

MATRIX = json.loads((SAMPLE_SUBMISSIONS / "expected.json").read_text())


def run_cli(capfd, *argv) -> tuple[int, str, str]:
    """Run ``python -m grader ARGV`` in this process: its exit code, stdout and stderr, never a traceback."""
    code = main([str(a) for a in argv])
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def new_course(root: Path) -> Course:
    """A course with the repository's lab sources and nothing released yet."""
    shutil.copytree(DEFAULT_COURSE / "source", root / "source")
    return Course(root)


def copy_samples(dest: Path, samples: dict[str, list[str]]) -> Path:
    """``dest/<student>/<lab>/`` for the named sample submissions of each lab."""
    for lab, students in samples.items():
        for student in students:
            shutil.copytree(SAMPLE_SUBMISSIONS / student / lab, dest / student / lab)
    return dest


def expected_failed(lab: str, student: str, checks) -> set[str]:
    """The checks ``expected.json`` says this sample fails."""
    failed = MATRIX[lab]["samples"][student]["failed"]
    return set(checks) if failed == "all" else set(failed)


def page_text(path: Path) -> str:
    """An HTML page's text, tags dropped and entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))
