"""The Binder (repo2docker) configuration opens the same course as the README's set-up command."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.test_environment import normalise

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / ".binder"


def dependencies(environment_yml: Path) -> dict[str, str]:
    text = environment_yml.read_text()
    deps = {}
    for line in text[text.index("\ndependencies:") :].splitlines():
        item = re.match(r"^\s+-\s+(.+?)\s*$", line)
        if item and not item.group(1).endswith(":") and item.group(1) != "-e .":
            name, bounds = normalise(item.group(1))
            deps[name] = bounds
    return deps


def test_binders_environment_lists_the_courses_packages_with_the_same_bounds_but_not_the_course():
    # repo2docker builds the environment before it copies the checkout, so postBuild installs the course.
    assert "-e ." not in (BINDER / "environment.yml").read_text()
    assert dependencies(BINDER / "environment.yml") == dependencies(ROOT / "environment.yml")


def test_post_build_installs_the_course_and_releases_the_labs_and_is_valid_bash():
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK)
    text = post_build.read_text()
    assert "pip install --no-deps -e ." in text
    assert "python -m grader release" in text
    subprocess.run(["bash", "-n", str(post_build)], check=True)
