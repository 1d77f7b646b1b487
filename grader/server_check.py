"""Check a running MCP server, through a real MCP client, against the course's pre-launch rules.

``check_server`` opens a session (or uses the one it is given), reads ``tools/list``, makes
the sample calls the caller provides, and returns a ``Report`` of ``Finding``s. ``check_url``
does the same for a Streamable HTTP server at a URL, after probing it with plain HTTP as a
client meets it. ``run_rules`` applies every rule family to one open session.

The rules live in ``grader.checker``, one module per family, each importing only those below it:

- ``findings``: ``Finding``, ``Report``, ``Sample``, and ``RULES``, each rule's citation and severity;
- ``limits``: every limit of Claude Code the rules apply, each citing its source section;
- ``connect``: starting a server from a command or a ``.mcp.json`` entry, opening a session, listing tools;
- ``tool_rules``: whitelist, annotations, names, schemas, ``_meta``, instructions;
- ``description_rules``: the description limits and the what / when / how heuristic;
- ``result_rules``: sample calls, their expected shape and size, search fragments;
- ``log_rules``: the server logs the client's protocol version and name;
- ``http_rules``: what a client meets at the server's URL (initialize, caching, cookies, rate limits);
- ``checklist``: a report as the thirteen items of *Common mistakes › Pre-launch checklist*.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters
from mcp.client.session import DEFAULT_CLIENT_INFO
from mcp.shared.exceptions import MCPError

from grader.checker.connect import (
    CLIENT_INFO,
    CLIENT_NAME,
    http_session,
    list_tools,
    start,
)
from grader.checker.description_rules import check_description
from grader.checker.findings import (
    SERVER,
    CheckInputError,
    Report,
    Sample,
    describe,
    finding,
)
from grader.checker.http_rules import probe_initialize, probe_rate_limit
from grader.checker.log_rules import check_initialize_log
from grader.checker.result_rules import check_sample
from grader.checker.tool_rules import (
    check_annotations,
    check_instructions,
    check_meta,
    check_names,
    check_schema,
    check_whitelist,
)
from servers.client import Session, stdio_params


def check_server(
    session_or_params: Any,
    *,
    server_name: str | None,
    expected_tools: Sequence[str] | None = None,
    read_only: Sequence[str] | None = None,
    samples: Iterable[Sample | Mapping[str, Any] | tuple] = (),
    plugin: str | None = None,
    stderr_path: str | os.PathLike | None = None,
    timeout: float | None = 30.0,
) -> Report:
    """Check one server and return the Report.

    ``session_or_params``: an open ``servers.client.Session`` (used, not closed); a
    ``StdioServerParameters`` (started here, stderr captured to ``stderr_path`` or a temporary
    file); a module name such as ``"support_desk"`` (started the same way); or an in-process
    server object. ``server_name`` is the name Claude Code knows the server by (``mcp__<name>__``);
    None uses the name the server reports. ``read_only`` lists the read-only tools; without it,
    tools named get_/list_/search_ are taken as read-only.
    """
    samples = [Sample.coerce(s, f"sample {i + 1}") for i, s in enumerate(samples)]
    with ExitStack() as keep:  # outlives the session: the stderr capture is read after the server exits
        with ExitStack() as stack:
            if isinstance(session_or_params, Session):
                session = session_or_params
                client_name = (session.client.client_info or DEFAULT_CLIENT_INFO).name
            else:
                params = stdio_params(session_or_params) if isinstance(session_or_params, str) else session_or_params
                if isinstance(params, StdioServerParameters):
                    if stderr_path is None:
                        stderr_path = (
                            Path(keep.enter_context(tempfile.TemporaryDirectory(prefix="check-server-"))) / "stderr.log"
                        )
                    session = start(params, stderr_path=stderr_path, timeout=timeout)
                else:
                    session = Session(params, timeout=timeout, client_info=CLIENT_INFO)
                client_name = CLIENT_NAME
                stack.callback(session.close)
            report = run_rules(session, server_name, expected_tools, read_only, samples, plugin)
            protocol_version = report.protocol_version = session.client.protocol_version
        # A server started here has exited by now, so its stderr is complete.
        report.findings.append(check_initialize_log(stderr_path, protocol_version, client_name))
    return report


def run_rules(
    session: Session,
    server_name: str | None,
    expected_tools: Sequence[str] | None,
    read_only: Sequence[str] | None,
    samples: Sequence[Sample],
    plugin: str | None,
) -> Report:
    info = session.client.server_info
    name = server_name or (info.name if info else "server")
    report = Report(name)
    try:
        tools = list_tools(session)
    except (MCPError, TimeoutError) as exc:
        report.findings.append(
            finding("tools.list", SERVER, False, f"tools/list failed ({describe(exc)}); nothing else could be checked.")
        )
        return report
    report.tools = [t["name"] for t in tools]
    by_name = {t["name"]: t for t in tools}
    report.findings.append(check_whitelist(report.tools, list(expected_tools) if expected_tools is not None else None))
    report.findings.append(check_instructions(session.client.instructions))
    if read_only is not None:
        for unknown in [t for t in read_only if t not in by_name]:
            report.findings.append(
                finding(
                    "annotations.read_only",
                    unknown,
                    None,
                    "On the read-only list, but the server does not list this tool.",
                )
            )
    for tool in tools:
        report.findings.extend(check_annotations(tool, list(read_only) if read_only is not None else None))
        report.findings.extend(check_description(tool))
        report.findings.extend(check_names(tool["name"], name, plugin))
        report.findings.extend(check_schema(tool))
        meta = check_meta(tool)
        if meta:
            report.findings.append(meta)
    for sample in samples:
        report.findings.extend(check_sample(session, sample, by_name))
    return report


def check_url(
    url: str,
    *,
    server_name: str | None,
    headers: Mapping[str, str] | None = None,
    expected_tools: Sequence[str] | None = None,
    read_only: Sequence[str] | None = None,
    samples: Iterable[Sample | Mapping[str, Any] | tuple] = (),
    plugin: str | None = None,
    burst: int | None = None,
    behind_proxy: bool = False,
    timeout: float | None = 30.0,
) -> Report:
    """Check a Streamable HTTP server at ``url``: what a client sees on the wire, then every rule through a real session.

    ``burst``: also send up to that many requests in a row and expect a 429 with Retry-After
    (last, since it leaves this client limited). ``behind_proxy``: the check's requests reach
    the server through a proxy it trusts, so clients are told apart by the headers it forwards;
    otherwise the check is a client talking straight to the server, and a forged header must
    not help it.
    """
    headers = dict(headers or {})
    samples = [Sample.coerce(s, f"sample {i + 1}") for i, s in enumerate(samples)]
    probes, works = probe_initialize(url, headers, timeout)
    report = Report(server_name or url)
    if not works:
        report.findings.append(
            finding(
                "tools.list",
                SERVER,
                False,
                "initialize did not come back as JSON-RPC, so no MCP session could be opened; nothing else was checked.",
            )
        )
    else:
        try:
            with http_session(url, headers, timeout) as session:
                report = run_rules(session, server_name, expected_tools, read_only, samples, plugin)
                report.protocol_version = session.client.protocol_version
        except CheckInputError as exc:  # e.g. a rate limit already spent by the probes
            report.findings.append(finding("tools.list", SERVER, False, f"{exc} Nothing else was checked."))
    report.findings[:0] = probes
    report.url = url
    report.findings.append(
        finding(
            "initialize.logged",
            SERVER,
            None,
            f"check-server cannot read a remote server's log: look there for this check's client name {CLIENT_NAME} and its protocol version.",
        )
    )
    if burst:
        report.findings.extend(probe_rate_limit(url, headers, burst, behind_proxy=behind_proxy, timeout=timeout))
    return report
