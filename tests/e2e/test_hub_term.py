"""A whole nbgrader term in small, on a real JupyterHub with real local users.

JupyterHub 6 (LocalProcessSpawner behind configurable-http-proxy) serves two local system users made
for the run, an instructor and a learner, on a copy of the course whose nbgrader exchange is a
temporary folder. The learner's side goes through the hub's REST API and the learner's single-user
server, as the learner's JupyterLab does (nbgrader's assignment list endpoints, the contents API);
the instructor's side is the CLI, run as the instructor:

1. the instructor releases lab 1 (``python -m grader release``, ``nbgrader release_assignment``);
2. the learner fetches it, writes answers into it (every answer cell but one from the solution, that
   one left as released, so the score is not full marks) and submits it;
3. the instructor collects it (``nbgrader collect``), autogrades what was collected
   (``python -m grader autograde <course>/submitted``), which must change no file of it, writes the
   feedback (``python -m grader feedback``) and releases it (``nbgrader release_feedback``);
4. the learner fetches the feedback, whose score must be the gradebook's.

Needs root: it creates the two users with useradd, and JupyterHub starts their servers as them. On a
machine that cannot (not root, no useradd) it fails and says so; a developer without root skips it
with ``MCP_COURSE_SKIP_HUB=1``. What it runs on (a venv every user can read, the proxy) is set up by
``python tests/e2e/hubenv.py`` (.ci/run does), and brought up to date by the test itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import hubenv
import pytest

from grader.course import COURSE_ID

SKIP_VARIABLE = "MCP_COURSE_SKIP_HUB"
LAB = "lab1_error_results"
LEFT_AS_RELEASED = "answer_decide"  # the answer cell the learner does not fill in
USER_PREFIX = "mcpcourse-"
SERVICE = "term-test"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
STEP_TIMEOUT = 180  # seconds for one CLI step
READY_TIMEOUT = 90  # seconds for the hub, or a single-user server, to answer
LABS = hubenv.REPO / "labs"

# Straight to 127.0.0.1, whatever proxy the environment names.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tool(name: str) -> str | None:
    return shutil.which(name, path=f"{os.environ.get('PATH', '')}:{SYSTEM_PATH}")


def tail(path: Path, lines: int = 80) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def sha256_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def require_machine() -> None:
    """Skip only when asked to; fail, saying why, where this machine cannot make system users."""
    if os.environ.get(SKIP_VARIABLE) == "1":
        pytest.skip(f"{SKIP_VARIABLE}=1: the JupyterHub term test is switched off")
    if os.geteuid() != 0:
        pytest.fail(
            "The JupyterHub term test must run as root: it creates an instructor and a learner as system users "
            f"(useradd) and JupyterHub starts their servers as them. Run it as root, or set {SKIP_VARIABLE}=1 to skip it.",
            pytrace=False,
        )
    missing = [name for name in ("useradd", "userdel", "runuser") if not tool(name)]
    if missing:
        pytest.fail(
            f"The JupyterHub term test cannot create system users here: {', '.join(missing)} is missing "
            f"(apt-get install passwd util-linux). Install it, or set {SKIP_VARIABLE}=1 to skip the test.",
            pytrace=False,
        )


class Term:
    """The run's folders, users and hub, and the ways the test talks to them."""

    def __init__(self, base: Path, python: Path, proxy: Path) -> None:
        self.base = base
        self.python = python
        self.venv_bin = python.parent
        self.proxy = proxy
        suffix = secrets.token_hex(3)
        self.instructor = f"{USER_PREFIX}i{suffix}"
        self.learner = f"{USER_PREFIX}l{suffix}"
        self.users: list[str] = []  # created, so to delete
        self.course = base / "course"
        self.exchange = base / "exchange"
        self.state = base / "hub"  # root's alone: the hub's database, cookie secret, tokens and log
        self.log = self.state / "hub.log"
        self.token = secrets.token_hex(32)
        self.url = ""
        self.process: subprocess.Popen | None = None

    def home(self, user: str) -> Path:
        return Path(pwd.getpwnam(user).pw_dir)

    # --- set-up ---------------------------------------------------------------------------

    def add_user(self, name: str) -> None:
        home = self.base / "home" / name
        done = subprocess.run(
            [tool("useradd"), "--create-home", "--home-dir", str(home), "--shell", "/bin/bash", "--user-group", name],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"useradd could not create the system user {name}: {done.stderr.strip()}", pytrace=False)
        self.users.append(name)

    def chown(self, path: Path, user: str) -> None:
        entry = pwd.getpwnam(user)
        for p in [path, *path.rglob("*")]:
            os.lchown(p, entry.pw_uid, entry.pw_gid)

    def write_course(self) -> None:
        """A copy of the course, the instructor's, whose config names the run's exchange."""
        self.course.mkdir()
        shutil.copytree(LABS / "source", self.course / "source")
        config = (LABS / "nbgrader_config.py").read_text(encoding="utf-8")
        config += f"\nc.Exchange.root = {str(self.exchange)!r}\nc.CourseDirectory.course_id = {COURSE_ID!r}\n"
        (self.course / "nbgrader_config.py").write_text(config, encoding="utf-8")
        self.chown(self.course, self.instructor)
        self.exchange.mkdir(mode=0o777)
        os.chmod(self.exchange, 0o1777)  # every user may add to it, as nbgrader's exchange expects

    def write_learner_config(self) -> None:
        folder = self.home(self.learner) / ".jupyter"
        folder.mkdir()
        (folder / "nbgrader_config.py").write_text(
            f"c = get_config()  # noqa: F821\nc.Exchange.root = {str(self.exchange)!r}\nc.CourseDirectory.course_id = {COURSE_ID!r}\n",
            encoding="utf-8",
        )
        self.chown(folder, self.learner)

    def write_hub_config(self) -> Path:
        self.state.mkdir(mode=0o700)
        public, hub, api = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{public}"
        secret = self.state / "cookie_secret"
        secret.write_text(secrets.token_hex(32))
        os.chmod(secret, 0o600)
        settings = {
            "bind_url": self.url,
            "hub_bind_url": f"http://127.0.0.1:{hub}",
            "proxy_api_url": f"http://127.0.0.1:{api}",
            "proxy_command": [str(self.proxy)],
            "proxy_pid_file": str(self.state / "proxy.pid"),
            "cookie_secret_file": str(secret),
            "db_url": f"sqlite:///{self.state / 'jupyterhub.sqlite'}",
            "users": [self.instructor, self.learner],
            "singleuser": [str(self.venv_bin / "jupyterhub-singleuser")],
            "service": SERVICE,
            "token": self.token,
            "proxy_token": secrets.token_hex(32),
            "timeout": READY_TIMEOUT,
        }
        config = self.state / "jupyterhub_config.py"
        config.write_text(HUB_CONFIG.format(settings=json.dumps(settings)), encoding="utf-8")
        return config

    def start_hub(self, config: Path) -> None:
        env = {"PATH": f"{self.venv_bin}:{SYSTEM_PATH}", "LANG": "C.UTF-8", "HOME": str(self.state)}
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [str(self.venv_bin / "jupyterhub"), "-f", str(config)],
                cwd=self.state,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.wait_for("the hub to answer on /hub/api", lambda: self.call("GET", "/hub/api", auth=False)[0] == 200)

    # --- tear-down ------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the hub (which stops the servers and the proxy), then whatever of the run is left."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        try:
            proxy_pid = int((self.state / "proxy.pid").read_text().strip())
        except (OSError, ValueError):
            proxy_pid = None
        if proxy_pid and _is_running(proxy_pid, str(self.proxy)):
            os.kill(proxy_pid, signal.SIGKILL)
        uids = set()
        for name in self.users:
            try:
                uids.add(pwd.getpwnam(name).pw_uid)
            except KeyError:
                pass
        for pid in _processes_of(uids):  # only the run's own users' processes
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for name in self.users:
            subprocess.run([tool("userdel"), "--force", "--remove", name], capture_output=True, check=False)
        shutil.rmtree(self.base, ignore_errors=True)

    # --- talking to the hub, the servers and the CLI ---------------------------------------

    def wait_for(self, what: str, ready, timeout: float = READY_TIMEOUT) -> None:
        """Poll until ready() is true; the hub exiting or the deadline passing fails the test with the log."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if ready():
                    return
            except (OSError, urllib.error.URLError):
                pass  # not listening yet
            if time.monotonic() > deadline:
                pytest.fail(
                    f"Timed out after {timeout:.0f} s waiting for {what}.\nhub log:\n{tail(self.log)}", pytrace=False
                )
            try:
                self.process.wait(timeout=0.25)  # the pause between two polls, and a watch on the hub
            except subprocess.TimeoutExpired:
                continue
            pytest.fail(
                f"The hub exited ({self.process.returncode}) while waiting for {what}.\nhub log:\n{tail(self.log)}",
                pytrace=False,
            )

    def call(self, method: str, path: str, body=None, auth: bool = True) -> tuple[int, object]:
        headers = {"Content-Type": "application/json"}
        if auth:
            headers["Authorization"] = f"token {self.token}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with HTTP.open(request, timeout=120) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read().decode(errors="replace")
        try:
            return status, json.loads(text) if text else None
        except ValueError:
            return status, text

    def api(self, method: str, path: str, body=None, expect=(200,)):
        status, answer = self.call(method, path, body)
        assert status in expect, f"{method} {path} answered {status}: {answer}\nhub log:\n{tail(self.log)}"
        return answer

    def user_api(self, user: str, method: str, path: str, body=None, expect=(200,)):
        """A call to the user's single-user server, through the hub's proxy."""
        return self.api(method, f"/user/{user}{path}", body, expect)

    def assignments(self, user: str, action: str | None = None) -> list[dict]:
        """nbgrader's assignment list endpoints of the user's server: list, or fetch/submit/fetch_feedback, then list."""
        if action is None:
            answer = self.user_api(user, "GET", f"/assignments?course_id={urllib.parse.quote(COURSE_ID)}")
        else:
            answer = self.user_api(
                user, "POST", f"/assignments/{action}", {"course_id": COURSE_ID, "assignment_id": LAB}
            )
        assert isinstance(answer, dict) and answer.get("success"), (
            f"nbgrader's assignment list ({action or 'list'}) failed for {user}: {answer}\nhub log:\n{tail(self.log)}"
        )
        return answer["value"]

    def start_server(self, user: str) -> None:
        """Ask the hub to start the user's server; wait_for_server() waits for it."""
        self.api("POST", f"/hub/api/users/{user}/server", expect=(201, 202))

    def wait_for_server(self, user: str) -> None:
        def ready() -> bool:
            model = self.api("GET", f"/hub/api/users/{user}")
            return bool(model.get("servers", {}).get("", {}).get("ready"))

        self.wait_for(f"the single-user server of {user} to be ready", ready)

    def as_user(self, user: str, *command: str, cwd: Path | None = None) -> str:
        """A command run as the user (runuser), with a clean environment and the venv first on PATH."""
        env = [
            "env",
            "-i",
            f"HOME={self.home(user)}",
            f"USER={user}",
            f"LOGNAME={user}",
            f"PATH={self.venv_bin}:{SYSTEM_PATH}",
            "LANG=C.UTF-8",
        ]
        done = subprocess.run(
            [tool("runuser"), "-u", user, "--", *env, *command],
            cwd=cwd or self.course,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 0, (
            f"`{' '.join(command)}` as {user} exited {done.returncode}\nstdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
        )
        return done.stdout + done.stderr

    def grader(self, *args: str) -> str:
        return self.as_user(self.instructor, str(self.python), "-m", "grader", *args, "--course", str(self.course))

    def nbgrader(self, *args: str) -> str:
        return self.as_user(self.instructor, str(self.venv_bin / "nbgrader"), *args)


def _is_running(pid: int, command: str) -> bool:
    try:
        return command.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _processes_of(uids: set[int]) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        found = re.search(r"^Uid:\s+(\d+)", status, re.MULTILINE)
        if found and int(found.group(1)) in uids:
            pids.append(int(entry.name))
    return pids


HUB_CONFIG = '''\
import json

from jupyterhub.auth import Authenticator


class NoLogin(Authenticator):
    """Nobody logs in: the test acts through the REST API. The hub's user names are the system users'."""

    async def authenticate(self, handler, data):
        return None


s = json.loads({settings!r})
c = get_config()  # noqa: F821
c.JupyterHub.bind_url = s["bind_url"]
c.JupyterHub.hub_bind_url = s["hub_bind_url"]
c.JupyterHub.cookie_secret_file = s["cookie_secret_file"]
c.JupyterHub.db_url = s["db_url"]
c.ConfigurableHTTPProxy.api_url = s["proxy_api_url"]
c.ConfigurableHTTPProxy.command = s["proxy_command"]
c.ConfigurableHTTPProxy.pid_file = s["proxy_pid_file"]
c.ConfigurableHTTPProxy.auth_token = s["proxy_token"]
c.JupyterHub.authenticator_class = NoLogin
c.Authenticator.allowed_users = set(s["users"])
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = s["singleuser"]
c.Spawner.start_timeout = s["timeout"]
c.Spawner.http_timeout = s["timeout"]
c.JupyterHub.services = [{{"name": s["service"], "api_token": s["token"]}}]
c.JupyterHub.load_roles = [
    {{"name": s["service"], "scopes": ["admin:users", "admin:servers", "access:servers"], "services": [s["service"]]}}
]
'''


@pytest.fixture
def term():
    require_machine()
    base = Path(tempfile.mkdtemp(prefix="mcpcourse-hub-", dir="/tmp"))
    os.chmod(base, 0o755)  # the users' homes, the course and the exchange are inside
    with hubenv.locked():  # one run at a time: they share the venv
        try:
            python, proxy = hubenv.ensure()
        except (hubenv.SetupFailed, subprocess.TimeoutExpired) as exc:
            shutil.rmtree(base, ignore_errors=True)
            pytest.fail(f"The JupyterHub term test could not set up what it runs on: {exc}", pytrace=False)
        t = Term(base, python, proxy)
        try:
            t.add_user(t.instructor)
            t.add_user(t.learner)
            t.as_user(
                t.learner, str(python), "-c", "import jupyterhub", cwd=base
            )  # the venv is readable by the learner
            t.write_course()
            t.write_learner_config()
            t.start_hub(t.write_hub_config())
            yield t
        finally:
            t.stop()


def fill_in(released: dict, solution: dict) -> dict:
    """The learner's work: each answer cell of the released notebook gets the solution's code, but one."""
    answers = {
        cell["metadata"]["nbgrader"]["grade_id"]: "".join(cell["source"])
        for cell in solution["cells"]
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution")
    }
    assert LEFT_AS_RELEASED in answers, f"{LAB} has no answer cell {LEFT_AS_RELEASED!r} to leave unanswered"
    filled = 0
    for cell in released["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in answers and grade_id != LEFT_AS_RELEASED:
            code = answers[grade_id].splitlines()
            cell["source"] = "\n".join(
                line for line in code if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")
            )
            filled += 1
    assert filled == len(answers) - 1, (
        f"the released {LAB} lacks answer cells of the source: filled {filled} of {len(answers) - 1}"
    )
    return released


def test_a_term_on_jupyterhub(term: Term) -> None:
    learner = term.learner
    started = time.monotonic()
    term.start_server(learner)  # it starts while the instructor releases

    # 1. The instructor releases lab 1 into the exchange.
    term.grader("release", LAB)
    term.nbgrader("release_assignment", LAB)
    term.wait_for_server(learner)
    listed = term.assignments(learner)
    assert any(a["assignment_id"] == LAB and a["status"] == "released" for a in listed), (
        f"{LAB} is not listed as released: {listed}"
    )

    # 2. The learner fetches it, answers it in the server's contents API (as JupyterLab saves it) and submits it.
    fetched = [a for a in term.assignments(learner, "fetch") if a["assignment_id"] == LAB and a["status"] == "fetched"]
    assert fetched, f"{LAB} was not fetched\nhub log:\n{tail(term.log)}"
    path = urllib.parse.quote(fetched[0]["notebooks"][0]["path"])
    model = term.user_api(learner, "GET", f"/api/contents/{path}?content=1&type=notebook")
    solution = json.loads((LABS / "source" / LAB / f"{LAB}.ipynb").read_text(encoding="utf-8"))
    term.user_api(
        learner,
        "PUT",
        f"/api/contents/{path}",
        {"type": "notebook", "format": "json", "content": fill_in(model["content"], solution)},
    )
    on_disk = term.home(learner) / fetched[0]["notebooks"][0]["path"]
    assert on_disk.stat().st_uid == pwd.getpwnam(learner).pw_uid, (
        "the learner's notebook was not written as the learner"
    )
    submitted = [
        a for a in term.assignments(learner, "submit") if a["assignment_id"] == LAB and a["status"] == "submitted"
    ]
    assert submitted and submitted[0]["submissions"], f"{LAB} was not submitted: {submitted}"

    # 3. The instructor collects, autogrades what was collected (changing none of it), writes and releases feedback.
    term.nbgrader("collect", LAB)
    collected = term.course / "submitted"
    assert (collected / learner / LAB / f"{LAB}.ipynb").is_file(), f"nbgrader collect left no {LAB}.ipynb of {learner}"
    before = sha256_tree(collected)
    graded = term.grader("autograde", str(collected))
    assert sha256_tree(collected) == before, f"autograde changed the collected submissions:\n{graded}"
    assert "autograded 1 of 1" in graded, graded
    term.grader("feedback")
    term.nbgrader("release_feedback", LAB)

    # 4. The learner fetches the feedback: its score is the gradebook's.
    answer = term.assignments(learner, "fetch_feedback")
    submissions = [
        s for a in answer if a["assignment_id"] == LAB and a["status"] == "submitted" for s in a["submissions"]
    ]
    assert submissions and submissions[-1].get("local_feedback_path"), (
        f"no feedback was fetched: {answer}\nhub log:\n{tail(term.log)}"
    )
    page_path = urllib.parse.quote(f"{submissions[-1]['local_feedback_path']}/{LAB}.html")
    page = term.user_api(learner, "GET", f"/api/contents/{page_path}?content=1&type=file&format=text")["content"]
    shown = re.search(rf"<h4>{LAB} \(Score: ([\d.]+) / ([\d.]+)\)</h4>", page)
    assert shown, f"the feedback shows no score for {LAB}:\n{page[:2000]}"
    feedback_score, feedback_max = float(shown.group(1)), float(shown.group(2))

    book = term.grader("gradebook")
    row = re.search(rf"^{re.escape(learner)}\s+{LAB}\s+([\d.]+)/([\d.]+)", book, re.MULTILINE)
    assert row, f"the gradebook lists no score of {learner} for {LAB}:\n{book}"
    book_score, book_max = float(row.group(1)), float(row.group(2))

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{term.course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        recorded = gb.find_submission(LAB, learner)
        recorded_score, recorded_max = recorded.score, recorded.max_score

    assert (book_score, book_max) == pytest.approx((recorded_score, recorded_max)), (
        f"the gradebook command and nbgrader disagree:\n{book}"
    )
    assert (feedback_score, feedback_max) == pytest.approx((round(recorded_score, 2), round(recorded_max, 2))), (
        f"the feedback shows {feedback_score}/{feedback_max}, the gradebook {recorded_score}/{recorded_max}"
    )
    assert 0 < recorded_score < recorded_max, (
        f"{LEFT_AS_RELEASED} was left unanswered, yet the score is {recorded_score}/{recorded_max}"
    )
    print(
        f"term on JupyterHub: {recorded_score:g}/{recorded_max:g} for {learner}, in {time.monotonic() - started:.0f} s"
    )
