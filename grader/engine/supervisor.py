"""Run the learner host under operating-system limits and write down how it ended.

``python -I supervisor.py --report FILE --workdir DIR [limits] -- COMMAND ...`` starts COMMAND
(the learner host) with resource limits, an environment holding only an allow-list of
variables, and DIR as its working and home folder; as root, with ``--user``, it runs COMMAND
as that unprivileged user, in a mount namespace of its own; without ``--user``, in a user and
mount namespace where every file system but DIR is read-only. It relays COMMAND's stdout (the
MCP wire) with a cap on one message, keeps a capped copy of its stderr, stops it when it starts
too many processes, and when it ends writes one JSON object to FILE: why it ended (``reason``)
and what it used. With ``--replies-direct``, COMMAND writes its stdout straight to the supervisor's own
(a socket the grader reads, which caps each message itself and sends SIGUSR1 for one too long):
nothing passes through the supervisor.

Standard library only: grading starts it by path, so it imports nothing of the course. The
fork server (``forkserver.py``) runs the same ``main`` in a forked child, with a ``runner`` that
starts the host by forking too and running its module in the warm interpreter instead of a new one;
the confinement is the same either way. See docs/grading-sandbox.md for each limit and what the
learner sees.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import resource
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

# Exit statuses the host uses to say which limit its own watch caught (grader.engine.sandbox).
EXIT_MEMORY = 121
EXIT_FILE_SIZE = 122

# Why the host ended, as written to the report.
CPU = "cpu"
MEMORY = "memory"
FILE_SIZE = "file_size"
PROCESSES = "processes"
OUTPUT = "output"
MESSAGE = "message"
CRASH = "crash"
EXIT = "exit"
STOPPED = "stopped"  # stopped from outside: the grader closed the session or gave up on a call

CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT, signal.SIGSYS}

# A range of user ids no account uses: each submission runs as one of them, so its processes
# can be counted and stopped by user id, and RLIMIT_NPROC counts nothing else.
SANDBOX_UID_BASE = 1_800_000_000
SANDBOX_UID_SPAN = 100_000_000

# Variables the host may inherit; everything else in the grader's environment stays out.
ALLOWED_ENV = ("PATH", "LANG", "LC_ALL", "PYTHONPATH")

POLL_SECONDS = 0.25  # how often the process count is taken while the host runs
DRAIN_SECONDS = 1.0  # how long to read what is left in the pipes once the host is gone
CHUNK = 65536  # bytes read from a pipe at once

MAX_FD = 1 << 20  # os.closerange's upper end: above any descriptor a process here holds

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MNT_DETACH = 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}  # pivot_root(2) has no libc wrapper
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 0x1, 0x2, 0x4, 0x8, 0x20
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_PRIVATE = 0x400, 0x800, 0x1000, 0x4000, 0x40000
MS_RELATIME, MS_STRICTATIME = 0x200000, 0x1000000
# Per-mount options a remount inside a user namespace must keep (the kernel locks them).
KEPT_MOUNT_FLAGS = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}
CAPABILITY_VERSION_3 = 0x20080522


def _mapped(map_file: str, first: int, count: int) -> bool:
    """Whether ids first..first+count-1 all exist in this user namespace."""
    try:
        lines = Path(map_file).read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        inside, _, length = (int(x) for x in line.split())
        if inside <= first and first + count <= inside + length:
            return True
    return False


def _owners() -> set[int]:
    owners = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                owners.add(os.stat(f"/proc/{name}").st_uid)
            except OSError:
                continue
    return owners


def sandbox_user() -> int | None:
    """A user id for one submission's host when running as root, else None (run as ourselves)."""
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return None
    if not (
        _mapped("/proc/self/uid_map", SANDBOX_UID_BASE, SANDBOX_UID_SPAN)
        and _mapped("/proc/self/gid_map", SANDBOX_UID_BASE, SANDBOX_UID_SPAN)
    ):
        return None
    busy = _owners()
    while True:
        uid = SANDBOX_UID_BASE + secrets.randbelow(SANDBOX_UID_SPAN)
        if uid not in busy:
            return uid


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(parent pid, state, threads) of ``pid``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()  # the command name may hold spaces and parentheses
    return int(fields[1]), fields[0].decode(), int(fields[17])


def _processes() -> dict[int, tuple[int, str, int]]:
    """pid -> (parent pid, state, threads) for every process on the machine."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (info := _stat(int(name))) is not None:
            table[int(name)] = info
    return table


def _children(pid: int) -> list[int]:
    """The children of ``pid``, as each of its threads lists those it started."""
    found = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as children:
                found.extend(map(int, children.read().split()))
        except OSError:
            continue
    return found


# Whether the kernel lists each thread's children (CONFIG_PROC_CHILDREN): walking down from the supervisor then reads
# its few descendants' entries, not every process's on the machine.
LISTS_CHILDREN = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def descendants(root: int) -> dict[int, tuple[str, int]]:
    """pid -> (state, threads) of every live process below ``root``."""
    return walked_descendants(root) if LISTS_CHILDREN else scanned_descendants(root)


def walked_descendants(root: int) -> dict[int, tuple[str, int]]:
    """``descendants``, found from ``root`` down through each process's children."""
    found, todo = {}, _children(root)
    while todo:
        pid = todo.pop()
        if pid in found or (info := _stat(pid)) is None:
            continue
        found[pid] = info[1:]
        todo.extend(_children(pid))
    return {pid: info for pid, info in found.items() if info[0] not in "ZX"}


def scanned_descendants(root: int) -> dict[int, tuple[str, int]]:
    """``descendants``, found from every process's parent on the machine."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        _, state, threads = table[pid]
        found[pid] = (state, threads)
        todo.extend(children.get(pid, []))
    return {pid: info for pid, info in found.items() if info[0] not in "ZX"}


def _tasks_of_user(uid: int) -> int:
    count = 0
    for pid, (_, state, threads) in _processes().items():
        try:
            if state not in "ZX" and os.stat(f"/proc/{pid}").st_uid == uid:
                count += threads
        except OSError:
            continue
    return count


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the other limits still hold
        pass


def die_with_parent(parent: int) -> None:
    """This process dies when the process ``parent`` (its parent) does, even by SIGKILL (Linux; elsewhere it outlives
    it until its work ends); if that parent is already gone, it ends now."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)


def closed_folders(paths: list[str]) -> dict[str, set[str]]:
    """Folders on the way to ``paths`` that other users may not enter, each with the entries needed.

    The sandbox user must reach the interpreter, its libraries and the course; a private home
    folder on the way (``/root`` is mode 0700) would stop it.
    """
    closed: dict[str, set[str]] = {}
    for path in paths:
        parts = Path(os.path.realpath(path)).parts
        for depth in range(1, len(parts)):
            folder = str(Path(*parts[:depth]))
            try:
                if os.stat(folder).st_mode & 0o001 == 0:
                    closed.setdefault(folder, set()).add(parts[depth])
                    break
            except OSError:
                break
    return closed


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def open_up(needed: list[str], hidden: list[str], shown: list[str] = ()) -> None:
    """In a private mount namespace, open the way to the ``needed`` paths and hide ``hidden``.

    Each closed folder on the way is covered by an empty folder other users may enter, and the
    needed entries are bound back into it; everything else in it stays out of sight. Each
    hidden folder is covered by an empty folder nobody but root may enter. Mounts made here are
    private to the host and its children: the grader's view does not change.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    _check(libc.unshare(CLONE_NEWNS), "unshare")
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    cover(libc, hidden, list(shown))
    for _ in range(16):  # an entry bound back can itself be closed: the next round opens it
        closed = closed_folders(needed)
        if not closed:
            return
        for folder, entries in sorted(closed.items()):
            handles = {name: os.open(os.path.join(folder, name), os.O_PATH) for name in sorted(entries)}
            _check(
                libc.mount(b"tmpfs", folder.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=0711,size=64k"),
                f"cover {folder}",
            )
            for name, handle in handles.items():
                target = os.path.join(folder, name)
                if os.path.isdir(f"/proc/self/fd/{handle}"):
                    os.mkdir(target)
                else:
                    open(target, "w").close()
                _check(
                    libc.mount(f"/proc/self/fd/{handle}".encode(), target.encode(), None, MS_BIND | MS_REC, None),
                    f"show {target}",
                )
                os.close(handle)
    raise OSError("too many closed folders on the way to the interpreter")


def reap_ended() -> None:
    """Collect every child of this process that has ended, without waiting for the others."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _mount_points() -> list[tuple[str, int]]:
    """(mount point, flags a remount must keep) of every mount this process sees."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        point = fields[4].encode().decode("unicode_escape").encode("latin-1").decode()  # \040 is a space
        flags = 0
        for option in fields[5].split(","):
            flags |= KEPT_MOUNT_FLAGS.get(option, 0)
        found.append((point, flags))
    return found


def _drop_capabilities() -> None:
    """Give up every capability (those a new user namespace gives its creator included)."""
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: twice, all empty
    _check(ctypes.CDLL(None, use_errno=True).capset(header, data), "drop capabilities")


def user_namespaces_allowed() -> bool:
    """Whether ``confine_without_root`` can work here: a child may create a user and mount namespace."""
    if not sys.platform.startswith("linux"):
        return False
    child = os.fork()
    if child == 0:
        os._exit(0 if ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) == 0 else 1)
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status) == 0


def confine_without_root(writable: list[str], hidden: list[str], shown: list[str] = ()) -> None:
    """Without a sandbox user: a user and mount namespace of the host's own, where every file system is
    read-only but ``writable``, each ``hidden`` folder is covered, and no capability is left.

    Runs in the host's process before its code. The host keeps the grader's user id, so this is what
    stops it writing the gradebook or reading the answer key; unprivileged user namespaces must be
    allowed (most Linux systems allow them; where they are not, ``start`` falls back and says so).
    """
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET), "unshare a user, mount and network namespace")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as out:
            out.write(text)
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    kept = {os.path.realpath(path) for path in writable}
    for path in sorted(kept):
        _check(libc.mount(path.encode(), path.encode(), None, MS_BIND | MS_REC, None), f"keep {path} writable")
    for point, flags in _mount_points():
        if point in kept or any(point.startswith(path.rstrip("/") + "/") for path in kept):
            continue
        # Some mounts cannot be remounted from here (one hidden under another, say): what is reachable is.
        libc.mount(None, point.encode(), None, MS_BIND | MS_REMOUNT | MS_RDONLY | flags, None)
    cover(libc, hidden, list(shown))
    os.chdir(os.getcwd())  # the working folder was entered before: enter it again, through the writable mount
    _drop_capabilities()


# What a program needs of the machine besides its interpreter, its libraries and the folders it is
# shown: the system's programs and libraries, and the few files of /etc that the dynamic linker and
# the C library read. Everything else (/home, /root, /srv, /run, /var, the rest of /etc) is absent.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf", "passwd", "group", "hosts")
DEVICES = ("null", "zero", "full", "random", "urandom")

# Each protection the sandbox gives, by the name the report and the grader use.
PROTECTIONS = {
    "user": "an unprivileged user of its own",
    "files": "a file-system view of its own (only its interpreter, libraries and the files it needs)",
    "network": "network isolation (a network namespace of its own)",
    "processes": "process isolation (other users' processes hidden: /proc mounted with hidepid)",
}


LIBC_CALLS = ("unshare", "mount", "umount2", "syscall")  # what building a view calls in the C library


@functools.cache
def _libc():
    """The C library, loaded once per process (a fork server loads it, and looks up ``LIBC_CALLS``, as it warms up)."""
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def environment_prefixes() -> frozenset[str]:
    """The Python environment's folders (its prefixes), resolved."""
    return frozenset(os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix))


@functools.cache
def interpreter_paths(program: str) -> tuple[str, ...]:
    """The interpreter ``program`` names and its libraries: the prefixes, and the import path inside them. Worked out
    once per process (a fork server works it out for its own interpreter as it warms up)."""
    prefixes = environment_prefixes()
    found = shutil.which(program) or program
    paths = [*prefixes, os.path.dirname(os.path.realpath(found)), os.path.dirname(os.path.abspath(found))]
    for entry in sys.path:
        real = os.path.realpath(entry) if entry else ""
        if real and any(real == p or real.startswith(p + os.sep) for p in prefixes):
            paths.append(real)
    return tuple(paths)


def _bind(libc, source: str, target: str, *, writable: bool = False, device: bool = False) -> None:
    """Bind ``source`` at ``target`` (made as a folder or an empty file), read-only unless ``writable``;
    device files work only where ``device`` is set."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "w").close()
    _check(libc.mount(source.encode(), target.encode(), None, MS_BIND | MS_REC, None), f"show {source}")
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | (0 if device else MS_NODEV) | (0 if writable else MS_RDONLY)
    _check(libc.mount(None, target.encode(), None, flags, None), f"remount {source}")


def within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it, by the paths as written."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def cover(libc, hidden: list[str], shown: list[str]) -> None:
    """Cover each ``hidden`` folder with an empty one nobody but root may enter.

    A hidden folder that holds ``shown`` paths (the grader's package, of which a host needs the few
    engine modules that run in it) is covered with one that lists only those paths, bound back into it
    read-only (Python's imports list the folders they look in): the rest of the folder stays out of sight. A folder that is itself
    shown, or lies in one that is, is not hidden.
    """
    folders = sorted({os.path.realpath(folder) for folder in hidden if os.path.isdir(folder)})
    kept = sorted({os.path.realpath(path) for path in shown if os.path.exists(path)})
    for folder in folders:
        if any(within(folder, other) for other in folders if other != folder):
            continue  # covered with the hidden folder that holds it
        if any(within(folder, path) for path in kept):
            continue  # shown whole
        inside = [path for path in kept if within(path, folder)]
        handles = {path: os.open(path, os.O_PATH) for path in inside}  # opened before the cover hides them
        mode = b"mode=0755,size=64k" if handles else b"mode=0,size=4k"
        try:
            _check(libc.mount(b"tmpfs", folder.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, mode), f"hide {folder}")
            for path, handle in handles.items():
                parent = os.path.dirname(path)
                os.makedirs(parent, exist_ok=True)
                while within(parent, folder) and parent != folder:  # listable, whatever the umask
                    os.chmod(parent, 0o755)
                    parent = os.path.dirname(parent)
                _bind(libc, f"/proc/self/fd/{handle}", path)
        finally:
            for handle in handles.values():
                os.close(handle)


def enter_view(view: str, shown: list[str], writable: list[str], hidden: list[str], cwd: str) -> None:
    """Make ``view`` (an empty folder) this process's root: the system, ``shown`` read-only, ``writable``.

    Runs as root in the host's process, before its code (and before it becomes the sandbox user):
    new mount, network and IPC namespaces; a tmpfs at ``view`` holding, at their own paths, the
    system's programs and libraries, a few files of /etc, ``shown`` (the interpreter, the libraries,
    the course files the program needs) read-only and ``writable`` read-write; a /proc of its own
    mounted with hidepid=2, so no other user's process can be seen; a few devices and an empty /tmp.
    Each ``hidden`` folder that the view holds is covered. Then pivot_root makes the view the root
    and the old root is detached: nothing else of the machine's files is reachable, by any path or
    descriptor. The network namespace has only a loopback device that is down: no address answers.
    """
    libc = _libc()
    umask = os.umask(0o022)  # the view's folders: root's, open to the sandbox user to pass through
    try:
        _build_view(libc, view, shown, writable, hidden)
    finally:
        os.umask(umask)
    os.chdir(cwd)


def _build_view(libc, view: str, shown: list[str], writable: list[str], hidden: list[str]) -> None:
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise OSError(f"no pivot_root system call known for {os.uname().machine}")
    _check(libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC), "unshare mount, network and IPC namespaces")
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    view = os.path.realpath(view)
    _check(libc.mount(b"tmpfs", view.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=0755,size=1m"), "make the view")

    def inside(path: str) -> str:  # the path within the view
        return view + path

    os.makedirs(inside("/tmp"))
    _check(
        libc.mount(b"tmpfs", inside("/tmp").encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=1777,size=16m"),
        "make /tmp",
    )
    bound: list[str] = []
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            os.symlink(os.readlink(path), inside(path))
        elif os.path.isdir(path):
            _bind(libc, path, inside(path))
            bound.append(path)
    for name in ETC_FILES:
        if os.path.exists(f"/etc/{name}"):
            _bind(libc, os.path.realpath(f"/etc/{name}"), inside(f"/etc/{name}"))
    for path in sorted({os.path.realpath(p) for p in shown if os.path.exists(p)}):
        if not any(path == b or path.startswith(b.rstrip("/") + "/") for b in bound):  # else it is in view already
            _bind(libc, path, inside(path))
            bound.append(path)
    for path in sorted({os.path.realpath(p) for p in writable}):
        _bind(libc, path, inside(path), writable=True)
    os.makedirs(inside("/proc"))
    _check(
        libc.mount(b"proc", inside("/proc").encode(), b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"hidepid=2"),
        "mount /proc with hidepid",
    )
    os.makedirs(inside("/dev"))
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            _bind(libc, f"/dev/{name}", inside(f"/dev/{name}"), writable=True, device=True)
    # Each hidden folder the view holds is covered but for the paths of it that are shown, bound back into it: the
    # grader's package of a checkout (where the view holds only those paths), and as much the one installed among
    # the libraries (which the view holds whole, with the interpreter's import path).
    folders = sorted({os.path.realpath(folder) for folder in hidden})
    kept = [path for path in sorted({os.path.realpath(p) for p in shown}) if any(within(path, f) for f in folders)]
    in_view = [inside(folder) for folder in folders if os.path.isdir(inside(folder))]
    cover(libc, in_view, [inside(path) for path in kept])
    os.chdir(view)
    os.mkdir(".old")
    _check(libc.syscall(number, b".", b".old"), "pivot_root")
    _check(libc.umount2(b"/.old", MNT_DETACH), "detach the old root")
    os.rmdir("/.old")
    # The view's own folders are root's and read-only from now on.
    _check(libc.mount(None, b"/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None), "make the view read-only")


class Stopped(Exception):
    """The supervisor was asked to stop (SIGTERM or SIGHUP)."""


def _stop_signal(signum, frame):
    raise Stopped


class ForkedHost:
    """A host started by fork (no exec): what the supervisor needs of a ``subprocess.Popen``."""

    class _End:
        def __init__(self, fd: int) -> None:
            self.fd = fd

        def fileno(self) -> int:
            return self.fd

    def __init__(self, pid: int, stdout: int | None, stderr: int) -> None:
        self.pid = pid
        self.stdout = None if stdout is None else self._End(stdout)
        self.stderr = self._End(stderr)
        self.returncode: int | None = None


class Supervisor:
    def __init__(self, options: argparse.Namespace, command: list[str], runner=None) -> None:
        self.options = options
        self.command = command
        # Starts the host in a forked child without exec (see forkserver.py), when it accepts the command.
        self.runner = runner if runner is not None and runner.accepts(command, self.environment()) else None
        self.reason: str | None = None
        self.detail: dict = {}
        self.tasks_peak = 0
        self.output_seen = 0
        self.line_length = 0
        self.next_count = 0.0
        self.too_long = False  # the grader read a message too long (``too_long_read``)
        self.child: subprocess.Popen | None = None
        self.status: tuple[int, object] | None = None  # (wait status, rusage) once the host is reaped
        self.swept = False  # whether nothing the host started is left (``sweep``)

    # --- starting ------------------------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        env = {key: os.environ[key] for key in ALLOWED_ENV if key in os.environ}
        workdir = str(self.options.workdir)
        env.update(HOME=workdir, TMPDIR=workdir, PYTHONDONTWRITEBYTECODE="1")
        # Fewer malloc arenas keep the address space the host maps close to what it uses.
        env["MALLOC_ARENA_MAX"] = "2"
        for pair in self.options.env:
            key, _, value = pair.partition("=")
            env[key] = value
        return env

    def needed_paths(self) -> list[str]:
        """What the host must reach: its interpreter, the libraries, the course and its folder."""
        paths = [
            shutil.which(self.command[0]) or self.command[0],
            sys.base_prefix,
            sys.prefix,
            str(self.options.workdir),
        ]
        if self.options.cwd is not None:
            paths.append(str(self.options.cwd))
        paths += [entry for entry in sys.path if entry and os.path.exists(entry)]
        paths += [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
        return paths

    def interpreter_paths(self) -> list[str]:
        """The interpreter the host runs and its libraries: the prefixes, and the import path inside them."""
        return list(interpreter_paths(self.command[0]))

    def attempts(self) -> Iterator[dict]:
        """The ways to start the host, most confined first, each with the protections it gives; each worked out only
        once the one before it failed (the fallbacks stat every folder on the host's paths)."""
        o = self.options
        user, hidden = o.user, [h for h in o.hide if os.path.isdir(h)]
        if user is not None and o.view is not None:
            yield {"user": user, "view": True, "protections": ["user", "files", "network", "processes"]}
        if o.require_isolation:
            return
        if user is not None:
            closed = bool(closed_folders(self.needed_paths()))
            yield {"user": user, "closed": closed, "hidden": hidden, "protections": ["user"]}
            if not closed and hidden:
                yield {"user": user, "protections": ["user"]}  # no mount namespaces here: the files stay visible
        # No sandbox user (the grader is not root, or the sandbox user cannot reach the interpreter):
        # a user namespace of the host's own keeps the files read-only, the hidden folders hidden, no network.
        yield {"confined": True, "hidden": hidden, "protections": ["network"]}
        yield {"protections": []}  # no user namespaces here either

    def start(self) -> None:
        """Start the host, as confined as this machine allows (with --require-isolation: fully, or not at all)."""
        ways = self.attempts()
        way = next(ways, None)
        if way is None:
            missing = (
                "a sandbox user (the grader must run as root)"
                if self.options.user is None
                else "a file-system view (--view)"
            )
            self.detail["fallbacks"] = [f"full isolation needs {missing}"]
            raise OSError(self.detail["fallbacks"][0])
        while True:
            try:
                self.spawn(
                    way.get("user"),
                    way.get("closed", False),
                    way.get("hidden", []),
                    way.get("confined", False),
                    way.get("view", False),
                )
            except (OSError, subprocess.SubprocessError) as exc:
                self.detail.setdefault("fallbacks", []).append(str(exc))
                way = next(ways, None)
                if way is None:
                    raise
                continue
            protections = way["protections"]
            self.detail.update(
                user=way.get("user"),
                hidden=way.get("hidden", []),
                readOnly=bool(way.get("confined") or way.get("view")),
                protections=protections,
                missing=[name for name in PROTECTIONS if name not in protections],
            )
            self.options.user = way.get("user")
            return

    def spawn(
        self, user: int | None, closed: bool, hidden: list[str], confined: bool = False, view: bool = False
    ) -> None:
        """Start the host as ``user``; ``view``: in a file-system view of its own (``enter_view``);
        ``closed``: folders on its way to the interpreter must be opened; ``confined``: without a user,
        confine it in a namespace of its own (``confine_without_root``)."""
        o = self.options
        needed = self.needed_paths()
        nproc = o.processes if user is not None else _tasks_of_user(os.getuid()) + o.processes
        writable = [str(o.workdir)]
        cwd = str(o.cwd or o.workdir)

        def enter_sandbox() -> None:  # runs in the child, before exec
            if user is not None:
                if view:
                    enter_view(str(o.view), [*self.interpreter_paths(), *map(str, o.show)], writable, o.hide, cwd)
                elif closed or hidden:
                    open_up(needed, hidden, list(map(str, o.show)))
                os.setgroups([])
                os.setgid(user)
                os.setuid(user)
            elif confined:
                confine_without_root(writable, hidden, list(map(str, o.show)))
            _prctl(PR_SET_NO_NEW_PRIVS, 1)  # no set-user-id program can give the host privileges back
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # set after setuid, which clears it
            for which, soft, hard in (
                (resource.RLIMIT_CPU, o.cpu_seconds, o.cpu_seconds + 1),
                (resource.RLIMIT_AS, o.memory_mb * 2**20, o.memory_mb * 2**20),
                (resource.RLIMIT_NPROC, nproc, nproc),
                (resource.RLIMIT_FSIZE, o.file_mb * 2**20, o.file_mb * 2**20),
                (resource.RLIMIT_CORE, 0, 0),
            ):
                _, old_hard = resource.getrlimit(which)
                if old_hard != resource.RLIM_INFINITY:
                    soft, hard = min(soft, old_hard), min(hard, old_hard)
                resource.setrlimit(which, (soft, hard))

        if self.runner is not None:
            self.child = self.fork_host(enter_sandbox)
            return
        self.child = subprocess.Popen(
            self.command,
            stdin=None,  # the host reads the grader's requests directly
            stdout=None if o.replies_direct else subprocess.PIPE,  # direct: it writes its replies straight to them
            stderr=subprocess.PIPE,
            env=self.environment(),
            cwd=o.cwd or o.workdir,
            umask=0o077,
            process_group=0,
            preexec_fn=enter_sandbox,  # noqa: PLW1509 - the supervisor starts no threads before this
        )
        # Only the host keeps the grader's stdin: when the grader closes it, the host sees the end.
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)

    def fork_host(self, enter_sandbox) -> ForkedHost:
        """Start the host as a fork of this process that runs ``self.runner`` instead of exec'ing a program.

        The child gets what ``subprocess.Popen`` gives an exec'd host: stdout and stderr on pipes to
        this process (stdout inherited with ``--replies-direct``), stdin inherited, no other descriptor,
        a process group of its own, the working folder, umask and environment, then ``enter_sandbox``. A
        failure before the host code runs comes back through a pipe and is raised here, so ``start`` can
        fall back as it does for Popen.
        """
        env, workdir = self.environment(), str(self.options.cwd or self.options.workdir)
        out_r, out_w = (None, None) if self.options.replies_direct else os.pipe()
        err_r, err_w = os.pipe()
        fail_r, fail_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                if out_w is not None:
                    os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                # Nothing of the supervisor (its report, pid file, the other pipes) reaches the host.
                os.closerange(3, fail_w)
                os.closerange(fail_w + 1, MAX_FD)
                os.setpgid(0, 0)
                os.chdir(workdir)
                os.umask(0o077)
                enter_sandbox()
                for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGUSR1):
                    signal.signal(number, signal.SIG_DFL)
                os.environ.clear()
                os.environ.update(env)
            except BaseException as exc:  # noqa: BLE001 - whatever stopped the set-up goes back to the supervisor
                os.write(fail_w, f"{type(exc).__name__}: {exc}".encode(errors="replace")[:4000])
                os._exit(127)
            os.close(fail_w)
            self.runner.run(self.command)  # never returns
            os._exit(1)
        for fd in (out_w, err_w, fail_w):
            if fd is not None:
                os.close(fd)
        with os.fdopen(fail_r, "rb") as failed:
            failure = failed.read()
        if failure:
            os.waitpid(pid, 0)
            for fd in (out_r, err_r):
                if fd is not None:
                    os.close(fd)
            raise OSError(failure.decode(errors="replace"))
        return ForkedHost(pid, out_r, err_r)

    # --- running -------------------------------------------------------------------------------

    def stop(self, reason: str, **detail) -> None:
        """Record why the host is being stopped (the first reason wins) and stop it."""
        if self.reason is None:
            self.reason = reason
            self.detail.update(detail)
        self.kill_host()

    def too_long_read(self, signum=None, frame=None) -> None:
        """SIGUSR1, with --replies-direct: the grader read a message from the host longer than --message-bytes. The
        host is stopped for it at once, or, while it is still being started, by ``run`` on its first pass."""
        self.too_long = True
        if self.child is not None:
            self.stop(MESSAGE)

    def kill_host(self) -> None:
        if self.child is not None and self.status is None:
            try:
                os.killpg(self.child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def reap_host(self) -> bool:
        if self.status is not None:
            return True
        pid, status, usage = os.wait4(self.child.pid, os.WNOHANG)
        if pid == 0:
            return False
        self.status = (status, usage)
        self.child.returncode = os.waitstatus_to_exitcode(status)
        return True

    def count_tasks(self) -> None:
        if time.monotonic() < self.next_count:
            return
        self.next_count = time.monotonic() + POLL_SECONDS
        tasks = sum(threads for _, threads in descendants(os.getpid()).values())
        self.tasks_peak = max(self.tasks_peak, tasks)
        if tasks >= self.options.processes:
            self.stop(PROCESSES)

    def relay(self, data: bytes) -> None:
        """Pass the host's stdout on to the grader, stopping the host when one message is too long."""
        if self.reason is not None:
            return  # the host is being stopped: the rest of a cut message is of no use
        lines = data.split(b"\n")  # one message is one line of JSON
        lines[0] = self.line_length + len(lines[0])  # the message the last chunk left unfinished
        longest = max([lines[0], *(len(line) for line in lines[1:])])
        self.line_length = lines[0] if len(lines) == 1 else len(lines[-1])
        if longest > self.options.message_bytes:
            self.stop(MESSAGE)
            return
        view = memoryview(data)
        while view:
            try:
                written = os.write(1, view)
            except BrokenPipeError:  # the grader is gone
                self.stop(STOPPED)
                return
            view = view[written:]

    def keep_output(self, data: bytes) -> None:
        """Keep a capped copy of what the host printed; stop it when it prints too much."""
        room = self.options.output_bytes - self.output_seen
        self.output_seen += len(data)
        if room > 0:
            try:
                os.write(2, data[:room])
            except OSError:
                pass
        if self.output_seen > self.options.output_bytes:
            self.stop(OUTPUT)

    def run(self) -> None:
        selector = selectors.DefaultSelector()
        streams = {self.child.stderr.fileno(): self.keep_output}
        if self.child.stdout is not None:  # without --replies-direct: the wire passes through here
            streams[self.child.stdout.fileno()] = self.relay
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        try:
            exited = os.pidfd_open(self.child.pid)
            selector.register(exited, selectors.EVENT_READ)
        except (AttributeError, OSError):  # no pidfd: the poll below notices the end
            exited = None
        drain_until = None
        while streams:
            if self.too_long and self.reason is None:  # signalled before the host was known
                self.stop(MESSAGE)
            timeout = POLL_SECONDS if drain_until is None else max(0.0, drain_until - time.monotonic())
            for key, _ in selector.select(timeout):
                if key.fd == exited:
                    selector.unregister(exited)
                    exited = None
                    continue
                data = os.read(key.fd, CHUNK)
                if data and key.fd in streams:
                    streams[key.fd](data)
                elif not data:
                    selector.unregister(key.fd)
                    del streams[key.fd]
            if drain_until is None:
                # With a pidfd, the host can have ended only once it fired (then it is unregistered).
                if exited is None and self.reap_host():
                    # The host is gone; whatever it started goes too, then the pipes run dry.
                    self.sweep()
                    drain_until = time.monotonic() + DRAIN_SECONDS
                else:
                    self.count_tasks()
            elif time.monotonic() >= drain_until:
                break

    # --- ending --------------------------------------------------------------------------------

    def sweep(self) -> None:
        """Stop every process the host left behind, then reap them: once, after the host is reaped.

        With a user of its own, kill(-1) as that user reaches all its processes at once, one being forked
        meanwhile included; without one, each pass kills what it finds until a pass finds none. Once the host is
        reaped and nothing it started is left (every process it started is this process's descendant: orphans come
        here, as to their subreaper), no process of its user is left to start another, and the kill(-1), which costs
        a forked process, is not needed."""
        if self.swept:
            return
        self.kill_host()
        left = descendants(os.getpid()) if self.status is not None else None
        if self.options.user is not None and (left is None or left):
            self._kill_user(self.options.user)
            left = None
        for _ in range(100):
            if left is None:
                left = descendants(os.getpid())
            if not left:
                self.swept = self.status is not None
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            reap_ended()
            left = None
        reap_ended()

    @staticmethod
    def _kill_user(uid: int) -> None:
        """kill(-1) as the sandbox user: every process of that user, at once, fork bombs included."""
        helper = os.fork()
        if helper == 0:
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGSTOP)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(helper, 0)

    def ending(self) -> dict:
        """Why the host ended and what it used, for the report."""
        report = {"reason": self.reason, **self.detail, "tasksPeak": self.tasks_peak, "outputBytes": self.output_seen}
        if self.status is None:
            return report
        status, usage = self.status
        cpu = usage.ru_utime + usage.ru_stime
        report.update(cpuSeconds=round(cpu, 2), maxRssMb=round(usage.ru_maxrss / 1024, 1))
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            try:
                report["signal"] = signal.Signals(number).name
            except ValueError:
                report["signal"] = str(number)
            if report["reason"] is None:
                if number == signal.SIGXCPU or (number == signal.SIGKILL and cpu >= self.options.cpu_seconds):
                    report["reason"] = CPU
                elif number == signal.SIGXFSZ:
                    report["reason"] = FILE_SIZE
                elif number in CRASH_SIGNALS:
                    report["reason"] = CRASH
                else:
                    report["reason"] = STOPPED
        else:
            code = os.WEXITSTATUS(status)
            report["exit"] = code
            if report["reason"] is None:
                report["reason"] = {EXIT_MEMORY: MEMORY, EXIT_FILE_SIZE: FILE_SIZE}.get(code, EXIT)
        return report

    def write_report(self) -> None:
        path = Path(self.options.report)
        partial = path.with_name(path.name + ".partial")
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as out:
            out.write(json.dumps(self.ending()))
        partial.replace(path)  # the grader never reads half a report


@functools.cache
def command_line() -> argparse.ArgumentParser:
    """The supervisor's command line, built once per process (a fork server builds it as it warms up, for every
    supervisor it forks)."""
    parser = argparse.ArgumentParser(prog="supervisor.py", description=__doc__.splitlines()[0])
    parser.add_argument("--report", required=True, type=Path, help="Where to write how the host ended (JSON).")
    parser.add_argument(
        "--workdir", required=True, type=Path, help="The host's home folder, and its working folder unless --cwd."
    )
    parser.add_argument("--cwd", type=Path, default=None, help="The host's working folder, when not its home folder.")
    parser.add_argument("--user", type=int, default=None, help="Run the host as this user id (root only).")
    parser.add_argument("--cpu-seconds", type=int, required=True, help="CPU time of the host process.")
    parser.add_argument("--memory-mb", type=int, required=True, help="Address space of the host process.")
    parser.add_argument("--processes", type=int, required=True, help="Processes and threads the host may run.")
    parser.add_argument("--file-mb", type=int, required=True, help="Largest file the host may write.")
    parser.add_argument("--output-bytes", type=int, required=True, help="What the host may print on stderr.")
    parser.add_argument("--message-bytes", type=int, required=True, help="Longest message the host may send.")
    parser.add_argument(
        "--replies-direct",
        action="store_true",
        help="The host writes to this process's stdout itself (a socket whose reader caps each message and sends "
        "SIGUSR1 for one longer than --message-bytes); nothing is relayed.",
    )
    parser.add_argument(
        "--hide", action="append", default=[], metavar="FOLDER", help="A folder the host must not see (as root)."
    )
    parser.add_argument(
        "--view", type=Path, default=None, help="An empty folder to build the host's own file-system view in (as root)."
    )
    parser.add_argument(
        "--show",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="A file or folder the view shows (read-only).",
    )
    parser.add_argument(
        "--require-isolation",
        action="store_true",
        help="Start the host only with every protection (own user, file-system view, no network, hidden processes); never fall back.",
    )
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="A variable for the host.")
    parser.add_argument(
        "--pid-file",
        type=Path,
        default=None,
        help="Where to write this process's id, so the grader can stop it at once.",
    )
    return parser


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = command_line()
    if "--" not in argv:
        parser.error("give the host's command after --")
    split = argv.index("--")
    options = parser.parse_args(argv[:split])
    command = argv[split + 1 :]
    if not command:
        parser.error("give the host's command after --")
    return options, command


def main(argv: list[str] | None = None, runner=None) -> int:
    """Supervise one host; ``runner`` (the fork server's) starts it without exec when it accepts the command."""
    options, command = parse(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _stop_signal)
    signal.signal(signal.SIGHUP, _stop_signal)
    if options.pid_file is not None:
        options.pid_file.write_text(str(os.getpid()), encoding="utf-8")
    # Processes the host orphans are re-parented here, so they can be counted and stopped.
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    # When the grader dies, even by SIGKILL, the host is stopped rather than left waiting.
    grader = os.getppid()
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    supervisor = Supervisor(options, command, runner)
    signal.signal(signal.SIGUSR1, supervisor.too_long_read)
    try:
        try:
            if os.getppid() != grader:  # the grader died before the line above took effect
                raise Stopped
            supervisor.start()
            supervisor.run()
        except Stopped:
            if supervisor.status is None:  # the host still ran: stopping it is the grader's doing
                supervisor.stop(STOPPED)
        finally:
            # A second SIGTERM must not cut the clean-up short.
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            signal.signal(signal.SIGUSR1, signal.SIG_IGN)
            if supervisor.child is not None:
                supervisor.kill_host()
                if supervisor.status is None:
                    _, status, usage = os.wait4(supervisor.child.pid, 0)
                    supervisor.status = (status, usage)
                    supervisor.child.returncode = os.waitstatus_to_exitcode(status)
                supervisor.sweep()
    finally:
        supervisor.write_report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
