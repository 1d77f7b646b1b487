"""The supervisor around the learner host, run for real on small Python commands.

Each test starts the supervisor as grading does, with a command in place of the host, and reads
the report it writes: once as new programs (``python -I supervisor.py -- python -c ...``) and once
forked from the fork server (``forkserver.py``: the supervisor and the host forked, the host's code
run in the warm interpreter), since grading uses the second where it can and the first otherwise.
The process boundary is the thing under test, so nothing is mocked.
"""

from __future__ import annotations

import errno
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.engine import forkserver, supervisor

WAIT_SECONDS = 60  # a bound on every wait below; each case ends in about a second
LIMITS = {
    "cpu-seconds": 5,
    "memory-mb": 512,
    "processes": 32,
    "file-mb": 4,
    "output-bytes": 100_000,
    "message-bytes": 100_000,
}
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox user and hidden folders need root")


def command(
    tmp_path: Path,
    code: str,
    *,
    hide: tuple[Path, ...] = (),
    sandbox_user: bool = True,
    view: Path | None = None,
    show: tuple[Path, ...] = (),
    require: bool = False,
    direct: bool = False,
    **limits: int,
) -> list[str]:
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    user = supervisor.sandbox_user() if sandbox_user else None
    args = [
        sys.executable,
        "-I",
        supervisor.__file__,
        "--report",
        str(tmp_path / "report.json"),
        "--workdir",
        str(work),
    ]
    if user is not None:
        for path in [work, *work.iterdir()]:
            os.chown(path, user, user)
        args += ["--user", str(user)]
    for name, value in {**LIMITS, **{k.replace("_", "-"): v for k, v in limits.items()}}.items():
        args += [f"--{name}", str(value)]
    for folder in hide:
        args += ["--hide", str(folder)]
    if view is not None:
        args += ["--view", str(view)]
    for path in show:
        args += ["--show", str(path)]
    if require:
        args.append("--require-isolation")
    if direct:
        args.append("--replies-direct")
    return [*args, "--", sys.executable, "-c", code]


@pytest.fixture(scope="module")
def warm():
    server = forkserver.ForkServer()
    yield server
    server.close()


@pytest.fixture(params=["exec", "fork"])
def start(request, warm):
    """How the supervisor and its host start: as new programs, or forked from the fork server."""
    return warm if request.param == "fork" else None


def read_all(stream: socket.socket) -> bytes:
    stream.settimeout(WAIT_SECONDS)
    chunks = []
    while chunk := stream.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def forked(warm: forkserver.ForkServer, tmp_path: Path, argv: list[str]) -> subprocess.CompletedProcess:
    """Run the supervisor through the fork server with ``argv``; what it relayed and kept, as ``subprocess.run`` gives."""
    with open(tmp_path / "stderr.log", "w+b") as errlog:
        requests, replies, pid = warm.launch(argv, errlog)
        with requests, replies:
            requests.shutdown(socket.SHUT_WR)  # no requests: the host reads the end of its input
            stdout = read_all(replies)
        warm.ended(pid)
        errlog.seek(0)
        return subprocess.CompletedProcess(argv, 0, stdout, errlog.read())


SUPERVISOR = 3  # command()[:3] starts the supervisor as a program: python -I supervisor.py


def supervise(tmp_path: Path, code: str, start=None, **options) -> tuple[subprocess.CompletedProcess, dict]:
    args = command(tmp_path, code, **options)
    if start is not None:
        done = forked(start, tmp_path, args[SUPERVISOR:])
    else:
        done = subprocess.run(args, capture_output=True, stdin=subprocess.DEVNULL, timeout=WAIT_SECONDS, check=False)
    return done, json.loads((tmp_path / "report.json").read_text())


def test_the_host_gets_only_the_allowed_variables_and_a_folder_of_its_own(tmp_path: Path, monkeypatch, start) -> None:
    monkeypatch.setenv("GRADER_SECRET", "s3cr3t")
    code = "import json, os; print(json.dumps({'env': dict(os.environ), 'cwd': os.getcwd()}))"
    done, report = supervise(tmp_path, code, start)
    seen = json.loads(done.stdout)
    assert "GRADER_SECRET" not in seen["env"]
    assert set(seen["env"]) <= {
        *supervisor.ALLOWED_ENV,
        "HOME",
        "TMPDIR",
        "PYTHONDONTWRITEBYTECODE",
        "MALLOC_ARENA_MAX",
    }
    assert seen["env"]["HOME"] == seen["cwd"] == str(tmp_path / "work")
    assert report["reason"] == supervisor.EXIT and report["exit"] == 0


@as_root
def test_as_root_the_host_runs_as_a_user_of_its_own_that_cannot_read_other_processes(tmp_path: Path, start) -> None:
    code = (
        "import os\n"
        "try:\n    open(f'/proc/{os.getppid()}/environ').read(); readable = True\n"
        "except OSError:\n    readable = False\n"
        "print(os.getuid(), os.getgid(), len(os.getgroups()), readable)"
    )
    done, report = supervise(tmp_path, code, start)
    uid, gid, groups, readable = done.stdout.split()
    assert int(uid) == int(gid) == report["user"] != 0
    assert groups == b"0" and readable == b"False"


# Run without a sandbox user (as when the grader is not root): what the host can write, read and undo.
WITHOUT_A_USER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
gradebook, answers = sys.argv[1], sys.argv[2]

def attempt(action):
    try:
        action()
        return "done"
    except OSError as exc:
        return str(exc.errno)

def call(result):
    if result != 0:
        raise OSError(ctypes.get_errno(), "refused")

def write(path):
    with open(path, "a") as out:
        out.write("x")

def unhide():
    call(libc.umount2(os.path.dirname(answers).encode(), 2))

def regain():  # a user namespace of its own gives a process capabilities again, but not over these mounts
    call(libc.unshare(0x10000000 | 0x00020000))
    call(libc.mount(None, b"/", None, 0x1000 | 0x20, None))  # remount, bind: clearing read-only
    write(gradebook)

print(attempt(lambda: write(gradebook)), attempt(lambda: write("mine.txt")), attempt(lambda: open(answers).read()), attempt(unhide), attempt(regain))
"""


def test_without_a_sandbox_user_the_host_can_write_only_its_folder_and_not_see_hidden_ones(
    tmp_path: Path, start
) -> None:
    gradebook, answers = tmp_path / "gradebook.db", tmp_path / "answers" / "key.txt"
    answers.parent.mkdir()
    gradebook.write_text("scores")
    answers.write_text("the answer")
    args = command(tmp_path, WITHOUT_A_USER, hide=(answers.parent,), sandbox_user=False) + [
        str(gradebook),
        str(answers),
    ]
    done = (
        forked(start, tmp_path, args[SUPERVISOR:])
        if start
        else subprocess.run(args, capture_output=True, timeout=WAIT_SECONDS, check=False)
    )
    report = json.loads((tmp_path / "report.json").read_text())
    if report.get("readOnly") is not True:
        pytest.skip(f"this machine refuses unprivileged user namespaces: {report.get('fallbacks')}")
    wrote, wrote_own, read, unhid, regained = done.stdout.split()
    assert (wrote, wrote_own, read) == (str(errno.EROFS).encode(), b"done", str(errno.EACCES).encode()), done.stderr
    assert unhid != b"done" and regained != b"done"
    assert gradebook.read_text() == "scores" and (tmp_path / "work" / "mine.txt").read_text() == "x"
    assert report["user"] is None and report["hidden"] == [str(answers.parent)]


# Forks 8 times over, every process forking on: 256 processes unless something stops it.
# Each process that gets through leaves its pid in pids/, then waits to be stopped.
BOUNDED_FORK_BOMB = """
import ctypes, os, time
fork = ctypes.CDLL(None).fork
for _ in range(8):
    fork()
open(f"pids/{os.getpid()}", "w").close()
while True:
    time.sleep(1)
"""


def test_a_fork_bomb_is_held_at_the_process_limit_and_nothing_it_started_survives(tmp_path: Path, start) -> None:
    (tmp_path / "work" / "pids").mkdir(parents=True)
    _done, report = supervise(tmp_path, BOUNDED_FORK_BOMB, start, processes=16)
    pids = [int(p.name) for p in (tmp_path / "work" / "pids").iterdir()]
    assert report["reason"] == supervisor.PROCESSES
    assert 1 <= len(pids) <= 16 and report["tasksPeak"] <= 16
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_one_message_longer_than_the_cap_stops_the_host_before_it_reaches_the_grader(tmp_path: Path, start) -> None:
    code = "import sys, time\nsys.stdout.write('x' * 300_000)\nsys.stdout.flush()\ntime.sleep(60)"
    done, report = supervise(tmp_path, code, start, message_bytes=100_000)
    assert report["reason"] == supervisor.MESSAGE
    assert len(done.stdout) <= 100_000


def test_messages_within_the_cap_pass_through_unchanged(tmp_path: Path, start) -> None:
    code = "import sys\nfor n in range(5):\n    sys.stdout.write(f'{n}:' + 'y' * 90_000 + '\\n')"
    done, report = supervise(tmp_path, code, start, message_bytes=100_000)
    assert done.stdout.decode() == "".join(f"{n}:" + "y" * 90_000 + "\n" for n in range(5))
    assert report["reason"] == supervisor.EXIT and report["exit"] == 0


# With --replies-direct (how grading starts a host from the fork server), the host writes its replies straight to the
# supervisor's stdout, and whoever reads them caps each message: the supervisor relays nothing, and SIGUSR1 tells it
# that a message was too long.
LONG_THEN_WAITS = "import sys, time\nsys.stdout.write('x' * 300_000)\nsys.stdout.flush()\ntime.sleep(60)"


def test_with_replies_direct_the_host_writes_to_the_reader_itself(tmp_path: Path, start) -> None:
    code = "import os, sys\nsys.stdout.write('z' * 150_000 + '\\n')\nprint(os.readlink('/proc/self/fd/1'))"
    done, report = supervise(tmp_path, code, start, message_bytes=100_000, direct=True)
    lines = done.stdout.decode().splitlines()
    assert lines[0] == "z" * 150_000  # past the cap, and nothing stopped it: the supervisor is not on the way
    if start is not None:
        assert lines[1].startswith("socket:")  # the reply socket itself, not a pipe to the supervisor
    assert report["reason"] == supervisor.EXIT and report["exit"] == 0


def read_past(stream, count: int) -> bytes:
    seen = b""
    while len(seen) <= count:
        chunk = stream.recv(65536) if isinstance(stream, socket.socket) else os.read(stream.fileno(), 65536)
        assert chunk, "the host's message ended before the cap"
        seen += chunk
    return seen


def test_with_replies_direct_sigusr1_stops_the_host_for_a_message_too_long(tmp_path: Path, start) -> None:
    args = command(tmp_path, LONG_THEN_WAITS, message_bytes=100_000, direct=True)
    if start is None:
        with subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as run:
            read_past(run.stdout, 100_000)
            os.kill(run.pid, signal.SIGUSR1)
            run.communicate(timeout=WAIT_SECONDS)
    else:
        with open(tmp_path / "stderr.log", "wb") as errlog:
            requests, replies, pid = start.launch(args[SUPERVISOR:], errlog, direct=True)
        with requests, replies:
            replies.settimeout(WAIT_SECONDS)
            read_past(replies, 100_000)
            os.kill(pid, signal.SIGUSR1)
            read_all(replies)  # the supervisor and the host close it once the host is stopped
        start.ended(pid)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["reason"] == supervisor.MESSAGE
    assert report["signal"] == "SIGKILL"  # stopped, not left to sleep out its minute


def test_printing_past_the_cap_stops_the_host_and_only_a_capped_copy_is_kept(tmp_path: Path, start) -> None:
    code = "import sys\nfor _ in range(100):\n    sys.stderr.write('x' * 10**6)\nsys.stderr.flush()"
    done, report = supervise(tmp_path, code, start, output_bytes=100_000)
    assert report["reason"] == supervisor.OUTPUT
    assert 0 < len(done.stderr) <= 100_000


def test_cpu_time_past_the_limit_ends_the_host(tmp_path: Path, start) -> None:
    _done, report = supervise(tmp_path, "while True:\n    pass", start, cpu_seconds=1)
    assert report["reason"] == supervisor.CPU and report["signal"] == "SIGXCPU"


def test_a_crash_is_reported_with_its_signal(tmp_path: Path, start) -> None:
    _done, report = supervise(tmp_path, "import ctypes; ctypes.string_at(0)", start)
    assert report["reason"] == supervisor.CRASH and report["signal"] == "SIGSEGV"


def test_the_limits_reach_the_host(tmp_path: Path, start) -> None:
    code = (
        "import resource as r\n"
        "print(*(r.getrlimit(k)[0] for k in (r.RLIMIT_CPU, r.RLIMIT_AS, r.RLIMIT_FSIZE, r.RLIMIT_CORE)))"
    )
    done, _report = supervise(tmp_path, code, start, cpu_seconds=7, memory_mb=300, file_mb=3)
    assert done.stdout.split() == [b"7", str(300 * 2**20).encode(), str(3 * 2**20).encode(), b"0"]


@as_root
def test_as_root_hidden_folders_are_out_of_the_hosts_sight(tmp_path: Path, start) -> None:
    # A folder any user could read (pytest's own folders are private, and already out of sight).
    with tempfile.TemporaryDirectory() as shared:
        answers = Path(shared) / "answers"
        answers.mkdir()
        (answers / "key.txt").write_text("the answer")
        for path, mode in ((Path(shared), 0o755), (answers, 0o755), (answers / "key.txt", 0o644)):
            path.chmod(mode)
        code = f"try:\n    print(open({str(answers / 'key.txt')!r}).read())\nexcept OSError as exc:\n    print(type(exc).__name__)"
        seen, _ = supervise(tmp_path / "seen", code, start)
        hidden, report = supervise(tmp_path / "hidden", code, start, hide=(answers,))
        assert seen.stdout.strip() == b"the answer"
        assert hidden.stdout.strip() == b"PermissionError"
        assert report["hidden"] == [str(answers)]
        assert (answers / "key.txt").read_text() == "the answer"  # hidden from the host only


@pytest.mark.parametrize(
    "sandbox_user", [pytest.param(True, marks=as_root, id="own-user"), pytest.param(False, id="confined")]
)
def test_a_hidden_folder_shown_in_part_shows_the_host_only_the_paths_shown(
    tmp_path: Path, start, sandbox_user: bool
) -> None:
    """As the grader's package in a host's fallback (no view): hidden, but for the engine modules the host runs."""
    if not sandbox_user and not supervisor.user_namespaces_allowed():
        pytest.skip("without a sandbox user the host needs a user namespace, which this machine does not allow")
    with tempfile.TemporaryDirectory() as shared:
        package = Path(shared) / "package"
        (package / "engine").mkdir(parents=True)
        (package / "engine" / "lockdown.py").write_text("shown")
        (package / "answers.py").write_text("the answer")
        for path in (Path(shared), package, package / "engine"):
            path.chmod(0o755)
        for path in (package / "engine" / "lockdown.py", package / "answers.py"):
            path.chmod(0o644)
        code = (
            "import os, sys\n"
            "def read(path):\n"
            "    try:\n        return open(path).read()\n"
            "    except OSError as exc:\n        return type(exc).__name__\n"
            f"print(read({str(package / 'engine' / 'lockdown.py')!r}), read({str(package / 'answers.py')!r}), sorted(os.listdir({str(package)!r})))"
        )
        done, report = supervise(
            tmp_path,
            code,
            start,
            hide=(package,),
            show=(package / "engine" / "lockdown.py",),
            sandbox_user=sandbox_user,
        )
        assert done.stdout.decode().split() == ["shown", "FileNotFoundError", "['engine']"], done.stderr
        assert report["hidden"] == [str(package)]
        assert (package / "answers.py").read_text() == "the answer"  # hidden from the host only


SAYS_PID_AND_WAITS = "import os, time\nprint(os.getpid(), flush=True)\nwhile True:\n    time.sleep(1)"


def pid_said(running: subprocess.Popen) -> int:
    """The process id the host printed first, once it did."""
    with selectors.DefaultSelector() as ready:
        ready.register(running.stdout, selectors.EVENT_READ)
        assert ready.select(WAIT_SECONDS), "the host never said it was running"
    return int(running.stdout.readline())


def wait_for_exit(pid: int) -> None:
    try:
        exited = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        with selectors.DefaultSelector() as ended:
            ended.register(exited, selectors.EVENT_READ)
            assert ended.select(WAIT_SECONDS), f"process {pid} outlived the test's wait"
    finally:
        os.close(exited)


def test_stopping_the_supervisor_stops_the_host_and_reports_it(tmp_path: Path) -> None:
    code = SAYS_PID_AND_WAITS
    with subprocess.Popen(command(tmp_path, code), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE) as running:
        host = pid_said(running)
        running.send_signal(signal.SIGTERM)
        running.wait(WAIT_SECONDS)
    assert json.loads((tmp_path / "report.json").read_text())["reason"] == supervisor.STOPPED
    with pytest.raises(ProcessLookupError):
        os.kill(host, 0)


def test_when_the_grader_dies_the_host_is_stopped_too(tmp_path: Path) -> None:
    code = SAYS_PID_AND_WAITS
    grader = f"import subprocess\nsubprocess.run({command(tmp_path, code)!r})"
    with subprocess.Popen([sys.executable, "-c", grader], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as running:
        host = pid_said(running)
        running.kill()
    wait_for_exit(host)


# --- forked from the fork server --------------------------------------------------------------


def test_a_forked_host_holds_no_descriptor_of_its_supervisor_or_the_fork_server(tmp_path: Path, warm) -> None:
    code = "import os\nprint(sorted(int(fd) for fd in os.listdir('/proc/self/fd')))"
    done, report = supervise(tmp_path, code, warm)
    # 0: its requests, 1 and 2: pipes to its supervisor, 3: the listing's own descriptor.
    assert json.loads(done.stdout) == [0, 1, 2, 3]
    assert report["reason"] == supervisor.EXIT and report["exit"] == 0


def test_a_forked_host_cannot_write_into_its_requests(tmp_path: Path, warm) -> None:
    code = "import os\ntry:\n    os.write(0, b'{}\\n'); print('wrote')\nexcept OSError as exc:\n    print(type(exc).__name__)"
    done, _ = supervise(tmp_path, code, warm)
    assert done.stdout.strip() == b"BrokenPipeError"


def test_a_forked_host_exits_with_its_status_and_reports_errors_as_a_program_would(tmp_path: Path, warm) -> None:
    _, report = supervise(tmp_path / "exit", "import sys; sys.exit(7)", warm)
    assert report["reason"] == supervisor.EXIT and report["exit"] == 7
    done, report = supervise(tmp_path / "raise", "raise ValueError('no')", warm)
    assert report["exit"] == 1 and b"ValueError: no" in done.stderr


def test_stopping_a_forked_supervisor_stops_the_host_and_reports_it(tmp_path: Path, warm) -> None:
    with open(tmp_path / "stderr.log", "wb") as errlog:
        requests, replies, supervisor_pid = warm.launch(command(tmp_path, SAYS_PID_AND_WAITS)[SUPERVISOR:], errlog)
    with requests, replies:
        replies.settimeout(WAIT_SECONDS)
        host = int(replies.recv(100).split()[0])
        os.kill(supervisor_pid, signal.SIGTERM)
        read_all(replies)  # the supervisor closes the connection when it is done
    assert json.loads((tmp_path / "report.json").read_text())["reason"] == supervisor.STOPPED
    with pytest.raises(ProcessLookupError):
        os.kill(host, 0)


def test_when_the_grader_dies_the_fork_server_and_its_hosts_are_stopped_too(tmp_path: Path) -> None:
    argv = command(tmp_path, SAYS_PID_AND_WAITS)[SUPERVISOR:]
    grader = (
        "import sys\nfrom grader.engine import forkserver\n"
        f"requests, replies, _ = forkserver.ForkServer().launch({argv!r}, sys.stderr)\n"
        "print(replies.recv(100).decode().split()[0], flush=True)\n"
        "sys.stdin.read()\n"
    )
    with subprocess.Popen([sys.executable, "-c", grader], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as running:
        host = pid_said(running)
        running.kill()
    wait_for_exit(host)


def test_a_fork_server_that_died_is_started_again(tmp_path: Path) -> None:
    server = forkserver.ForkServer()
    try:
        done, _ = supervise(tmp_path / "first", "print('one')", server)
        server._process.kill()
        server._process.wait()
        done_again, report = supervise(tmp_path / "again", "print('two')", server)
        assert (done.stdout, done_again.stdout) == (b"one\n", b"two\n")
        assert report["reason"] == supervisor.EXIT
    finally:
        server.close()
    assert server._process is None


def test_the_fork_server_refuses_a_bad_request_and_goes_on_serving(tmp_path: Path, warm) -> None:
    with open(tmp_path / "stderr.log", "wb") as errlog:
        socket.send_fds(warm._control, [b'{"no argv": []}'], [errlog.fileno()] * 3)
    assert "error" in json.loads(warm._control.recv(forkserver.MESSAGE))
    done, _ = supervise(tmp_path, "print('still here')", warm)
    assert done.stdout == b"still here\n"


def test_the_fork_server_counts_the_cpu_time_of_the_hosts_it_started(tmp_path: Path, warm) -> None:
    before = warm.cpu_seconds()
    done, report = supervise(tmp_path, "import time\nwhile time.process_time() < 0.3:\n    pass\nprint('done')", warm)
    assert done.stdout == b"done\n" and report["cpuSeconds"] >= 0.3
    assert warm.cpu_seconds() - before >= 0.3


def test_a_process_forked_from_the_grader_gets_a_fork_server_of_its_own(tmp_path: Path) -> None:
    parents = forkserver.shared()
    child = os.fork()
    if child == 0:  # only the exit status leaves the child: 0 when it got its own fork server, and it works
        status = 1
        try:
            own = forkserver.shared()
            done, _ = supervise(tmp_path / "child", "print('child')", own)
            status = 0 if own is not parents and done.stdout == b"child\n" else 2
        finally:
            os._exit(status)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    done, _ = supervise(tmp_path / "parent", "print('parent')", forkserver.shared())
    assert forkserver.shared() is parents and done.stdout == b"parent\n"


# --- the host's own view of the files, no network, no other processes --------------------------


@as_root
def test_as_root_the_host_sees_only_the_system_its_interpreter_and_what_it_is_shown(tmp_path: Path, start) -> None:
    (tmp_path / "view").mkdir()
    shown = tmp_path / "shown.txt"
    shown.write_text("for the host")
    shown.chmod(0o644)
    secret = tmp_path / "beside.txt"  # in the same folder, not shown
    secret.write_text("not for the host")
    secret.chmod(0o644)
    code = (
        "import json, os, sys\n"
        "def reads(path):\n"
        "    try:\n        return open(path).read()\n"
        "    except OSError as exc:\n        return type(exc).__name__\n"
        "open('mine.txt', 'w').write('written')\n"
        "open('/dev/null', 'w').write('x'); zeros = open('/dev/zero', 'rb').read(4)\n"
        f"print(json.dumps({{'root': sorted(os.listdir('/')), 'shown': reads({str(shown)!r}), 'beside': reads({str(secret)!r}),\n"
        "  'devices': zeros == bytes(4), 'home': os.path.exists('/home'), 'etc': sorted(os.listdir('/etc')), 'mine': reads('mine.txt'),\n"
        "  'procs': sorted(e for e in os.listdir('/proc') if e.isdigit()) == sorted([str(os.getpid())]) or os.listdir('/proc')}))"
    )
    done, report = supervise(tmp_path, code, start, view=tmp_path / "view", show=(shown,))
    seen = json.loads(done.stdout)
    assert seen["shown"] == "for the host" and seen["beside"] == "FileNotFoundError"
    assert seen["mine"] == "written"  # its own folder stays writable
    assert seen["devices"]  # /dev/null takes writes, /dev/zero gives zeros
    assert not seen["home"] and not {"home", "srv", "var", "run", "mnt"} & set(seen["root"])
    assert set(seen["etc"]) <= set(supervisor.ETC_FILES)
    assert seen["procs"] is True  # its own process is all /proc shows
    assert report["protections"] == ["user", "files", "network", "processes"] and report["missing"] == []


@as_root
def test_as_root_the_host_has_no_network(tmp_path: Path, start) -> None:
    (tmp_path / "view").mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        code = (
            "import socket\n"
            f"try:\n    socket.create_connection(('127.0.0.1', {listener.getsockname()[1]}), timeout=5); print('connected')\n"
            "except OSError as exc:\n    print(type(exc).__name__, exc.errno)"
        )
        done, _ = supervise(tmp_path, code, start, view=tmp_path / "view")
    finally:
        listener.close()
    assert b"connected" not in done.stdout and b"OSError" in done.stdout


@as_root
def test_with_isolation_required_a_host_that_cannot_have_its_view_does_not_run(tmp_path: Path, start) -> None:
    marker = tmp_path / "work" / "ran"
    code = f"open({str(marker)!r}, 'w')"
    _, report = supervise(tmp_path, code, start, view=tmp_path / "no-such-folder", require=True)
    assert not marker.exists()
    assert report["fallbacks"] and "protections" not in report


@as_root
def test_without_isolation_required_the_fallback_says_which_protections_are_missing(tmp_path: Path, start) -> None:
    marker = tmp_path / "work" / "ran"
    code = f"open({str(marker)!r}, 'w')"
    _, report = supervise(tmp_path, code, start, view=tmp_path / "no-such-folder")
    assert marker.exists()
    assert report["fallbacks"] and report["protections"] == ["user"]
    assert set(report["missing"]) == {"files", "network", "processes"}


def test_without_a_sandbox_user_isolation_required_refuses_to_start_the_host(tmp_path: Path, start) -> None:
    marker = tmp_path / "work" / "ran"
    _, report = supervise(tmp_path, f"open({str(marker)!r}, 'w')", start, sandbox_user=False, require=True)
    assert not marker.exists()
    assert "sandbox user" in " ".join(report["fallbacks"])


def test_a_fork_server_begun_early_boots_beside_its_owner_and_serves_the_first_host(tmp_path: Path) -> None:
    server = forkserver.ForkServer()
    try:
        server.begin()
        # The process is started and begin() has returned without waiting for it to be ready.
        assert server._process is not None and server._control is None and server._pending is not None
        server.begin()  # a second begin starts nothing more
        first = server._process
        done, report = supervise(tmp_path, "print('first host')", server)
        assert done.stdout == b"first host\n" and report["reason"] == supervisor.EXIT
        assert server._process is first and server._pending is None
    finally:
        server.close()
    assert server._process is None


def test_a_fork_server_begun_and_never_used_ends_quietly_with_its_owner() -> None:
    code = "from grader.engine import forkserver\nforkserver.begin()\nprint(forkserver.shared()._process.pid, flush=True)\n"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT_SECONDS, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # the server finds its owner gone as it comes up: no traceback
    wait_for_exit(int(done.stdout))


# A subreaper (as the supervisor is) with a tree below it: A; B, whose second thread started C; E, orphaned by D,
# which ended; Z, which ended at once. Every live one waits on standard input; the line printed names them.
TREE = r"""
import ctypes, json, os, sys, threading
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
ready_r, ready_w = os.pipe()

def wait_for_input():
    os.write(ready_w, b"+")
    os.read(0, 1)

def child(body):
    pid = os.fork()
    if pid == 0:
        body()
        os._exit(0)
    return pid

def b():
    thread = threading.Thread(target=lambda: child(wait_for_input) and os.read(0, 1))
    thread.start()
    wait_for_input()

e = os.pipe()
def d():
    os.write(e[1], str(child(wait_for_input)).encode())

a, b, d, z = child(wait_for_input), child(b), child(d), child(lambda: None)
for pid in (d, z):  # ended, not reaped: zombies
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
e = int(os.read(e[0], 32))
got = 0
while got < 4:  # A, B, C, E
    got += len(os.read(ready_r, 4))
print(json.dumps({"live": [a, b, e], "with_thread": b, "zombies": [d, z]}), flush=True)
os.read(0, 1)
"""


@pytest.mark.skipif(not supervisor.LISTS_CHILDREN, reason="the kernel lists no thread's children")
def test_walking_down_the_children_finds_what_scanning_every_process_finds() -> None:
    """The supervisor finds its host's processes from itself down (each thread's children), not by reading every
    process on the machine; both ways find the same live processes: a grandchild a second thread started, an orphan
    re-parented to the subreaper, and no zombie."""
    tree = subprocess.Popen([sys.executable, "-c", TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        names = json.loads(tree.stdout.readline())
        walked = threads_of(supervisor.walked_descendants(tree.pid))
        scanned = threads_of(supervisor.scanned_descendants(tree.pid))
        assert walked == scanned
        assert set(names["live"]) < set(walked) and len(walked) == 4  # A, B, E and C (B's thread's child)
        assert not set(names["zombies"]) & set(walked)
        assert walked[names["with_thread"]] == 2
        assert threads_of(supervisor.descendants(tree.pid)) == walked
    finally:
        tree.stdin.close()
        tree.wait(WAIT_SECONDS)


def threads_of(found: dict[int, tuple[str, int]]) -> dict[int, int]:
    """pid -> threads of what a walk or a scan found. A live process's state (running or sleeping) is left out: it
    changes between two reads of the same process, and the supervisor counts threads, having left zombies out."""
    return {pid: threads for pid, (_, threads) in found.items()}


def test_the_host_is_swept_once_after_it_is_reaped(tmp_path: Path, monkeypatch) -> None:
    """Sweeping costs a process (kill(-1) as the sandbox user) and a walk; the supervisor's last clean-up does not
    repeat the sweep that followed the host's end, and repeats one that came before it."""
    options, argv = supervisor.parse(command(tmp_path, "pass", sandbox_user=False)[SUPERVISOR:])
    options.user = supervisor.SANDBOX_UID_BASE
    swept = supervisor.Supervisor(options, argv)
    killed, walks = [], []
    monkeypatch.setattr(supervisor.Supervisor, "_kill_user", staticmethod(killed.append))
    monkeypatch.setattr(supervisor, "descendants", lambda root: walks.append(root) or {})
    swept.sweep()  # the host not yet reaped (a stop from outside): the last clean-up must sweep again
    swept.status = (0, None)
    swept.sweep()
    swept.sweep()
    # The host reaped and nothing of it left: no kill(-1) as its user (no process of that user is left to fork).
    assert killed == [options.user] and len(walks) == 2


def test_after_the_host_a_process_it_left_gets_the_kill_as_its_user(tmp_path: Path, monkeypatch) -> None:
    options, argv = supervisor.parse(command(tmp_path, "pass", sandbox_user=False)[SUPERVISOR:])
    options.user = supervisor.SANDBOX_UID_BASE
    swept = supervisor.Supervisor(options, argv)
    swept.status = (0, None)  # the host reaped
    killed: list[int] = []
    left = [{2**22 + 7: ("S", 1)}, {}]  # a process it started (no such pid: the kill finds nothing), then none
    monkeypatch.setattr(supervisor.Supervisor, "_kill_user", staticmethod(killed.append))
    monkeypatch.setattr(supervisor, "descendants", lambda root: left.pop(0))
    monkeypatch.setattr(supervisor, "reap_ended", lambda: None)
    swept.sweep()
    assert killed == [options.user] and left == [] and swept.swept


def test_a_message_too_long_signalled_before_the_host_is_known_still_stops_it(tmp_path: Path, monkeypatch) -> None:
    """SIGUSR1 can come while the supervisor is still starting its host (the host writes as soon as it runs, before
    the supervisor has finished starting it): it is noted, and ``run`` stops the host for it on its first pass.

    The supervisor runs here in the test's own process, which has other children (this process's resource tracker,
    fork servers other tests started). A supervisor counts and sweeps every process below its own, so here it is
    shown only the host's tree, as a supervisor of its own would see it; a process beside the host stays alive."""
    options, argv = supervisor.parse(command(tmp_path, "pass", sandbox_user=False, direct=True)[SUPERVISOR:])
    watched = supervisor.Supervisor(options, argv)
    watched.too_long = True  # what the supervisor's SIGUSR1 handler sets, here before there is a host
    bystander = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
    host = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, process_group=0)
    below = supervisor.descendants
    monkeypatch.setattr(supervisor, "descendants", lambda root: below(host.pid) if root == os.getpid() else below(root))
    try:
        watched.child = supervisor.ForkedHost(host.pid, None, host.stderr.fileno())
        started = time.monotonic()
        watched.run()
        assert time.monotonic() - started < WAIT_SECONDS / 2
        if watched.status is None:  # its pipe ran dry first: reaped as main() reaps it after run()
            _, status, usage = os.wait4(host.pid, 0)
            watched.status = (status, usage)
        watched.sweep()  # main()'s last clean-up
        report = watched.ending()
        assert report["reason"] == supervisor.MESSAGE and report["signal"] == "SIGKILL"
        assert bystander.poll() is None
    finally:
        host.kill()
        host.stderr.close()
        bystander.kill()
        bystander.wait()
