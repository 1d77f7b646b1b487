"""The browser suite runs after every other test: its Playwright session would break later tests' event loops."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def collected(*paths: str) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return [line for line in run.stdout.splitlines() if "::" in line]


def test_in_the_whole_suite_the_browser_tests_come_after_every_other_test_and_the_instructors_pages_last():
    # The whole suite, as the test command collects it: pytest's own reordering by parametrized fixtures
    # once moved the browser tests back in among the others there, and not in a smaller selection.
    items = collected()
    in_browser = [i for i, item in enumerate(items) if item.startswith("tests/browser/")]
    others = [i for i, item in enumerate(items) if not item.startswith("tests/browser/")]
    assert in_browser and others
    assert max(others) < min(in_browser), "a test outside tests/browser runs after a browser test"
    instructor = [i for i, item in enumerate(items) if item.startswith("tests/browser/test_instructor.py")]
    assert instructor and min(instructor) > max(set(in_browser) - set(instructor))
