"""Every lesson in JupyterLab in Chromium: Run All reaches the end, and the page shows what the lesson means."""

from __future__ import annotations

import shutil

import pytest

from . import labpage

LESSONS = sorted(p.name for p in (labpage.REPO / "notebooks").glob("0*.ipynb"))


@pytest.fixture(scope="module")
def lessons_lab(jupyter_lab, tmp_path_factory):
    root = tmp_path_factory.mktemp("lessons")
    shutil.copytree(labpage.REPO / "notebooks", root / "notebooks")
    claude = labpage.REPO / "build/claude-code/node_modules/.bin/claude"
    env = {"CLAUDE_CODE_BIN": str(claude)} if claude.exists() else {}
    return jupyter_lab(root, env=env)


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_runs(page, lessons_lab, lesson):
    lessons_lab.login(page)
    labpage.open_notebook(page, lessons_lab, f"notebooks/{lesson}")
    labpage.run_all(page)
    labpage.wait_all_run(page)
    labpage.shot(page, lesson.removesuffix(".ipynb"))
    assert labpage.error_outputs(page) == []
