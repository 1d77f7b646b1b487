"""A learner's working folder: the lessons and the learner version of every lab and quiz, where JupyterLab opens."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grader import content
from grader.pipeline import DEFAULT_COURSE, Course, PipelineError

LESSONS = content.LESSONS
FIRST_LESSON = "lessons/01_structured_tool_errors.ipynb"


@dataclass
class Workspace:
    """What ``init_workspace`` did: the files it wrote, and the ones already there that it kept as they were."""

    root: Path
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)


def _learner_versions(staging: Path, labs: list[str]) -> Path:
    """These labs and quizzes of the course generated for learners (nbgrader's release, solutions cleared) in a
    throwaway course under ``staging``; the course's own folder and gradebook are not touched."""
    course_root = staging / "course"
    shutil.copytree(DEFAULT_COURSE / "source", course_root / "source")
    shutil.copy2(DEFAULT_COURSE / "nbgrader_config.py", course_root / "nbgrader_config.py")
    course = Course(course_root)
    api = course.api()
    for lab in labs:
        result = api.generate_assignment(lab)
        if not result["success"]:
            raise PipelineError(
                f"The learner version of {lab} could not be generated; run `python -m grader release {lab}` to see why."
            )
    return course_root / "release"


def _place(source: Path, target: Path, done: Workspace) -> None:
    if target.exists():
        done.kept.append(target)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
    done.written.append(target)


def init_workspace(target: Path, say: Callable[[str], None] = print) -> Workspace:
    """Copy the lessons to ``target/lessons`` and each lab's and quiz's learner version to ``target/labs/<name>``.

    A file already in ``target`` is never replaced, and a lab whose folder is there is left as it is: a learner's
    work stays untouched, and running it again after an update brings in new lessons and labs alone.
    """
    target = Path(target).resolve()
    if target.exists() and not target.is_dir():
        raise PipelineError(f"{target} is a file, not a folder: name a new or existing folder for the course.")
    done = Workspace(target)
    for lesson in sorted(LESSONS.glob("*.ipynb")):
        _place(lesson, target / "lessons" / lesson.name, done)
    labs = []
    for lab in Course(DEFAULT_COURSE).labs():
        if (target / "labs" / lab).exists():
            done.kept.append(target / "labs" / lab)
        else:
            labs.append(lab)
    if not labs:
        return done
    say(f"generating the learner version of {len(labs)} labs and quizzes ...")
    with tempfile.TemporaryDirectory(prefix="mcp-course-init-") as staging:
        release = _learner_versions(Path(staging), labs)
        for path in sorted(release.rglob("*")):
            if path.is_file() and ".ipynb_checkpoints" not in path.parts:
                _place(path, target / "labs" / path.relative_to(release), done)
    return done
