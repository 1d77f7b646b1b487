"""Browser tests: JupyterLab servers on throwaway folders, driven in Debian's Chromium by pytest-playwright.

Chromium is the ``chromium`` package (apt-get install chromium; .ci/run installs it), not a browser
Playwright downloads. Without it the tests fail and say so; a developer without it skips them on purpose
with ``MCP_COURSE_SKIP_BROWSER=1``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from .labpage import LABS, REPO, Console

SKIP_VARIABLE = "MCP_COURSE_SKIP_BROWSER"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
READY_TIMEOUT = 90  # seconds for a JupyterLab server to answer /api/status
# Straight to 127.0.0.1, whatever proxy the environment names.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "console_allows(*patterns): console errors matching one of these regexes do not fail the test"
    )


@pytest.fixture(scope="session", autouse=True)
def _chromium() -> str:
    """Skip only when asked to; fail, saying what to install, when Debian's Chromium is missing."""
    if os.environ.get(SKIP_VARIABLE) == "1":
        pytest.skip(f"{SKIP_VARIABLE}=1: the browser tests are switched off")
    if not Path(CHROMIUM).is_file():
        pytest.fail(
            f"The browser tests drive Debian's Chromium, and {CHROMIUM} is missing: apt-get install chromium "
            f"(or set CHROMIUM to its path). Set {SKIP_VARIABLE}=1 to skip these tests.",
            pytrace=False,
        )
    return CHROMIUM


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict, _chromium: str) -> dict:
    return {**browser_type_launch_args, "executable_path": _chromium, "args": ["--no-sandbox"]}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict) -> dict:
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1000}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """One ``jupyter lab`` on a folder: its own port, token, runtime, config and settings folders."""

    def __init__(
        self, root: Path, extra_args: tuple[str, ...], env: dict[str, str] | None = None, wait: bool = True
    ) -> None:
        """Start the server; with ``wait`` False, return at once and let ``ready()`` wait for it when it is needed."""
        self.root = Path(root)
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.home = Path(tempfile.mkdtemp(prefix="lab-server-", dir="/tmp"))
        self.log = self.home / "server.log"
        # No "get notified about Jupyter news?" prompt: the server stays offline and the screenshots plain.
        news = self.home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
        news.parent.mkdir(parents=True)
        news.write_text('{"fetchNews": "false"}')
        # Every cell rendered at once (JupyterLab windows off-screen cells by default): math typesetting and text
        # are then on the page without scrolling a long lesson through, screen by screen.
        tracker = self.home / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
        tracker.parent.mkdir(parents=True)
        tracker.write_text('{"windowingMode": "none"}')
        # Not pytest's own variables: ipykernel, seeing PYTEST_CURRENT_TEST, stops showing what a kernel's child
        # processes write to stderr, and the tests must see exactly what a learner's cell shows.
        inherited = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
        env = {
            **inherited,
            **(env or {}),
            "JUPYTER_RUNTIME_DIR": str(self.home / "runtime"),
            "JUPYTER_CONFIG_DIR": str(self.home / "config"),
            "JUPYTER_DATA_DIR": str(self.home / "data"),
            "JUPYTERLAB_SETTINGS_DIR": str(self.home / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(self.home / "workspaces"),
            "IPYTHONDIR": str(self.home / "ipython"),
        }
        command = [
            sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={self.port}", "--ServerApp.port_retries=0",
            "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root}",
            "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            *(["--allow-root"] if os.geteuid() == 0 else []), *extra_args,
        ]  # fmt: skip
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
        self.answered = False
        if wait:
            self.ready()

    def ready(self) -> LabServer:
        """The server, once it answers /api/status."""
        if not self.answered:
            self._wait_ready()
            self.answered = True
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        request = urllib.request.Request(f"{self.url}/api/status", headers={"Authorization": f"token {self.token}"})
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"jupyter lab exited with status {self.process.returncode}:\n{self.log_text()[-3000:]}")
            try:
                with HTTP.open(request, timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            try:
                self.process.wait(timeout=0.25)  # the pause between two polls, and a watch on the server
            except subprocess.TimeoutExpired:
                pass
        self.stop()
        pytest.fail(f"jupyter lab did not answer /api/status within {READY_TIMEOUT} s:\n{self.log_text()[-3000:]}")

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def login(self, page) -> None:
        """Log in through the token form, so the page's XHRs carry the session cookie."""
        page.goto(f"{self.url}/login")
        page.fill("input[name=password]", self.token)
        page.click("#login_submit")
        page.wait_for_url(re.compile(r".*/(lab|tree)\b.*"))

    def api(self, method: str, path: str):
        """One call to the server's REST API; the decoded JSON answer, or None when there is none."""
        request = urllib.request.Request(
            f"{self.url}/api/{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with HTTP.open(request, timeout=30) as answer:
            body = answer.read()
        return json.loads(body) if body else None

    def shut_down_kernels(self, path: str | None = None) -> None:
        """Shut down the kernel of the notebook at ``path`` (default: every kernel), and what it started."""
        for session in self.api("GET", "sessions"):
            if path is None or session["path"] == path:
                self.api("DELETE", f"sessions/{session['id']}")

    def stop(self) -> None:
        """Stop the server and its kernels (one process group)."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
            except ProcessLookupError:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # kernels or servers left behind by the group
        except ProcessLookupError:
            pass


@pytest.fixture(scope="module")
def jupyter_lab():
    """A factory: ``jupyter_lab(root, *extra_args, env=None, wait=True) -> LabServer``; every server stops after the
    module."""
    started: list[LabServer] = []

    def start(root: Path, *extra_args: str, env: dict[str, str] | None = None, wait: bool = True) -> LabServer:
        server = LabServer(root, extra_args, env, wait)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


COURSE_LAB, RELEASED_LABS = "course_lab", "released_labs"
RELEASE_TIMEOUT = 300  # seconds for the course's labs to be released


@pytest.fixture(scope="session")
def course_lab(tmp_path_factory):
    """One JupyterLab on a temporary course, for the modules where a server of their own proves nothing: the lessons
    (in ``notebooks/``), the labs (released into the course, whose nbgrader_config.py the server reads) and the
    course extension's instructor (in ``extension/``). Each works in files of its own. Started, not waited for:
    ``course_lab.ready()`` waits. The learner's JupyterLab and the instructor's demo course keep servers of their own.
    """
    root = tmp_path_factory.mktemp("course")
    for lab in LABS:
        shutil.copytree(REPO / "labs" / "source" / lab, root / "source" / lab)
    shutil.copy(REPO / "labs" / "nbgrader_config.py", root)
    shutil.copytree(REPO / "notebooks", root / "notebooks")
    claude = REPO / "build" / "claude-code" / "node_modules" / ".bin" / "claude"
    server = LabServer(root, (), {"CLAUDE_CODE_BIN": str(claude)} if claude.exists() else {}, wait=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def released_labs(course_lab):
    """``python -m grader release`` of the four labs into course_lab's course, started in the background; a function
    that waits for it and returns the course's folder (failing with the command's output if it failed)."""
    root = course_lab.root
    output = root.parent / f"{root.name}-release.log"
    with output.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "grader", "release", "--course", str(root), *LABS],
            cwd=root, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip

    def wait() -> Path:
        try:
            returncode = process.wait(timeout=RELEASE_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            returncode = process.wait()
        assert returncode == 0, f"the release failed ({returncode}):\n{output.read_text(errors='replace')[-4000:]}"
        return root

    yield wait
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture(scope="session", autouse=True)
def _started_early(request):
    """The shared JupyterLab, and the labs' release into its course, start with the session's first browser test
    when a test will use them, so that they get ready while the tests before run."""
    for name in (RELEASED_LABS, COURSE_LAB):
        if any(name in getattr(item, "fixturenames", ()) for item in request.session.items):
            request.getfixturevalue(name)


@pytest.fixture
def page(page, request):
    """pytest-playwright's page; the test fails on a page error or console error not allowed by ``console_allows``."""
    marker = request.node.get_closest_marker("console_allows")
    console = Console(page, marker.args if marker else ())
    yield page
    console.check()


@pytest.fixture(scope="module")
def module_context(browser, browser_context_args):
    """One browser context a module's tests share (its pages keep the server's login cookie)."""
    context = browser.new_context(**browser_context_args)
    yield context
    context.close()


HERE = Path(__file__).parent
INSTRUCTOR_TESTS = "test_instructor.py"


def _instructor(item: pytest.Item) -> bool:
    return item.path.parent == HERE and item.path.name == INSTRUCTOR_TESTS


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """The browser tests run last, after every other test of the session, and the instructor's pages last of them.

    pytest-playwright's ``playwright`` fixture lives for the whole session, and while it does Playwright's event
    loop counts as running in this thread: a later test that runs its own loop (anyio, or Playwright's sync API)
    would fail with "Cannot run the event loop while another loop is running". The instructor's pages come last so
    that their demo course builds (``demo_build``) while the other browser tests run. It runs last of the hooks
    that order items: pytest's own reordering by parametrized fixtures (the browser tests' session-wide
    ``browser_name``) would otherwise move the browser tests back in among the others.
    """
    browser = [item for item in items if HERE in item.path.parents and not _instructor(item)]
    instructor = [item for item in items if _instructor(item)]
    rest = [item for item in items if HERE not in item.path.parents]
    items[:] = rest + browser + instructor


@pytest.fixture(scope="session", autouse=True)
def demo_build(request, tmp_path_factory):
    """The instructor tests' demo course, started building with the session's first browser test when those tests
    are to run; None otherwise."""
    if not any(_instructor(item) for item in request.session.items):
        yield None
        return
    from .instructor_demo import DemoBuild

    build = DemoBuild(tmp_path_factory.mktemp("demo") / "demo-course", tmp_path_factory.mktemp("samples"))
    yield build
    build.stop()
