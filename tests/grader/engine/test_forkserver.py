"""What the fork server's warm interpreter holds, so that a host forked from it does no start-up work of its own.

A host forked from the fork server serves a real session over stdio here, with a lab's solution loaded, and an
audit hook added after ``warm()`` lists every module imported from then on: there must be none.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.stdio import StdioServerParameters

from grader.notebook import answer_code, read_notebook
from servers.client import Session

REPO = Path(__file__).resolve().parents[3]

# warm(), then the locked-down host as grading runs it, with every import from then on written to the file argv[1].
PROBE = """
import runpy, sys
from grader.engine import forkserver
forkserver.warm()
imports = open(sys.argv.pop(1), "w", encoding="utf-8")

class Imports:  # asked first for every module not yet imported, by an import statement or importlib alike
    def find_spec(self, name, path=None, target=None):
        imports.write(name + "\\n")
        imports.flush()

sys.meta_path.insert(0, Imports())
sys.argv[0] = "lockedhost"
runpy.run_module("grader.engine.lockedhost", run_name="__main__")
"""

ENV = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO)}  # the course importable, nothing else inherited


def solution_file(lab: str, folder: Path) -> Path:
    """The lab's solution answer cells in a file, as grading hands a host its submission's."""
    code = folder / "answers.py"
    code.write_text(answer_code(read_notebook(REPO / "labs" / "source" / lab / f"{lab}.ipynb")), encoding="utf-8")
    return code


CALLS = {
    "lab1_error_results": ("decide", {"result": {"isError": True, "content": [], "structuredContent": {}}}),
    "lab2_scopes_expansion": ("expand_value", {"text": "${HOME:-/tmp}/x", "env": {}}),
}


@pytest.mark.parametrize("lab", sorted(CALLS))
def test_a_host_started_from_the_warm_interpreter_imports_nothing_while_it_serves(lab: str, tmp_path: Path) -> None:
    code = solution_file(lab, tmp_path)
    imports = tmp_path / "imports.txt"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-c", PROBE, str(imports), "--lab", lab, "--code", str(code)],
        env=ENV,
        cwd=str(tmp_path),
    )
    tool, arguments = CALLS[lab]
    with Session(params) as session:
        assert tool in {spec["name"] for spec in session.tools()}
        result = session.call(tool, arguments)
    assert not result.get("isError"), result
    assert imports.read_text(encoding="utf-8").split() == ["grader.engine.lockedhost"]  # the program itself, run


def test_without_the_warm_up_the_same_host_imports_at_its_start(tmp_path: Path) -> None:
    """The probe above can fail: with the warm-up left out, the same host imports (the event loop's backend among others)."""
    lab = "lab1_error_results"
    code = solution_file(lab, tmp_path)
    imports = tmp_path / "imports.txt"
    cold = PROBE.replace("forkserver.warm()", "from servers.learner_host import host")
    subprocess.run(  # the imports the host makes on its own: started, then its input closed at once
        [sys.executable, "-P", "-c", cold, str(imports), "--lab", lab, "--code", str(code)],
        env=ENV,
        cwd=str(tmp_path),
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert "anyio._backends._asyncio" in imports.read_text(encoding="utf-8").split()


def test_the_warm_interpreter_holds_each_harness_tools_schema_and_each_results_validator() -> None:
    """Built once in the fork server, not in each host: asked again after ``warm()``, none is built anew."""
    probe = (
        "from grader.engine import forkserver\n"
        "forkserver.warm()\n"
        "from mcp_types import methods\n"
        "from servers import toolkit\n"
        "from servers.learner_host import host\n"
        "models = {spec.input_model for specs in host._hosts().values() if specs for spec in specs({})}\n"
        "schemas, validators = toolkit._built_schema.cache_info().misses, methods._adapter.cache_info().misses\n"
        "for model in models:\n"
        "    toolkit.input_schema(model)\n"
        "for result in methods.SERVER_RESULTS.values():\n"
        "    methods._adapter(result)\n"
        "print(len(models), toolkit._built_schema.cache_info().misses - schemas, methods._adapter.cache_info().misses - validators)\n"
        "from mcp.server.mcpserver.server import Settings\n"  # a learner's MCPServer's settings (labs 3 and 4)
        "print(type(Settings.__pydantic_validator__).__name__)\n"
        "from grader.engine import supervisor\n"  # each supervisor's command line
        "print(supervisor.command_line.cache_info().currsize)\n"
        "import sys\n"  # and the view it builds for its host: the C library's calls, the interpreter's paths
        "libc = supervisor._libc()\n"
        "print(supervisor._libc.cache_info().misses, supervisor.interpreter_paths.cache_info().currsize, "
        "all(name in vars(libc) for name in supervisor.LIBC_CALLS))\n"
        "supervisor.interpreter_paths(sys.executable)\n"
        "print(supervisor.interpreter_paths.cache_info().misses)\n"
    )
    out = subprocess.run(
        [sys.executable, "-P", "-c", probe],
        env=ENV,
        cwd="/",
        capture_output=True,
        text=True,
        check=True,
    )
    counts, settings, parsers, view, paths_found = out.stdout.splitlines()
    models, schemas_built, validators_built = map(int, counts.split())
    assert models >= 8  # lab 1's and lab 2's harness tools
    assert (schemas_built, validators_built) == (0, 0)
    assert settings == "SchemaValidator"  # not pydantic's stand-in, which builds the model on first use
    assert parsers == "1"  # built before any supervisor is forked
    assert view == "1 1 True" and paths_found == "1"  # found before, not again


def test_the_warm_interpreter_builds_a_learners_kind_of_server_once_and_leaves_logging_as_it_was() -> None:
    """warm() builds a server as the learners of labs 3 and 4 write one (what the SDK does the first time in a process
    is then done), but ``MCPServer()`` sets up logging when nothing has: the host's own plain logging must stay the
    one a learner's server gets (servers.learner_host.host.plain_logging)."""
    probe = (
        "import asyncio, logging\n"
        "root = logging.getLogger()\n"
        "before = (list(root.handlers), root.level)\n"
        "from grader.engine import forkserver\n"
        "forkserver.warm()\n"
        "print((list(root.handlers), root.level) == before)\n"
        "server = forkserver.learner_style_server()\n"
        "(tool,) = asyncio.run(server.list_tools())\n"
        "print(tool.name, tool.input_schema['properties']['page']['minimum'], tool.annotations.read_only_hint)\n"
        "print(len(asyncio.run(server.list_resources())), len(asyncio.run(server.list_resource_templates())), "
        "len(asyncio.run(server.list_prompts())))\n"
    )
    out = subprocess.run(
        [sys.executable, "-P", "-c", probe], env=ENV, cwd="/", capture_output=True, text=True, check=True
    )
    assert out.stdout.splitlines() == ["True", "search 1 True", "1 1 1"]


def _huge_pages_available() -> bool:
    try:
        setting = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return False
    release = tuple(int(part) for part in os.uname().release.split(".")[:2] if part.isdigit())
    return "[never]" not in setting and release >= (6, 1)


@pytest.mark.skipif(not _huge_pages_available(), reason="no huge pages, or a kernel without MADV_COLLAPSE")
def test_the_fork_servers_heap_is_backed_by_huge_pages() -> None:
    """So that forking a supervisor, and a host, copies one entry per 2 MiB of its heap rather than one per 4 KiB."""
    from grader.engine import forkserver

    server = forkserver.ForkServer()
    try:
        server._start()  # started, warmed, and ready for its first host
        rollup = Path(f"/proc/{server._process.pid}/smaps_rollup").read_text().split()
        assert int(rollup[rollup.index("AnonHugePages:") + 1]) >= 8 << 10  # kB, of a heap of some 50 MiB
    finally:
        server.close()


def test_a_learner_host_serves_a_2026_client_in_turn_and_the_grader_calls_it_in_turn(tmp_path: Path) -> None:
    """Both sides of grading's wire take turns (``servers.in_turn``): the host over a real pipe, the grader's session
    with a forked host. (That what goes over it is the same as with the SDK's loops: tests/servers/test_in_turn.py.)"""
    lab = "lab1_error_results"
    code = solution_file(lab, tmp_path)
    served = tmp_path / "served.txt"
    probe = PROBE.replace(
        "forkserver.warm()",
        "forkserver.warm()\n"
        "from servers import in_turn\n"
        "serve = in_turn.serve\n"
        "async def counted(*args):\n"
        "    spans = sum(type(step).__name__ == 'OpenTelemetryMiddleware' for step in args[0].middleware)\n"
        f"    open({str(served)!r}, 'a').write(f'in turn, {{spans}} span middleware\\n')\n"
        "    await serve(*args)\n"
        "in_turn.serve = counted",
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-c", probe, str(tmp_path / "imports.txt"), "--lab", lab, "--code", str(code)],
        env=ENV,
        cwd=str(tmp_path),
    )
    with Session(params) as session:
        assert session.call(*CALLS[lab]).get("isError") is False
    assert served.read_text(encoding="utf-8") == "in turn, 0 span middleware\n"  # host.serve: untraced

    from grader.engine.grading import Hosts, Limits
    from servers.in_turn import Caller

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "answers.py").write_text(code.read_text(encoding="utf-8"), encoding="utf-8")
    with open(scratch / "stderr.log", "w", encoding="utf-8") as errlog:
        hosts = Hosts(lab, scratch, Limits(), errlog)
        session = hosts.start()
        try:
            caller = session.client.session._dispatcher
            assert isinstance(caller, Caller)
            # The host writes its replies straight to the grader, which caps each one (the supervisor's
            # --replies-direct; test_supervisor and test_in_turn test both ends).
            assert caller._line_limit == Limits().message_bytes
            assert session.call(*CALLS[lab]).get("isError") is False
        finally:
            session.close()
            hosts.close()


def test_started_names_this_processs_fork_server_and_never_starts_one(monkeypatch) -> None:
    """What the benchmark's CPU accounting asks: a fork server this process started, or None; a parent's, copied into
    a forked child, is the parent's; asking starts nothing."""
    from types import SimpleNamespace

    from grader.engine import forkserver

    monkeypatch.setattr(forkserver, "_shared", None)
    assert forkserver.started() is None
    assert forkserver._shared is None  # asking started nothing
    ours = SimpleNamespace(owner=os.getpid())
    monkeypatch.setattr(forkserver, "_shared", ours)
    assert forkserver.started() is ours
    monkeypatch.setattr(forkserver, "_shared", SimpleNamespace(owner=os.getppid()))
    assert forkserver.started() is None
