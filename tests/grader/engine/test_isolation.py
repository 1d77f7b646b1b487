"""The learner host is isolated by the operating system: no answer key, no network, no other processes.

Each attack is learner code that tries to reach something the grader keeps (the reference model,
a port on 127.0.0.1, another process's command line). Lab 1's ``decide`` answers correctly only when
the attack succeeds, so the check's score says whether it did: graded, every attack scores zero.
Each attack is also run here, outside the sandbox, where it does succeed: the attack is real, and only
the sandbox stops it. Audit hooks inside the host do not count: every attack that needs them off
switches them off first.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import secretsnearby

from grader.engine.grading import HOST_FILES, grade_code
from grader.notebook import answer_code, read_notebook

REPO = Path(__file__).resolve().parents[3]
SOLUTION = answer_code(read_notebook(REPO / "tests/submissions/solution/lab1_error_results/lab1_error_results.ipynb"))
CHECK = "decide_business_stops"  # one decide check: the attack's success is the check's pass

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox user and the host's own view need root")

# The attacks of the hostile corpus (tests/hostile/make_hostile.py), each a piece of top-level learner code
# that switches the host's audit hook off and leaves the reference model's decide in ``reference`` if it can.
sys.path.insert(0, str(REPO / "tests" / "hostile"))
import make_hostile  # noqa: E402 - a script's module, importable once its folder is on sys.path

HOOK_OFF = make_hostile.HOOK_OFF
ATTACKS = {
    # A module of the reference model already in memory.
    "sys.modules": 'reference = getattr(sys.modules.get("grader.decisions"), "decide", None)\n',
    "__globals__": make_hostile.THROUGH_GLOBALS,
    "gc": make_hostile.THROUGH_GC,
    "__subclasses__": make_hostile.THROUGH_SUBCLASSES,
    "import": make_hostile.BY_IMPORT,
    "dir_fd": make_hostile.THROUGH_A_FOLDER_DESCRIPTOR,
    "/proc/*/root": make_hostile.THROUGH_PROC_ROOT,
}
FOUND = "\ndef found():\n    return reference is not None\n"


def submission(attack: str) -> str:
    """The solution, with ``decide`` answering right only when ``attack`` finds what it looks for."""
    code = SOLUTION.replace(
        "def decide(result, attempt=1, max_attempts=3):", "def _decide(result, attempt=1, max_attempts=3):"
    )
    assert code != SOLUTION
    wrapper = """
def decide(result, attempt=1, max_attempts=3):
    if found():
        return _decide(result, attempt, max_attempts)
    return {"action": "retry", "reason": "found nothing"}
"""
    return code + "\n" + HOOK_OFF + textwrap.dedent(attack) + wrapper


def attack_succeeds_here(attack: str, **names) -> bool:
    """Run the attack in this process (no sandbox), with the grader imported."""
    import grader.decisions  # noqa: F401 - what the attack looks for, loaded as in a grader process

    namespace = dict(names)
    exec(compile(HOOK_OFF + textwrap.dedent(attack) + FOUND, "<attack>", "exec"), namespace)  # noqa: S102 - the test's own code
    return namespace["found"]()


def graded_score(code: str, start: str, monkeypatch) -> float:
    if start == "exec":
        monkeypatch.setenv("GRADER_HOST_START", "exec")
    [result] = grade_code("lab1_error_results", code, [CHECK])
    return result.score


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_each_attack_on_the_answer_key_finds_it_outside_the_sandbox(attack: str):
    from servers.support_desk import kit

    assert attack_succeeds_here(ATTACKS[attack], **{name: getattr(kit, name) for name in kit.__all__})


@as_root
@pytest.mark.parametrize("start", ["fork", "exec"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_no_attack_reaches_the_answer_key_from_the_learner_host(attack: str, start: str, monkeypatch):
    assert graded_score(submission(ATTACKS[attack] + FOUND), start, monkeypatch) == 0


def test_the_solution_with_the_attack_wrapper_scores_when_the_attack_succeeds(monkeypatch):
    """The wrapper is not broken: an 'attack' that always succeeds earns the check."""
    assert graded_score(submission("def found():\n    return True\n"), "fork", monkeypatch) == 1


# --- the network -----------------------------------------------------------------------------------


@as_root
@pytest.mark.parametrize("start", ["fork", "exec"])
def test_a_port_on_loopback_answers_outside_but_not_from_the_learner_host(start: str, monkeypatch):
    secret = b"the instructor's token"
    with secretsnearby.on_a_loopback_port(secret) as port:
        attack = f"""
def found():
    import socket
    try:
        with socket.create_connection(("127.0.0.1", {port}), timeout=2) as conn:
            return conn.recv(100) == {secret!r}
    except OSError:
        return False
"""
        assert graded_score(submission(attack), start, monkeypatch) == 0


# --- other processes -------------------------------------------------------------------------------


@as_root
@pytest.mark.parametrize("start", ["fork", "exec"])
def test_another_processs_command_line_cannot_be_read_from_the_learner_host(start: str, monkeypatch):
    secret = "--token=sk-instructor-0d1e2a"
    with secretsnearby.on_a_command_line(secret):
        attack = f"""
def found():
    import os
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{{entry}}/cmdline", "rb") as line:
                if {secret.encode()!r} in line.read():
                    return True
        except OSError:
            continue
    return False
"""
        assert graded_score(submission(attack), start, monkeypatch) == 0


# --- what the host is made of ----------------------------------------------------------------------


def test_the_warm_host_imports_nothing_but_the_files_its_view_shows():
    """The fork server's interpreter (and so every host forked from it) loads no module of the grader but the
    engine's own that run in the host, and every course module it loads is among the files the host's view shows."""
    probe = (
        "import sys, json\n"
        "from grader.engine import forkserver\n"
        "forkserver.warm()\n"
        "print(json.dumps({name: getattr(module, '__file__', None) for name, module in sys.modules.items()}))\n"
    )
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-P", "-c", probe], env=env, cwd="/", capture_output=True, text=True, check=True
    )
    import json

    modules = json.loads(out.stdout)
    engine_in_host = {
        "grader",
        "grader.engine",
        "grader.engine.forkserver",
        "grader.engine.sandbox",
        "grader.engine.supervisor",
    }
    assert [name for name in modules if name == "grader" or name.startswith("grader.")]
    assert not [
        name for name in modules if (name == "grader" or name.startswith("grader.")) and name not in engine_in_host
    ]
    shown = [REPO / path for path in HOST_FILES]
    libraries = Path(sys.prefix).resolve()  # the environment may live inside the repository (.venv)
    course_files = [
        Path(file)
        for file in modules.values()
        if file and Path(file).resolve().is_relative_to(REPO) and not Path(file).resolve().is_relative_to(libraries)
    ]
    assert course_files  # the host's own modules are there
    outside = [str(file) for file in course_files if not any(file.resolve().is_relative_to(path) for path in shown)]
    assert outside == []


def test_the_kits_credential_names_are_the_reference_models():
    from grader.expansion import CREDENTIAL_VARIABLES as reference
    from servers.learner_host.kit_lab2 import CREDENTIAL_VARIABLES

    assert CREDENTIAL_VARIABLES == reference


# --- failing closed ----------------------------------------------------------------------------------


@as_root
def test_on_this_machine_as_root_every_protection_is_in_place():
    from grader.engine import grading

    assert grading.isolation()["missing"] == [] and grading.isolation_warning() is None


def test_with_a_protection_missing_grading_that_requires_them_refuses_and_says_what_is_missing(monkeypatch):
    from grader.engine import grading

    monkeypatch.setattr(
        grading, "_isolation", {"protections": ["user"], "missing": ["files", "network", "processes"], "fallbacks": []}
    )
    with pytest.raises(grading.SandboxUnavailable) as refused:
        grading.grade_code("lab1_error_results", SOLUTION, [CHECK], require_isolation=True)
    message = str(refused.value)
    assert "network isolation" in message and "file-system view" in message and "--require-sandbox" in message
    warning = grading.isolation_warning()
    assert warning and "network isolation" in warning and "user of its own" not in warning
    # Not required: it grades with what the machine allows.
    [result] = grading.grade_code("lab1_error_results", SOLUTION, [CHECK])
    assert result.passed


def test_isolation_measured_early_in_a_thread_is_measured_once_and_waited_for(monkeypatch):
    """``autograde`` starts the sandbox's probe in a thread as it starts (``measure_isolation_soon``): whoever asks
    for ``isolation()`` meanwhile waits for that one measurement and gets its result, and a value given while it runs
    (a test's assumption) is kept."""
    import threading

    from grader.engine import grading

    found = {"protections": [], "missing": ["network"], "fallbacks": ["no user namespaces here"]}
    probes, started, release = [], threading.Event(), threading.Event()

    def probe() -> dict:
        probes.append(threading.current_thread().name)
        started.set()
        assert release.wait(20)
        return found

    monkeypatch.setattr(grading, "_isolation", None)
    monkeypatch.setattr(grading, "_probe_isolation", probe)
    grading.measure_isolation_soon()
    assert started.wait(20)
    asked: list[dict] = []
    asker = threading.Thread(target=lambda: asked.append(grading.isolation()))
    asker.start()
    asker.join(0.5)
    assert asker.is_alive() and not asked  # waiting for the measurement under way, not starting another
    release.set()
    asker.join(20)
    assert asked == [found] and grading.isolation() is asked[0]
    assert probes == ["isolation-probe"]  # one probe, in the thread that started it

    assumed = {"protections": ["user"], "missing": [], "fallbacks": []}
    started.clear()
    release.clear()
    monkeypatch.setattr(grading, "_isolation", None)
    grading.measure_isolation_soon()
    assert started.wait(20)
    grading._isolation = assumed  # given while the probe runs
    release.set()
    assert grading.isolation() is assumed
