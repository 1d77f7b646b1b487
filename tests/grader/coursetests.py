"""Shared helpers of the tests that grade for real: a throw-away course, a few sample submissions, a page's text."""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
from contextlib import contextmanager
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


def new_course(root: Path, settings: str = "") -> Course:
    """A course like the repository's (its lab sources and its nbgrader_config.py, with ``settings`` appended)
    and nothing released yet."""
    shutil.copytree(DEFAULT_COURSE / "source", root / "source")
    config = (DEFAULT_COURSE / "nbgrader_config.py").read_text(encoding="utf-8")
    (root / "nbgrader_config.py").write_text(config + (f"\n{settings}\n" if settings else ""), encoding="utf-8")
    return Course(root)


def digests(folder: Path) -> dict[str, str]:
    """{path inside ``folder``: sha256} of every file under it."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


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


@contextmanager
def inside(folder: Path):
    """Run the block with ``folder`` as the working folder (nbgrader's learner commands work where they run)."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)
