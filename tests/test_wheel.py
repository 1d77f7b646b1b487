"""The course as a package: ``pip install .`` without the checkout runs the README's main job.

The wheel is built from a copy of the working tree (``pip wheel --no-deps``, as pip builds it for ``pip install .``)
and must hold the course's content (grader.content): the lessons, the labs' sources and nbgrader configuration,
and the sample submissions. It is installed into a fresh venv with the course's runtime dependencies alone,
resolved by pip at the versions this suite runs with (so that nothing of the test or dev extras is there), and
the demo runs in it from a folder outside the checkout, with no PYTHONPATH: it must release every lab and print
the gradebook with each sample's expected score (tests/submissions/expected.json). ``mcp-course init`` then copies
the lessons and the learner version of every lab out of the installed package.

The venv's libraries are installed into it, not borrowed from the repository's .venv through a .pth file: a
learner host sees only its interpreter's own prefix (grader.engine.supervisor's view), so borrowed libraries
would be out of its sight and every check would fail for that reason alone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from tests.test_environment import NOT_RUNTIME  # what only the tests and the maintainers need

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = json.loads((ROOT / "tests" / "submissions" / "expected.json").read_text(encoding="utf-8"))
PACKAGED = "grader/_content"
# Not copied into the folder the wheel is built from: caches, the repository's own venv and build output.
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", "build", "*.egg-info", "__pycache__", ".hypothesis", ".ruff_cache", ".pytest_cache", "node_modules"
)
# A row of the gradebook: student, lab, score/max.
ROW = re.compile(r"^(\S+)\s+(\S+)\s+(\d+(?:\.\d+)?)/(\d+(?:\.\d+)?) \(")


def run(command: list, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (
        f"{' '.join(map(str, command))} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The course's wheel, built from a copy of the working tree (a build writes build/ and *.egg-info beside it)."""
    source = tmp_path_factory.mktemp("source") / "course"
    shutil.copytree(ROOT, source, ignore=NOT_COPIED, symlinks=True)
    dist = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", dist, source], cwd=source)
    (built,) = dist.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel and its runtime dependencies, at the versions this suite runs with; its python."""
    where = tmp_path_factory.mktemp("venv") / "course"
    venv.create(where, with_pip=True)
    python = where / "bin" / "python"
    own = metadata.distribution("mcp-claude-code-course").metadata["Name"]
    # What this venv has installed, not all of sys.path: setuptools puts its _vendor folder there once imported,
    # and its vendored copies (packaging, platformdirs, ...) would be pinned a second time at other versions.
    installed_here = list(dict.fromkeys(sysconfig.get_path(key) for key in ("purelib", "platlib")))
    pins = sorted(
        {
            f"{d.metadata['Name']}=={d.version}"
            for d in metadata.distributions(path=installed_here)
            if d.metadata["Name"] not in (own, "pip")
        }
    )
    constraints = where.parent / "constraints.txt"
    constraints.write_text("\n".join(pins) + "\n", encoding="utf-8")
    run([python, "-m", "pip", "install", "--quiet", "--constraint", constraints, wheel], cwd=where.parent)
    return python


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> Path:
    """A folder outside the checkout, where the installed course's commands run."""
    folder = tmp_path_factory.mktemp("elsewhere")
    assert not folder.is_relative_to(ROOT)
    return folder


def test_the_wheel_holds_the_lessons_the_labs_and_the_sample_submissions(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    lessons = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert len(lessons) >= 8
    assert {f"{PACKAGED}/notebooks/{name}" for name in lessons} <= names
    assert f"{PACKAGED}/labs/nbgrader_config.py" in names
    labs = sorted(p.name for p in (ROOT / "labs" / "source").iterdir() if p.is_dir())
    assert "mock_exam" in labs and "lab1_error_results" in labs
    # Every lab's and quiz's source notebook; the mock exam's (a link in the checkout) as the file it points to.
    assert {f"{PACKAGED}/labs/source/{lab}/{lab}.ipynb" for lab in labs} <= names
    with zipfile.ZipFile(wheel) as archive:
        packaged = archive.read(f"{PACKAGED}/labs/source/mock_exam/mock_exam.ipynb")
    assert packaged == (ROOT / "notebooks" / "06_mock_exam.ipynb").read_bytes()
    samples = {
        f"{PACKAGED}/tests/submissions/{s}/{lab}/{lab}.ipynb" for lab, e in EXPECTED.items() for s in e["samples"]
    }
    assert len(samples) == 73
    assert samples <= names
    assert f"{PACKAGED}/tests/submissions/expected.json" in names
    # Lab 2's hidden checks read their generated cases from the package.
    assert "grader/labs/lab2_cases.json" in names
    # Nothing of a build or a run: no cache, no generated course folder, no sample generator.
    assert not [n for n in names if "__pycache__" in n and n.startswith(PACKAGED)]
    assert not [n for n in names if n.startswith((f"{PACKAGED}/labs/release", f"{PACKAGED}/labs/gradebook"))]
    assert f"{PACKAGED}/tests/submissions/make_samples.py" not in names


def test_the_fresh_venv_runs_the_installed_course_with_its_runtime_alone(installed, outside):
    where = installed.parent.parent
    said = run(
        [installed, "-c", "import grader, grader.content as c; print(grader.__file__); print(c.CHECKOUT)"], cwd=outside
    )
    module, checkout = said.stdout.splitlines()
    assert Path(module).is_relative_to(where), module  # the wheel's grader, not the checkout's
    assert checkout == "None"
    listed = run([installed, "-m", "pip", "list", "--format=json"], cwd=outside).stdout
    present = {d["name"].lower() for d in json.loads(listed)}
    assert not present & NOT_RUNTIME
    assert {"mcp", "nbgrader", "jupyterlab"} <= present  # hypothesis, the test extra's, among NOT_RUNTIME


def test_the_demo_runs_outside_the_checkout_and_prints_the_expected_gradebook(installed, outside):
    done = run([installed, "-m", "grader", "demo"], cwd=outside, timeout=1800)
    released = set(re.findall(r"^released (\S+)$", done.stdout, re.MULTILINE))
    assert released == {p.name for p in (ROOT / "labs" / "source").iterdir() if p.is_dir()}
    scores = {}
    for line in done.stdout.splitlines():
        row = ROW.match(line)
        if row:
            student, lab, score, most = row.groups()
            scores[(student, lab)] = (float(score), float(most))
    expected = {
        (student, lab): (float(sample["score"]), float(e["max_score"]))
        for lab, e in EXPECTED.items()
        for student, sample in e["samples"].items()
    }
    assert scores == expected
    work = outside / "build" / "demo-course"
    assert f"feedback in {work / 'feedback'}" in done.stdout
    assert (work / "grades.csv").is_file() and (work / "report.html").is_file()


def test_init_copies_the_lessons_and_the_learner_labs_from_the_installed_package(installed, outside):
    console = installed.parent / "mcp-course"
    run([console, "init", "course"], cwd=outside, timeout=900)
    lessons = sorted(p.name for p in (outside / "course" / "lessons").glob("*.ipynb"))
    assert lessons == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    for lab in ("lab1_error_results", "quiz01_structured_tool_errors", "mock_exam"):
        assert (outside / "course" / "labs" / lab / f"{lab}.ipynb").is_file()
    # The learner version: the solution's code is not in it.
    solution = (ROOT / "labs" / "source" / "lab1_error_results" / "lab1_error_results.ipynb").read_text(
        encoding="utf-8"
    )
    released = (outside / "course" / "labs" / "lab1_error_results" / "lab1_error_results.ipynb").read_text(
        encoding="utf-8"
    )
    assert "### BEGIN SOLUTION" in solution and "### BEGIN SOLUTION" not in released


def test_an_installed_courses_release_makes_its_course_folder_where_it_runs_not_in_the_package(installed, outside):
    console = installed.parent / "mcp-course"
    packaged = Path(run([installed, "-c", "import grader.content as c; print(c.COURSE)"], cwd=outside).stdout.strip())
    before = sorted(str(p.relative_to(packaged)) for p in packaged.rglob("*"))
    instructor = outside / "instructor"
    instructor.mkdir()

    done = run([console, "release", "lab1_error_results"], cwd=instructor, timeout=900)

    assert "made the course folder" in done.stderr
    assert (instructor / "labs" / "release" / "lab1_error_results" / "lab1_error_results.ipynb").is_file()
    assert (instructor / "labs" / "gradebook.db").is_file()
    assert sorted(str(p.relative_to(packaged)) for p in packaged.rglob("*")) == before  # the package is not written


# Graded in the installed venv: lab 1's solution, whose decide answers right only when PROBED is a path the learner
# host can see, once for a file of the servers' package a host is not shown and once for one it is.
PROBE = """
import json, sys
from pathlib import Path

import servers
from grader.engine.grading import grade_code

code = Path(sys.argv[1]).read_text(encoding="utf-8")
package = Path(servers.__file__).resolve().parent


def seen(path):
    [result] = grade_code("lab1_error_results", code.replace("PROBED", str(path)), ["decide_business_stops"])
    return result.passed


print(json.dumps({"desk.py": seen(package / "support_desk" / "desk.py"), "kit.py": seen(package / "support_desk" / "kit.py")}))
"""
SEES = """
import os as _probe_os


def decide(result, attempt=1, max_attempts=3):
    if _probe_os.path.exists("PROBED"):
        return _decide(result, attempt, max_attempts)
    return {"action": "retry", "reason": "nothing found"}
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the learner host's own view of the files needs root")
def test_an_installed_courses_learner_host_sees_only_the_server_files_it_is_shown(installed, outside):
    from grader.notebook import answer_code, read_notebook

    solution = answer_code(
        read_notebook(ROOT / "tests" / "submissions" / "solution" / "lab1_error_results" / "lab1_error_results.ipynb")
    )
    renamed = solution.replace(
        "def decide(result, attempt=1, max_attempts=3):", "def _decide(result, attempt=1, max_attempts=3):"
    )
    assert renamed != solution
    (outside / "probe.py").write_text(renamed + "\n" + SEES, encoding="utf-8")

    done = run([installed, "-c", PROBE, outside / "probe.py"], cwd=outside, timeout=600)

    # The desk's own server (not a host file) is out of the host's sight; a host file is in it, so the probe works.
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"desk.py": False, "kit.py": True}
