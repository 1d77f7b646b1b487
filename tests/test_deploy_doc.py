"""docs/deploy.md, run: every ``$`` command of it, in its order, on one machine, with one learner's term between.

``/opt/mcp-course`` (the grading image's checkout) stands for a clean copy of this repository's course,
``/srv/course`` and ``/srv/nbgrader/exchange`` for temporary folders. Between the release and the collection a
learner fetches the lab and submits it with nbgrader's own commands, as the JupyterLab extension runs them;
after the feedback is released, the learner fetches it. The commands the page marks as not run by a test
(Docker, Kubernetes) are the only ones left out, and the files they use are checked for what the page says.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from nbgrader.tests import run_nbgrader

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "deploy.md"
LAB = "lab1_error_results"
LEARNER = "ada"
ROSTER = f"id,first_name,last_name,email\n{LEARNER},Ada,Lovelace,ada@example.org\n"
NOT_RUN = re.compile(r"^(docker|kubectl|helm) ")


def blocks(kind: str) -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    return [block.strip("\n").splitlines() for block in re.findall(rf"```{kind}\n(.*?)```", text, re.DOTALL)]


def commands() -> list[str]:
    return [line[2:] for block in blocks("console") for line in block if line.startswith("$ ")]


def test_every_command_of_the_page_is_either_run_here_or_says_why_not() -> None:
    assert commands(), "the page has no command run by this test"
    for block in blocks("bash"):
        assert block[0].startswith("# not run by a test: "), block[0]
        assert all(NOT_RUN.match(line) for line in block[1:] if line and not line.startswith(("#", " "))), block
    for block in blocks("console"):
        assert all(line.startswith("$ ") for line in block), block


def learner(root: Path, exchange: Path, *argv: str) -> None:
    home = root / "home" / LEARNER
    home.mkdir(parents=True, exist_ok=True)
    before = os.getcwd()
    os.chdir(home)
    try:
        run_nbgrader(
            [
                *argv,
                "--course",
                "mcp-claude-code",
                f"--Exchange.root={exchange}",
                f"--Exchange.cache={home / '.cache'}",
                f"--student={LEARNER}",
            ]
        )
    finally:
        os.chdir(before)


def test_the_weekly_commands_run_as_written(tmp_path: Path, monkeypatch) -> None:
    image = tmp_path / "opt" / "mcp-course"  # the grading image's checkout: the course as the repository has it
    shutil.copytree(REPO / "labs" / "source", image / "labs" / "source")
    shutil.copy2(REPO / "labs" / "nbgrader_config.py", image / "labs" / "nbgrader_config.py")
    course, exchange, work = tmp_path / "srv" / "course", tmp_path / "srv" / "exchange", tmp_path / "work"
    for folder in (course, exchange, work):
        folder.mkdir(parents=True)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter-config"))
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO),  # the grading image has the course installed; here it is this checkout
    }
    places = {"/opt/mcp-course": str(image), "/srv/nbgrader/exchange": str(exchange), "/srv/course": str(course)}
    (course / "students.csv").write_text(ROSTER)  # the instructor's roster, put beside the course
    solution = (REPO / "tests" / "submissions" / "solution" / LAB / f"{LAB}.ipynb").read_bytes()

    for command in commands():
        line = command
        for placeholder, here in places.items():
            line = line.replace(placeholder, here)
        line = re.sub(r"^python ", f"{sys.executable} ", line)
        if line.startswith(f"{sys.executable} -m grader collect"):
            # The learners' week: fetch from the exchange, answer, submit.
            learner(tmp_path, exchange, "fetch_assignment", LAB)
            (tmp_path / "home" / LEARNER / LAB / f"{LAB}.ipynb").write_bytes(solution)
            learner(tmp_path, exchange, "submit", LAB)
        done = subprocess.run(
            ["bash", "-c", line], check=False, capture_output=True, text=True, cwd=work, env=env, timeout=600
        )
        assert done.returncode == 0 and "Traceback" not in done.stderr, (
            f"$ {command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        )

    learner(tmp_path, exchange, "fetch_feedback", LAB)
    (page,) = (tmp_path / "home" / LEARNER / LAB / "feedback").glob(f"*/{LAB}.html")
    assert "Score" in page.read_text(encoding="utf-8")
    with open(work / "canvas.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    (ada,) = [row for row in rows if row["SIS Login ID"] == LEARNER]
    assert ada["Student"] == "Lovelace, Ada" and float(ada[LAB]) > 0
    assert (work / "grades.csv").is_file() and (work / "report.html").is_file()


def test_the_files_the_page_names_say_what_it_says() -> None:
    values = yaml.safe_load((REPO / "deploy" / "z2jh-values.yaml").read_text())
    mounts = values["singleuser"]["storage"]["extraVolumeMounts"]
    assert {"name": "nbgrader-exchange", "mountPath": "/srv/nbgrader/exchange"} in mounts
    claim = yaml.safe_load((REPO / "deploy" / "exchange-pvc.yaml").read_text())
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"] and claim["metadata"]["name"] == "nbgrader-exchange"
    pod = yaml.safe_load((REPO / "deploy" / "grading-pod.yaml").read_text())
    (container,) = pod["spec"]["containers"]
    assert (
        container["securityContext"]["runAsUser"] == 0
        and "SYS_ADMIN" in container["securityContext"]["capabilities"]["add"]
    )
    assert {m["mountPath"] for m in container["volumeMounts"]} == {"/srv/course", "/srv/nbgrader/exchange"}
    learner_image = (REPO / "deploy" / "Dockerfile").read_text()
    assert "pip wheel --no-deps --wheel-dir /build/wheels /build/learner" in learner_image
    assert "COPY labs" not in learner_image and "COPY grader" not in learner_image and "COPY . " not in learner_image
    assert "COPY deploy/learner_nbgrader_config.py /etc/jupyter/nbgrader_config.py" in learner_image


def test_learners_and_the_course_agree_on_the_course_id_and_timezone() -> None:
    def settings(path: Path) -> dict[str, str]:
        return dict(re.findall(r'^c\.(\w+\.\w+) = "([^"]*)"', path.read_text(), re.MULTILINE))

    course, learners = (
        settings(REPO / "labs" / "nbgrader_config.py"),
        settings(REPO / "deploy" / "learner_nbgrader_config.py"),
    )
    assert learners["CourseDirectory.course_id"] == course["CourseDirectory.course_id"]
    assert learners["Exchange.timezone"] == course["Exchange.timezone"]
    assert learners["Exchange.root"] == "/srv/nbgrader/exchange"


@pytest.mark.parametrize(
    "command", [line for line in (REPO / "deploy" / "Dockerfile").read_text().splitlines() if "jupyter " in line]
)
def test_the_learner_images_jupyter_commands_are_real(command: str) -> None:
    """Each extension the learner image switches off exists under that name in the nbgrader the course pins."""
    names = re.findall(r"disable --(?:level=sys_prefix|sys-prefix) (\S+)", command)
    assert names
    installed = (Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader").rglob("*.js")
    lab_plugins = set(
        re.findall(r'id:\s*"(@jupyter/nbgrader:[\w-]+)"', "".join(p.read_text(errors="replace") for p in installed))
    )
    for name in names:
        if name.startswith("@jupyter/nbgrader:"):
            assert name in lab_plugins, f"{name} is no plugin of nbgrader's lab extension ({sorted(lab_plugins)})"
        else:
            module = __import__(name, fromlist=["_"])
            assert hasattr(module, "_load_jupyter_server_extension"), name
